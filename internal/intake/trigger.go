package intake

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"gopkg.in/yaml.v3"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/search"
)

// ReadyFile is the optional content of searches/<tenant>/<id>/READY: how to
// run the search. An empty marker means the protocol's defaults. The tenant
// is the folder's; a tenant key, if present, must name the same one.
type ReadyFile struct {
	Tenant      string
	Concurrency int
	Thresholds  map[string]float64
	Review      *search.ReviewOptions
}

// TriggerResult lists what an S3 notification started.
type TriggerResult struct {
	Started []Started `json:"started"`
	Ignored []string  `json:"ignored"`
	// Rejected are READY markers of searches that cannot start, each with
	// one sentence saying why.
	Rejected []string `json:"rejected"`
}

// readyKeys are the keys a READY marker may hold.
var readyKeys = []string{"tenant", "concurrency", "thresholds", "review"}

// parseReady reads a READY marker. Its problems are sentences for the
// person who uploaded it, never a decoder's dump.
func parseReady(b []byte) (ReadyFile, []string) {
	var r ReadyFile
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return r, []string{"READY is not valid YAML (" + strings.TrimPrefix(err.Error(), "yaml: ") + ")"}
	}
	if len(doc.Content) == 0 {
		return r, nil // an empty marker
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return r, []string{"READY must be empty or YAML with the keys " + strings.Join(readyKeys, ", ")}
	}
	var problems []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, m.Content[i+1]
		switch k {
		case "tenant":
			if v.Kind != yaml.ScalarNode || v.Decode(&r.Tenant) != nil {
				problems = append(problems, "READY: tenant must be a name")
			}
		case "concurrency":
			// Read as a number first: yaml.v3 would cut 2.5 to 2.
			var f float64
			if v.Kind != yaml.ScalarNode || v.Decode(&f) != nil || f != math.Trunc(f) || math.IsInf(f, 0) {
				problems = append(problems, fmt.Sprintf("READY: concurrency must be a whole number from 1 to %d", MaxConcurrency))
				continue
			}
			r.Concurrency = int(f)
		case "thresholds":
			if v.Kind != yaml.MappingNode || v.Decode(&r.Thresholds) != nil {
				problems = append(problems, "READY: thresholds must map gate names (gem1, gem2, gem3, gem4, max_qa_retries) to numbers")
			}
		case "review":
			var ro struct {
				Wait           bool  `yaml:"wait"`
				TimeoutSeconds int64 `yaml:"timeout_seconds"`
			}
			if v.Kind != yaml.MappingNode || v.Decode(&ro) != nil {
				problems = append(problems, "READY: review must be a mapping with wait (true/false) and, optionally, timeout_seconds")
				continue
			}
			r.Review = &search.ReviewOptions{Wait: ro.Wait, TimeoutSeconds: ro.TimeoutSeconds}
		default:
			problems = append(problems, fmt.Sprintf("READY: unknown key %q (allowed: %s)", k, strings.Join(readyKeys, ", ")))
		}
	}
	return r, problems
}

// readyKey splits searches/<tenant>/<id>/READY.
func readyKey(key string) (tenant, searchID string, ok bool) {
	parts := strings.Split(key, "/")
	if len(parts) != 4 || parts[0] != search.SearchesPrefix || parts[3] != ReadyMarker {
		return "", "", false
	}
	return parts[1], parts[2], true
}

// outcome is what one S3 record of a notification came to.
type outcome struct {
	started  *Started
	ignored  string
	rejected string // one sentence per problem, for the uploader
	// retry: receiving the record again may succeed — a dependency failed
	// (err), or only documents are missing (READY may have overtaken
	// them: S3 notifications are not ordered with other uploads), or the
	// key fits no layout (a person must look at it: it belongs in the
	// dead-letter queue, not in a log line).
	retry bool
	err   error
}

// handleRecord starts the evaluation a READY marker asks for.
func (s *Service) handleRecord(ctx context.Context, r events.S3EventRecord) outcome {
	key, err := url.QueryUnescape(r.S3.Object.Key) // S3 event keys are URL-encoded
	if err != nil {
		return outcome{rejected: r.S3.Object.Key + ": the key is not URL-encoded as S3 sends it", retry: true}
	}
	if !strings.HasPrefix(r.EventName, "ObjectCreated:") || !strings.HasSuffix(key, "/"+ReadyMarker) {
		return outcome{ignored: key}
	}
	reject := func(retry bool, problems ...string) outcome {
		return outcome{rejected: key + ": " + strings.Join(problems, "; "), retry: retry}
	}
	tenant, searchID, ok := readyKey(key)
	if !ok {
		return reject(true, "a READY marker belongs at searches/<tenant>/<search_id>/READY")
	}
	if !veredicto.ValidID(tenant) {
		return reject(true, fmt.Sprintf("the tenant folder %q must be 1–64 letters, digits, '.', '_' or '-'", tenant))
	}
	b, err := s.Inputs.Get(ctx, key)
	if errors.As(err, new(*veredicto.NotFoundError)) {
		return reject(false, "the READY marker was deleted before it could be read")
	}
	if bad := new(veredicto.InvalidInputError); errors.As(err, &bad) {
		// A link or special file, never followed: named, not retried.
		if bad.File == key {
			return reject(false, "READY "+bad.Problem)
		}
		return reject(false, err.Error())
	}
	if err != nil {
		return outcome{err: fmt.Errorf("read %s: %w", key, err), retry: true}
	}
	ready, problems := parseReady(b)
	if ready.Tenant != "" && ready.Tenant != tenant {
		problems = append(problems, fmt.Sprintf("READY names tenant %q but was uploaded under tenant %q; the folder decides, remove the tenant key", ready.Tenant, tenant))
	}
	if len(problems) > 0 {
		return reject(false, problems...)
	}
	st, err := s.Start(ctx, tenant, "s3", StartRequest{SearchID: searchID, Concurrency: ready.Concurrency, Thresholds: ready.Thresholds, Review: ready.Review,
		uploaded: r.EventTime})
	var bad *RequestError
	switch {
	case errors.As(err, &bad):
		return reject(bad.MissingOnly, bad.Problems...)
	case err != nil:
		return outcome{err: fmt.Errorf("start %s/%s: %w", tenant, searchID, err), retry: true}
	}
	return outcome{started: &st}
}

// HandleS3 starts one evaluation per READY marker in the notification; the
// tenant is the folder the marker was uploaded to. Other keys are ignored.
// A duplicated delivery finds the execution name taken and starts nothing
// new; a READY written after the search's latest run started (a new
// upload: its eventTime is later) runs the search again once that run has
// ended, with the new READY's options, and is refused while it runs. Uploads that cannot start are reported, not failed; only a failed
// dependency fails the call. (Behind the queue, HandleSQS decides which
// records are received again.)
func (s *Service) HandleS3(ctx context.Context, ev events.S3Event) (TriggerResult, error) {
	res := TriggerResult{Started: []Started{}, Ignored: []string{}, Rejected: []string{}}
	var errs []error
	for _, r := range ev.Records {
		o := s.handleRecord(ctx, r)
		switch {
		case o.err != nil:
			errs = append(errs, o.err)
		case o.started != nil:
			res.Started = append(res.Started, *o.started)
		case o.rejected != "":
			s.logger().WarnContext(ctx, "search not started", "reason", o.rejected)
			res.Rejected = append(res.Rejected, o.rejected)
		default:
			res.Ignored = append(res.Ignored, o.ignored)
		}
	}
	return res, errors.Join(errs...)
}

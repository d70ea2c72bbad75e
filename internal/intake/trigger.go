package intake

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"gopkg.in/yaml.v3"

	"github.com/veredicto/veredicto"
)

// ReadyFile is the optional content of searches/<id>/READY: who owns the
// search and how to run it. An empty marker means the default tenant and
// the protocol's defaults.
type ReadyFile struct {
	Tenant      string         `yaml:"tenant"`
	Concurrency int            `yaml:"concurrency"`
	Thresholds  map[string]int `yaml:"thresholds"`
}

// TriggerResult lists what an S3 notification started.
type TriggerResult struct {
	Started  []Started `json:"started"`
	Ignored  []string  `json:"ignored"`
	Rejected []string  `json:"rejected"` // READY markers of searches that cannot start, with why
}

// HandleS3 starts one evaluation per READY marker in the notification.
// Other keys are ignored. A duplicated delivery finds the execution name
// taken and starts nothing new.
func (s *Service) HandleS3(ctx context.Context, ev events.S3Event) (TriggerResult, error) {
	res := TriggerResult{Started: []Started{}, Ignored: []string{}, Rejected: []string{}}
	var errs []error
	for _, r := range ev.Records {
		key, err := url.QueryUnescape(r.S3.Object.Key) // S3 event keys are URL-encoded
		if err != nil {
			errs = append(errs, fmt.Errorf("object key %q: %w", r.S3.Object.Key, err))
			continue
		}
		parts := strings.Split(key, "/")
		if !strings.HasPrefix(r.EventName, "ObjectCreated:") || len(parts) != 3 || parts[0] != SearchesPrefix || parts[2] != ReadyMarker {
			res.Ignored = append(res.Ignored, key)
			continue
		}
		var ready ReadyFile
		b, err := s.Inputs.Get(ctx, key)
		if err != nil {
			errs = append(errs, fmt.Errorf("read %s: %w", key, err))
			continue
		}
		dec := yaml.NewDecoder(strings.NewReader(string(b)))
		dec.KnownFields(true)
		if err := dec.Decode(&ready); err != nil && err.Error() != "EOF" {
			res.Rejected = append(res.Rejected, key+": READY must be empty or YAML with tenant, concurrency, thresholds: "+err.Error())
			continue
		}
		tenant := ready.Tenant
		if tenant == "" {
			tenant = DefaultTenant
		}
		st, err := s.Start(ctx, tenant, "s3", StartRequest{SearchID: parts[1], Concurrency: ready.Concurrency, Thresholds: ready.Thresholds})
		var bad *InvalidRequestError
		var taken *veredicto.ConflictError
		switch {
		case errors.As(err, &bad) || errors.As(err, &taken):
			// The upload itself is wrong (a required document missing, a
			// bad id, another tenant's id): retrying the event cannot help,
			// so it is reported, not failed.
			s.logger().WarnContext(ctx, "search not started", "key", key, "reason", err.Error())
			res.Rejected = append(res.Rejected, key+": "+err.Error())
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("start %s: %w", parts[1], err))
			continue
		}
		res.Started = append(res.Started, st)
	}
	return res, errors.Join(errs...)
}

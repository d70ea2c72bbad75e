package asl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// A Distributed Map's ResultWriter, exporting: the children's records are
// written under Prefix/<map run id>/ as Step Functions writes them, one
// file per status (SUCCEEDED_0.json, FAILED_0.json — failed, timed-out and
// aborted children — and PENDING_0.json, the inputs never started), and
// manifest.json lists them; the Map's result names the manifest.

// record is a child's entry in the result files (and, for a child that did
// not succeed, in the Map's result): its execution, as DescribeExecution
// reports it, with Step Functions' capitalised member names.
func (c ChildResult) record() map[string]any {
	rec := map[string]any{
		"ExecutionArn":    c.ExecutionARN,
		"Name":            c.Name,
		"StateMachineArn": c.StateMachineARN,
		"Status":          c.Status,
		"StartDate":       formatTime(c.Start),
		"StopDate":        formatTime(c.Stop),
		"RedriveCount":    int64(c.RedriveCount),
	}
	if c.Input != nil {
		rec["Input"] = string(c.Input)
		rec["InputDetails"] = map[string]any{"Included": true}
	}
	if c.Status == StatusSucceeded {
		rec["Output"] = string(c.Output)
		rec["OutputDetails"] = map[string]any{"Included": true}
	} else {
		rec["Error"], rec["Cause"] = c.Error, c.Cause
	}
	switch {
	case c.Redrivable && c.Status != StatusSucceeded:
		rec["RedriveStatus"] = "REDRIVABLE_BY_MAP_RUN"
	default:
		rec["RedriveStatus"] = "NOT_REDRIVABLE"
		rec["RedriveStatusReason"] = "Execution is " + c.Status + " and cannot be redriven"
	}
	return rec
}

// resultFile is one result file of the manifest.
type resultFile struct {
	Key  string `json:"Key"`
	Size int    `json:"Size"`
}

// writeResults writes the result files and the manifest and returns the
// manifest's key. A bucket that refuses them is States.ResultWriterFailed.
func (m *mapRunState) writeResults(ctx context.Context, w *resultWriter) (string, error) {
	b := m.r.x.buckets
	if b == nil {
		return "", newError(ErrResultWriterFailed, "%v", errNoBuckets)
	}
	arn := m.run.ARN()
	id := arn[strings.LastIndex(arn, ":")+1:]
	dir := strings.TrimSuffix(m.cfg.writer.prefix, "/")
	if dir != "" {
		dir += "/"
	}
	dir += id + "/"
	ext := ".json"
	if w.outputType == "JSONL" {
		ext = ".jsonl"
	}
	groups := map[string][]any{}
	for _, rec := range m.results {
		status := "FAILED"
		if rec.res.Status == StatusSucceeded {
			status = "SUCCEEDED"
		}
		vs, err := resultValues(rec.res, w.transformation)
		if err != nil {
			return "", err
		}
		groups[status] = append(groups[status], vs...)
	}
	for _, in := range m.pending {
		groups["PENDING"] = append(groups["PENDING"], map[string]any{"Input": string(in), "InputDetails": map[string]any{"Included": true}, "Status": "PENDING"})
	}
	files := map[string][]resultFile{"SUCCEEDED": {}, "FAILED": {}, "PENDING": {}}
	written := int64(0)
	for _, status := range []string{"SUCCEEDED", "FAILED", "PENDING"} {
		list := groups[status]
		if len(list) == 0 {
			continue
		}
		body, err := encodeResults(list, w.outputType)
		if err != nil {
			return "", newError(ErrResultWriterFailed, "%v", err)
		}
		key := dir + status + "_0" + ext
		if err := b.Put(ctx, m.cfg.writer.bucket, key, body); err != nil {
			return "", newError(ErrResultWriterFailed, "write %s: %v", objectURI(m.cfg.writer.bucket, key), err)
		}
		files[status] = append(files[status], resultFile{Key: key, Size: len(body)})
		if status != "PENDING" {
			written += int64(len(list))
		}
	}
	manifest := map[string]any{"DestinationBucket": m.cfg.writer.bucket, "MapRunArn": arn, "ResultFiles": files}
	body, err := json.Marshal(manifest)
	if err != nil {
		return "", newError(ErrResultWriterFailed, "%v", err)
	}
	key := dir + "manifest.json"
	if err := b.Put(ctx, m.cfg.writer.bucket, key, body); err != nil {
		return "", newError(ErrResultWriterFailed, "write %s: %v", objectURI(m.cfg.writer.bucket, key), err)
	}
	m.counts.Items.ResultsWritten = m.counts.Items.Succeeded + m.counts.Items.Failed + m.counts.Items.TimedOut + m.counts.Items.Aborted
	m.counts.Executions.ResultsWritten = written
	return key, nil
}

// encodeResults writes records as a JSON array or as JSON Lines.
func encodeResults(list []any, outputType string) ([]byte, error) {
	if outputType != "JSONL" {
		return marshalJSON(list)
	}
	var buf bytes.Buffer
	for _, v := range list {
		b, err := marshalJSON(v)
		if err != nil {
			return nil, fmt.Errorf("encode a result: %w", err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

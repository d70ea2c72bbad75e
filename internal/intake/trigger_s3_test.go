package intake_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	s3blob "github.com/veredicto/veredicto/internal/blob/s3"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/searchtest"
	"github.com/veredicto/veredicto/internal/starter"
	"github.com/veredicto/veredicto/internal/store/file"
)

// recordingStarter keeps the input of every execution it is asked to start.
type recordingStarter struct {
	mu     sync.Mutex
	inputs map[string][]byte
}

func (r *recordingStarter) Start(_ context.Context, name string, input []byte) (starter.Execution, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, seen := r.inputs[name]
	if !seen {
		r.inputs[name] = input
	}
	return starter.Execution{Name: name, Started: !seen}, nil
}

func (r *recordingStarter) Describe(_ context.Context, name string) (starter.Status, error) {
	return starter.Status{Name: name, Status: "RUNNING"}, nil
}

// TestTriggerOnS3 runs the trigger against an S3 peer (gofakes3): the
// URL-encoded key of the notification is decoded, the tenant is the
// upload's folder, and the execution input scopes every key by it.
func TestTriggerOnS3(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server()) // binds 127.0.0.1
	t.Cleanup(srv.Close)
	client := awss3.New(awss3.Options{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
		BaseEndpoint: aws.String(srv.URL), UsePathStyle: true})
	if _, err := client.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String("inputs")}); err != nil {
		t.Fatal(err)
	}
	inputs := s3blob.New(client, "inputs", "")
	searchtest.Upload(t, inputs, "../../examples/search-demo", "searches/acme/demo-cfo-andina", nil)
	if err := inputs.Put(ctx, "searches/acme/demo-cfo-andina/READY", []byte("concurrency: 2\n"), "text/plain"); err != nil {
		t.Fatal(err)
	}
	st := &recordingStarter{inputs: map[string][]byte{}}
	svc := &intake.Service{Inputs: inputs, Reports: inputs, Records: file.NewMemory(), Starter: st}

	res, err := svc.HandleS3(ctx, s3Event("searches/acme/demo%2Dcfo%2Dandina/READY", "searches/acme/gone/READY"))
	if err != nil || len(res.Started) != 1 || !res.Started[0].Started {
		t.Fatalf("trigger: %+v %v", res, err)
	}
	if len(res.Rejected) != 1 || res.Rejected[0] != "searches/acme/gone/READY: the READY marker was deleted before it could be read" {
		t.Errorf("rejected %q", res.Rejected)
	}
	var in search.StartInput
	if err := json.Unmarshal(st.inputs[starter.ExecutionName("acme", "demo-cfo-andina")], &in); err != nil {
		t.Fatalf("execution input: %v", err)
	}
	want := search.StartInput{Tenant: "acme", SearchID: "demo-cfo-andina", InputPrefix: "searches/acme/demo-cfo-andina",
		ReportPrefix: "reports/acme/demo-cfo-andina", Concurrency: 2}
	if in.Tenant != want.Tenant || in.SearchID != want.SearchID || in.InputPrefix != want.InputPrefix ||
		in.ReportPrefix != want.ReportPrefix || in.Concurrency != want.Concurrency || in.Thresholds != nil {
		t.Errorf("execution input %+v, want %+v", in, want)
	}
}

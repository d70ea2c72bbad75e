package app

import (
	"cmp"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/sdkhttp"
)

// endpointFile holds, under the data folder, the endpoint of the server
// running on that folder: the commands run on the same folder (confirm,
// chat, lambda invoke) find it there.
const endpointFile = "serve.endpoint"

// DefaultEndpoint is where "veredicto serve" listens by default.
const DefaultEndpoint = "http://127.0.0.1:8080"

// WriteEndpoint records endpoint as the server running on data.
func WriteEndpoint(data, endpoint string) error {
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(data, "."+endpointFile+".tmp")
	if err := os.WriteFile(tmp, []byte(endpoint+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(data, endpointFile))
}

// RemoveEndpoint removes the record if it is still endpoint's.
func RemoveEndpoint(data, endpoint string) {
	if got, ok := ReadEndpoint(data); ok && got == endpoint {
		os.Remove(filepath.Join(data, endpointFile))
	}
}

// ReadEndpoint is the endpoint of the server last started on data (which
// may have been killed since); ok is false when none recorded one.
func ReadEndpoint(data string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(data, endpointFile))
	if err != nil {
		return "", false
	}
	e := strings.TrimSpace(string(b))
	if !strings.HasPrefix(e, "http://") || len(e) > 200 {
		return "", false
	}
	return e, true
}

// ServiceSFN is a Step Functions client of the server running on data (at
// endpoint, or the one it recorded, or DefaultEndpoint), signing as the
// service principal name with an operator key kept under data.
func ServiceSFN(data, endpoint, name string) *sfn.Client {
	if endpoint == "" {
		endpoint, _ = ReadEndpoint(data)
	}
	return sfn.New(sfn.Options{Region: DefaultRegion, BaseEndpoint: aws.String(cmp.Or(endpoint, DefaultEndpoint)), HTTPClient: sdkhttp.New(),
		Credentials: &auth.Credentials{Keys: auth.OpenKeys(data), Spec: auth.KeySpec{Name: name, Operator: true, Service: true}}})
}

package app

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/auth"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/flags"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/flagsapi"
)

// TestPostFlagsIsRecordedAndReplays: under serve each POST /flags is an
// execution of its own, named in the Veredicto-Execution header: its
// record under DATA/reports/audit/<tenant>/<execution>/ verifies, holds
// the request's documents, and replays the stored output byte for byte.
func TestPostFlagsIsRecordedAndReplays(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	_, rep, _ := LocalLayout(data)
	h := httpapi.New(nil, flagsapi.Routes{Judge: flags.OfflineJudge{},
		Record: localFlagsRecord(&audit.Folders{Root: filepath.Join(rep, AuditPrefix)}, fileblob.NewDir(rep), nil)})
	b, err := os.ReadFile("../../events/flags-post.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("POST", "/flags", strings.NewReader(ev.Body))
	r = r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{Name: "ana", Tenant: "acme", Via: auth.ViaJWT}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	execution := w.Header().Get("Veredicto-Execution")
	if w.Code != 200 || !strings.HasPrefix(execution, "flags-") {
		t.Fatalf("%d, execution %q: %s", w.Code, execution, w.Body)
	}
	var answered flags.Flags
	json.Unmarshal(w.Body.Bytes(), &answered)
	stored, err := os.ReadFile(filepath.Join(rep, filepath.FromSlash(flagsapi.OutputKey("acme", execution))))
	if err != nil {
		t.Fatal(err)
	}
	var kept flags.Flags
	if err := json.Unmarshal(stored, &kept); err != nil || kept.FlagsID != answered.FlagsID || !kept.GeneratedAt.Equal(answered.GeneratedAt) {
		t.Errorf("the stored output %s is not the answer's %+v (%v)", stored, answered, err)
	}

	rec, err := LocateRecord(execution, data, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(rep, AuditPrefix, "acme", execution); rec.Dir != want {
		t.Errorf("record in %s, want %s", rec.Dir, want)
	}
	problems, err := audit.Verify(ctx, rec.Store(), rec.ReadFile)
	if err != nil || len(problems) > 0 {
		t.Fatalf("verify: %v %v", problems, err)
	}
	out := t.TempDir()
	res, err := Replay(ctx, rec, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || !res.Files[0].Identical || res.Files[0].Path != flagsapi.OutputKey("acme", execution) {
		t.Errorf("replay: %+v", res.Files)
	}
}

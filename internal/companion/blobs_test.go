package companion_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/blob/file/filetest"
	"github.com/veredicto/veredicto/internal/companion"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// TestIntentReadsOnlyUploadedFiles: the companion's stored JD and profile
// (companion/<tenant>/<application>/ in the local reports bucket) are read
// through file.Dir: a link (to the signing key, another tenant's file,
// anything), a linked application folder, a folder, a named pipe (without
// blocking), a socket or a device in their place is refused by name, and
// nothing it points at reaches the application.
func TestIntentReadsOnlyUploadedFiles(t *testing.T) {
	jd, err := os.ReadFile("../../examples/companion/jd.md")
	if err != nil {
		t.Fatal(err)
	}
	profile, err := os.ReadFile("../../examples/companion/profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{"jd.md", "profile.yaml"} {
		for _, h := range filetest.All() {
			t.Run(doc+"/"+h.Name, func(t *testing.T) {
				root := t.TempDir()
				prefix := companion.Prefix("acme", "app-1")
				for name, body := range map[string][]byte{"jd.md": jd, "profile.yaml": profile} {
					p := filepath.Join(root, filepath.FromSlash(prefix+name))
					os.MkdirAll(filepath.Dir(p), 0o755)
					if err := os.WriteFile(p, body, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				named := h.Plant(t, root, prefix+doc, filetest.NewSecrets(t))
				svc := &companion.Service{Store: filestore.NewMemory(), Blobs: fileblob.NewDir(root),
					Analyst: companion.Offline{Now: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }},
					Engine:  companion.NewEngine(companion.DefaultConfig()), Logger: slog.New(slog.DiscardHandler)}
				in := companion.TaskInput{StartInput: companion.StartInput{Tenant: "acme", ApplicationID: "app-1", Mode: "analysis"}}
				filetest.Promptly(t, func() { _, err = svc.Intent(context.Background(), in) })
				filetest.Refused(t, err, named, h.Problem)
			})
		}
	}
}

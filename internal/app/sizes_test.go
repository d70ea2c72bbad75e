package app_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/catalog/function"
)

// MaxBootstrapBytes bounds every Lambda bootstrap (issue 34): 9 MiB, as
// make sizes builds it for provided.al2023 on arm64.
const MaxBootstrapBytes = 9 << 20

// TestBootstrapsUnder9MiB builds each kind's bootstrap as make sizes and
// sam build do (linux/arm64, -tags lambda.norpc -trimpath -ldflags="-s
// -w") and fails when one is MaxBootstrapBytes or more. The functions of a
// kind differ only by the logical id their generated main.go passes to
// the kind's entry point (TestGeneratedFilesAreCurrent), so the function
// with the longest id stands for its kind: one go build of one main
// package per kind, about a minute on two cores with an empty build cache,
// seconds with a warm one. docs/BENCHMARKS.md ("Lambda bootstraps") says
// what each one carries and how to find what grew: go tool nm -size -sort
// size on the same build without -ldflags.
func TestBootstrapsUnder9MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds one linux/arm64 bootstrap per function kind (about a minute on two cores); make test-long runs it")
	}
	longest := map[function.Kind]function.Function{}
	var kinds []function.Kind
	for _, f := range catalog.All() {
		l, seen := longest[f.Kind]
		if !seen {
			kinds = append(kinds, f.Kind)
		}
		if len(f.LogicalID) > len(l.LogicalID) {
			longest[f.Kind] = f
		}
	}
	dir := t.TempDir()
	args := []string{"build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", dir + string(filepath.Separator)}
	for _, k := range kinds {
		args = append(args, "../../functions/"+longest[k].Folder)
	}
	build := exec.Command("go", args...)
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, k := range kinds {
		f := longest[k]
		t.Run(string(k), func(t *testing.T) {
			st, err := os.Stat(filepath.Join(dir, f.Folder))
			if err != nil {
				t.Fatal(err)
			}
			size := st.Size()
			t.Logf("%-30s %9d bytes = %.2f MiB (the kind's %d functions)", f.LogicalID, size, float64(size)/(1<<20), len(catalog.Of(k)))
			if size >= MaxBootstrapBytes {
				t.Errorf("%s (kind %s) is %d bytes, %d over the %d of 9 MiB: see docs/BENCHMARKS.md, Lambda bootstraps, for what each links and how to find what grew",
					f.LogicalID, k, size, size-MaxBootstrapBytes+1, MaxBootstrapBytes)
			}
		})
	}
}

// TestBootstrapSizeIsWhatMakeSizesBuilds: the test's build is make sizes'
// (build.mk), so the bound holds for what sam build deploys.
func TestBootstrapSizeIsWhatMakeSizesBuilds(t *testing.T) {
	b, err := os.ReadFile("../../build.mk")
	if err != nil {
		t.Fatal(err)
	}
	const want = `GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $$(GO) build -tags lambda.norpc -trimpath -ldflags="-s -w"`
	if !strings.Contains(string(b), want) {
		t.Errorf("build.mk no longer builds with %s: change TestBootstrapsUnder9MiB's build with it", want)
	}
}

package catalog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/catalog/function"
)

// root is the repository root, seen from this package's directory.
const root = "../.."

// TestGeneratedFilesAreCurrent: functions/*/main.go and build.mk are what
// go generate writes from the catalog, and no other functions/ folder has
// a main.go.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	files, err := catalog.Generated()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not current (err %v): run go generate ./internal/catalog", name, err)
		}
	}
	mains, err := filepath.Glob(filepath.Join(root, "functions", "*", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mains {
		rel := path.Join("functions", filepath.Base(filepath.Dir(m)), "main.go")
		if _, ok := files[rel]; !ok {
			t.Errorf("%s is no function of the catalog: add an entry to internal/catalog or remove the folder", rel)
		}
	}
}

// TestCatalogIsConsistent: logical ids follow the naming rule, folders and
// ids are unique, and every kind has an entry point.
func TestCatalogIsConsistent(t *testing.T) {
	ids, folders := map[string]bool{}, map[string]bool{}
	for _, f := range catalog.All() {
		if !strings.HasSuffix(f.LogicalID, "Function") || ids[f.LogicalID] {
			t.Errorf("%s: logical ids end in Function and are unique", f.LogicalID)
		}
		if f.Folder == "" || folders[f.Folder] || f.Folder != strings.ToLower(f.Folder) {
			t.Errorf("%s: folder %q must be unique and lower-case", f.LogicalID, f.Folder)
		}
		ids[f.LogicalID], folders[f.Folder] = true, true
		if pkg, fn := catalog.EntryPoint(f.Kind); pkg == "" || fn == "" {
			t.Errorf("%s: kind %q has no Lambda entry point", f.LogicalID, f.Kind)
		}
		if f.Doc == "" || len(f.Events) == 0 {
			t.Errorf("%s: needs a Doc and at least one sample event", f.LogicalID)
		}
	}
}

// TestSampleEventsDecodeIntoTheirInput: events/ holds exactly the samples
// the catalog names, and each decodes into its function's input type with
// no unknown field.
func TestSampleEventsDecodeIntoTheirInput(t *testing.T) {
	claimed := map[string]bool{}
	for _, f := range catalog.All() {
		for _, name := range f.Events {
			claimed[name] = true
			t.Run(name, func(t *testing.T) {
				b, err := os.ReadFile(filepath.Join(root, "events", name))
				if err != nil {
					t.Fatalf("%s: %v", f.LogicalID, err)
				}
				dec := json.NewDecoder(bytes.NewReader(b))
				dec.DisallowUnknownFields()
				if err := dec.Decode(reflect.New(f.In).Interface()); err != nil {
					t.Errorf("events/%s does not decode into %s's input %s: %v", name, f.LogicalID, f.In, err)
				}
			})
		}
	}
	samples, err := filepath.Glob(filepath.Join(root, "events", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		if !claimed[filepath.Base(s)] {
			t.Errorf("events/%s belongs to no function of the catalog", filepath.Base(s))
		}
	}
}

// TestStateMachinesInvokeCatalogFunctions: every Task resource of every
// definition binds to a catalog function that lists that definition, and
// every function that lists one is invoked by it.
func TestStateMachinesInvokeCatalogFunctions(t *testing.T) {
	for _, file := range definitionFiles(t) {
		t.Run(file, func(t *testing.T) {
			var used []string
			for _, task := range tasks(t, file) {
				id, ok := boundFunction(task)
				if !ok {
					t.Errorf("state %s: resource %s is not ${<LogicalId>Arn} of a function", task.name, task.resource())
					continue
				}
				used = append(used, id)
			}
			var listed []string
			for _, f := range catalog.InvokedBy(file) {
				listed = append(listed, f.LogicalID)
			}
			sort.Strings(used)
			used = slices.Compact(used)
			sort.Strings(listed)
			if !slices.Equal(used, listed) {
				t.Errorf("%s invokes %v; the catalog says %v", file, used, listed)
			}
		})
	}
}

// TestHandlerErrorsKeepTheirName: a handler error reaches both runtimes
// under the name of the typed error in its chain. Through the aws-lambda-go
// handler (what lambda.Start runs) it is an InvokeResponse_Error value, which
// the runtime reports with its own Type; through the engine it is the
// StatesError a Catch sees.
func TestHandlerErrorsKeepTheirName(t *testing.T) {
	type in struct{ N int }
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"wrapped transient", fmt.Errorf("gem1 c-001: %w", &veredicto.TransientError{Op: "openai gem1", Err: errors.New("429")}), "TransientError"},
		{"joined invalid input", errors.Join(errors.New("x"), &veredicto.InvalidInputError{File: "search.yaml", Field: "gates.gem1", Problem: "out of range"}), "InvalidInputError"},
		{"unnamed", errors.New("boom"), "errorString"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := func(context.Context, in) (struct{}, error) { return struct{}{}, tt.err }
			_, err := lambda.NewHandler(function.Named(h)).Invoke(context.Background(), []byte(`{"N":1}`))
			ir, ok := err.(messages.InvokeResponse_Error)
			if !ok || ir.Type != tt.want || ir.Message != tt.err.Error() {
				t.Errorf("lambda: got %#v, want InvokeResponse_Error{Type: %q, Message: %q}", err, tt.want, tt.err.Error())
			}
			sm, perr := asl.Parse([]byte(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"${TFunctionArn}","End":true}}}`))
			if perr != nil {
				t.Fatal(perr)
			}
			reg := asl.NewRegistry()
			reg.Register("TFunction", catalog.EngineHandler(h))
			res, rerr := asl.New(reg).Run(context.Background(), sm, []byte(`{"N":1}`), asl.StartOptions{})
			if rerr != nil {
				t.Fatal(rerr)
			}
			var cause struct {
				Message string `json:"errorMessage"`
				Type    string `json:"errorType"`
			}
			if res.Error != tt.want || json.Unmarshal([]byte(res.Cause), &cause) != nil || cause.Message != tt.err.Error() || cause.Type != tt.want {
				t.Errorf("engine: error %q cause %s; want %q with errorMessage %q", res.Error, res.Cause, tt.want, tt.err.Error())
			}
		})
	}
}

package debate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/blob/file/filetest"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestChunkTextIDsAreStable(t *testing.T) {
	text := strings.Repeat("Párrafo sobre compensación y retención del candidato.\n\n", 40)
	a := ChunkText("candidates/c-005/report.md", text)
	if len(a) < 2 {
		t.Fatalf("%d chunks, want the text split", len(a))
	}
	if a[0].ID != "candidates-c-005-report-md_001" || a[1].ID != "candidates-c-005-report-md_002" {
		t.Errorf("ids %q %q", a[0].ID, a[1].ID)
	}
	for _, c := range a {
		if n := len([]rune(c.Text)); n > ChunkChars {
			t.Errorf("chunk %s has %d characters, over %d", c.ID, n, ChunkChars)
		}
	}
	b := ChunkText("candidates/c-005/report.md", text)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("chunk %d differs between two runs", i)
		}
	}
	long := ChunkText("x.txt", strings.Repeat("palabra ", 500))
	if len(long) < 4 {
		t.Errorf("a paragraph of 4000 characters gave %d chunks", len(long))
	}
}

func TestLoadKnowledgeHygiene(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "policies/compensation.md"), "Política: el salario máximo para el cargo es 40.000 BRL.")
	writeFile(t, filepath.Join(dir, "report.md"), "El candidato c-005 tiene contradicciones en su historial.")
	writeFile(t, filepath.Join(dir, "photo.png"), "\x89PNG")
	writeFile(t, filepath.Join(dir, ".hidden.md"), "secret")
	chunks, err := LoadKnowledge(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range chunks {
		ids = append(ids, c.ID)
	}
	if strings.Join(ids, ",") != "policies-compensation-md_001,report-md_001" {
		t.Errorf("chunks %v", ids)
	}

	outside := filepath.Join(t.TempDir(), "secret.md")
	writeFile(t, outside, "fuera")
	if err := os.Symlink(outside, filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	_, err = LoadKnowledge(dir)
	var ie *veredicto.InvalidInputError
	if !errors.As(err, &ie) || ie.File != filepath.Join(dir, "link.md") || !strings.Contains(ie.Problem, "symbolic link") {
		t.Errorf("symlink: err = %v, want InvalidInputError naming link.md", err)
	}
	os.Remove(filepath.Join(dir, "link.md"))

	writeFile(t, filepath.Join(dir, "big.txt"), strings.Repeat("x", MaxKnowledgeFile+1))
	_, err = LoadKnowledge(dir)
	if !errors.As(err, &ie) || ie.File != filepath.Join(dir, "big.txt") {
		t.Errorf("oversized: err = %v, want InvalidInputError naming big.txt in its folder", err)
	}
	os.Remove(filepath.Join(dir, "big.txt"))

	// Windows-1252 is read as a search's documents are; binary is refused
	// naming the file in its folder.
	writeFile(t, filepath.Join(dir, "latin.md"), "Compensaci\xf3n pactada.")
	chunks, err = LoadKnowledge(dir)
	if err != nil || !slices.ContainsFunc(chunks, func(c Chunk) bool { return c.Text == "Compensación pactada." }) {
		t.Errorf("Windows-1252 document: %v", err)
	}
	writeFile(t, filepath.Join(dir, "bin.md"), "\x00\x01\x02")
	if _, err = LoadKnowledge(dir); !errors.As(err, &ie) || ie.File != filepath.Join(dir, "bin.md") {
		t.Errorf("binary document: err = %v, want InvalidInputError naming bin.md in its folder", err)
	}
}

// TestKnowledgeRefusesWhatIsNotAnUploadedFile: a debate's knowledge, from
// a folder (veredicto debate --knowledge) or from the tenant's prefix of
// the inputs bucket (serve), refuses a link (anywhere, even inside), a
// folder linked in, a named pipe (without blocking), a socket or a device
// by name, as an InvalidInputError the workflow does not retry, and
// chunks nothing a link points at.
func TestKnowledgeRefusesWhatIsNotAnUploadedFile(t *testing.T) {
	for _, h := range filetest.All() {
		if h.Problem == file.ProblemFolder {
			continue // a folder named notes.md holds knowledge like any folder
		}
		t.Run(h.Name, func(t *testing.T) {
			s := filetest.NewSecrets(t)
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "kb", "policy.md"), "Política de compensación.")
			named := h.Plant(t, dir, "kb/notes/notes.md", s)
			inputs := t.TempDir()
			writeFile(t, filepath.Join(inputs, "knowledge", "acme", "kb", "policy.md"), "Política de compensación.")
			bucketNamed := h.Plant(t, inputs, "knowledge/acme/kb/notes/notes.md", s)
			steps := &Steps{Knowledge: file.NewDir(inputs), Logger: quiet()}
			for _, tt := range []struct {
				where, named string
				load         func() ([]Chunk, error)
			}{
				{"folder", filepath.Join(dir, filepath.FromSlash(named)), func() ([]Chunk, error) { return LoadKnowledge(dir) }},
				{"bucket", bucketNamed, func() ([]Chunk, error) {
					return steps.loadKnowledge(t.Context(), "acme", []string{"knowledge/acme/kb/"})
				}},
			} {
				var chunks []Chunk
				var err error
				filetest.Promptly(t, func() { chunks, err = tt.load() })
				filetest.Refused(t, err, tt.named, h.Problem)
				if veredicto.ErrorName(err) != veredicto.NameInvalidInput {
					t.Errorf("%s: %v is named %s, want %s (not retried)", tt.where, err, veredicto.ErrorName(err), veredicto.NameInvalidInput)
				}
				for _, c := range chunks {
					if filetest.Leaks(c.Text) {
						t.Errorf("%s: chunked what a link points at", tt.where)
					}
				}
			}
		})
	}
}

func TestIndexSearch(t *testing.T) {
	ix := NewIndex([]Chunk{
		{ID: "a_001", Text: "El salario pedido supera la banda de compensación."},
		{ID: "b_001", Text: "La cultura del equipo valora la retención."},
		{ID: "c_001", Text: "Salario, salario y bonos: la compensación total es alta."},
	})
	got := ix.Search("¿Qué salario pide?", 5)
	if len(got) != 2 || got[0].ID != "c_001" || got[1].ID != "a_001" {
		t.Errorf("Search = %v, want c_001 then a_001", got)
	}
	if got := ix.Search("inexistente", 5); len(got) != 0 {
		t.Errorf("a query with no shared term returned %v", got)
	}
}

type blockingRetriever struct{}

func (blockingRetriever) Retrieve(ctx context.Context, _ string) ([]Chunk, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestRAGBudgetAndTimeout(t *testing.T) {
	ix := NewIndex([]Chunk{{ID: "a_001", Text: "salario"}})
	g := NewRAG(IndexRetriever{ix}, 5, time.Second)
	for i := 0; i < 5; i++ {
		if _, err := g.Query(context.Background(), "salario"); err != nil {
			t.Fatalf("query %d: %v", i+1, err)
		}
	}
	if _, err := g.Query(context.Background(), "salario"); !errors.Is(err, ErrQueryBudget) {
		t.Fatalf("6th query: err = %v, want ErrQueryBudget", err)
	}
	if s := g.Stats(); s.Total != 5 || s.Succeeded != 5 || s.Refused != 1 {
		t.Errorf("stats %+v", s)
	}
	if !g.Retrieved("a_001") || g.Retrieved("z_001") {
		t.Error("Retrieved does not track the retrieved chunks")
	}

	slow := NewRAG(blockingRetriever{}, 5, time.Millisecond)
	if _, err := slow.Query(context.Background(), "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow query: err = %v, want deadline exceeded", err)
	}
	if s := slow.Stats(); s.Total != 1 || s.TimedOut != 1 || s.Succeeded != 0 {
		t.Errorf("slow stats %+v", s)
	}
}

func TestCheckCitations(t *testing.T) {
	citable := map[string]bool{"a_001": true}
	tests := []struct {
		premises []string
		text     string
		ok       bool
	}{
		{[]string{"[RAG:a_001]"}, "según [RAG:a_001]", true},
		{nil, "", true},
		{[]string{"[RAG:b_001]"}, "", false},
		{[]string{"[RAG:a_001]"}, "y [RAG:zz_9]", false},
		{[]string{"a_001"}, "", false},
	}
	for _, tt := range tests {
		err := CheckCitations(citable, tt.premises, tt.text)
		if (err == nil) != tt.ok {
			t.Errorf("CheckCitations(%v, %q) = %v, want ok %v", tt.premises, tt.text, err, tt.ok)
		}
	}
}

// TestUniqueIDs: sources whose names write the same identifier keep all
// their chunks under distinct, stable ids; a source listed twice is kept
// once.
func TestUniqueIDs(t *testing.T) {
	long := strings.Repeat("Párrafo sobre la banda salarial y la retención.\n\n", 40)
	a := ChunkText("a_b.md", long)
	b := ChunkText("a-b.md", "Política de viajes: clase turista.")
	if b[0].ID != a[0].ID {
		t.Fatalf("the test needs colliding ids: %s, %s", a[0].ID, b[0].ID)
	}
	c := ChunkText("c.md", "Otra política.")
	got := UniqueIDs(append(append(append(append([]Chunk{}, a...), b...), c...), a...))
	if len(got) != len(a)+len(b)+len(c) {
		t.Fatalf("%d chunks, want %d: a source listed twice is kept once, none lost", len(got), len(a)+len(b)+len(c))
	}
	ids := map[string]bool{}
	for _, ch := range got {
		if ids[ch.ID] {
			t.Errorf("id %s twice", ch.ID)
		}
		ids[ch.ID] = true
	}
	for i := range a {
		if got[i] != a[i] {
			t.Errorf("the first source's chunk %d changed: %+v", i, got[i])
		}
	}
	moved := got[len(a)]
	if moved.Source != "a-b.md" || !strings.HasPrefix(moved.ID, "a-b-md-") || !strings.HasSuffix(moved.ID, "_001") || moved.Text != b[0].Text {
		t.Errorf("the colliding source's chunk: %+v", moved)
	}
	if again := UniqueIDs(append(append([]Chunk{}, a...), b...)); again[len(a)].ID != moved.ID {
		t.Errorf("re-id not stable: %s then %s", moved.ID, again[len(a)].ID)
	}
	if got[len(got)-1] != c[0] {
		t.Errorf("a source without a collision changed: %+v", got[len(got)-1])
	}
	plain := append(append([]Chunk{}, a...), c...)
	if out := UniqueIDs(plain); &out[0] != &plain[0] {
		t.Error("chunks without collisions were copied")
	}
}

func TestLoadKnowledgeKeepsCollidingNames(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a_b.md"), "La banda salarial tope es 90.")
	writeFile(t, filepath.Join(dir, "a-b.md"), "El bono de retención es 10.")
	chunks, err := LoadKnowledge(dir)
	if err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(chunks)
	for _, q := range []string{"banda salarial", "bono retención"} {
		res := ix.Search(q, 1)
		if len(res) != 1 {
			t.Fatalf("%q: no result", q)
		}
	}
	if a, b := ix.Search("banda salarial", 1)[0], ix.Search("bono retención", 1)[0]; a.ID == b.ID || a.Source == b.Source {
		t.Errorf("both documents answer as one: %+v %+v", a, b)
	}
}

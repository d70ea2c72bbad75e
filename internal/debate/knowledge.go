package debate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/blob"
	"github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/search"
)

// The knowledge base is lexical and in-process: a small BM25 index of our
// own (about a hundred lines, no dependency) rather than a full-text library
// such as bleve, whose index, analyzers and storage would add megabytes to
// every Lambda bootstrap for a corpus of a few hundred chunks that fits in
// memory. There is no external search at all.

// Knowledge-base bounds.
const (
	MaxKnowledgeFiles = 500
	MaxKnowledgeFile  = 1 << 20 // bytes read from one file
	MaxKnowledgeBytes = 8 << 20 // bytes over all files
	ChunkChars        = 900     // a chunk holds at most about this many characters
	TopK              = 4       // chunks a query returns
)

// Chunk is one retrievable piece of a knowledge document. Its ID is
// stable: the document's path made an identifier, then the chunk's
// 1-based position ("candidates-c-005-report-md_003"), so it does not
// change when other files are added.
type Chunk struct {
	ID     string `json:"chunk_id"`
	Source string `json:"source"`
	Text   string `json:"text"`
}

// knowledgeExts are the text formats read; anything else is skipped.
var knowledgeExts = map[string]bool{".md": true, ".txt": true, ".yaml": true, ".yml": true, ".json": true}

// LoadKnowledge chunks the text files under dir (recursively, sorted by
// path). Like a search folder it is read through file.Dir, so it never
// reads outside dir: a symbolic link (even one that stays inside), a
// device, a named pipe or a socket is refused by name, a file over
// MaxKnowledgeFile is refused by name without being read further, and the
// totals are bounded. Hidden files and non-text formats are skipped.
func LoadKnowledge(dir string) ([]Chunk, error) {
	docs, err := LoadDocuments(dir)
	return Chunks(docs), err
}

// Document is one knowledge document: its source (the path its chunks
// name) and its text. A debate's audit record keeps its documents, so a
// replay chunks the same knowledge.
type Document struct {
	// Key is where it was read (a blob key, a path in the folder); ""
	// for a document made in code.
	Key    string
	Source string
	Text   string
}

// Chunks chunks each document (ChunkText), in order.
func Chunks(docs []Document) []Chunk {
	var out []Chunk
	for _, d := range docs {
		out = append(out, ChunkText(d.Source, d.Text)...)
	}
	return out
}

// LoadDocuments reads the knowledge documents under dir as LoadKnowledge
// does, without chunking them.
func LoadDocuments(dir string) ([]Document, error) { return loadDocuments(dir, nil) }

// loadDocuments is LoadDocuments reading only the files keep accepts
// (slash-separated paths relative to dir; nil keeps all).
func loadDocuments(dir string, keep func(string) bool) ([]Document, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, &veredicto.InvalidInputError{File: dir, Problem: "is not a readable knowledge folder"}
	}
	inDir := func(key string) string { return filepath.Join(dir, filepath.FromSlash(key)) }
	same := func(key string) string { return key }
	docs, err := readKnowledge(context.Background(), file.NewDir(dir), "", dir, keep, inDir, same, &knowledgeBudget{})
	if errors.As(err, new(*veredicto.NotFoundError)) {
		return nil, nil // an empty folder
	}
	return docs, err
}

// knowledgeBudget counts what a debate's knowledge has read so far, over
// all its prefixes.
type knowledgeBudget struct{ files, bytes int }

// readKnowledge reads the text files r lists under prefix (only those keep
// accepts, when it is not nil), within b: at most MaxKnowledgeFiles
// documents, each of at most MaxKnowledgeFile bytes (no more is read),
// MaxKnowledgeBytes in all. where names the knowledge when it holds too
// much; name(key) names a file the store refuses (a link, a special file)
// or that is not text; source(key) is its chunks' source. Nothing under
// prefix is a *veredicto.NotFoundError; a store that fails to list or read
// a *veredicto.TransientError.
func readKnowledge(ctx context.Context, r BlobReader, prefix, where string, keep func(string) bool, name, source func(string) string, b *knowledgeBudget) ([]Document, error) {
	keys, err := r.List(ctx, prefix)
	if err != nil {
		if named := blob.Renamed(err, name); named != nil {
			return nil, named
		}
		return nil, &veredicto.TransientError{Op: "list knowledge " + where, Err: err}
	}
	if len(keys) == 0 {
		return nil, &veredicto.NotFoundError{What: "knowledge " + where}
	}
	var out []Document
	for _, k := range keys {
		if !knowledgeExts[strings.ToLower(path.Ext(k))] || keep != nil && !keep(strings.TrimPrefix(k, prefix)) {
			continue
		}
		if b.files++; b.files > MaxKnowledgeFiles {
			return nil, &veredicto.InvalidInputError{File: where, Problem: fmt.Sprintf("holds more than the %d documents a debate reads", MaxKnowledgeFiles)}
		}
		data, err := blob.GetAtMost(ctx, r, k, MaxKnowledgeFile)
		if err != nil {
			if named := blob.Renamed(err, name); named != nil {
				return nil, named // too large, a link or a special file: no retry helps
			}
			return nil, &veredicto.TransientError{Op: "get knowledge " + name(k), Err: err}
		}
		text, err := knowledgeText(name(k), data)
		if err != nil {
			return nil, err
		}
		if b.bytes += len(data); b.bytes > MaxKnowledgeBytes {
			return nil, &veredicto.InvalidInputError{File: where, Problem: fmt.Sprintf("holds more than %d bytes of documents", MaxKnowledgeBytes)}
		}
		out = append(out, Document{Key: k, Source: source(k), Text: text})
	}
	return out, nil
}

// knowledgeText is one knowledge document's text, read from a folder or
// S3: at most MaxKnowledgeFile bytes, in the encodings a search's
// documents may be in (UTF-8, UTF-16 with a byte-order mark,
// Windows-1252). Its errors name file.
func knowledgeText(file string, b []byte) (string, error) {
	if len(b) > MaxKnowledgeFile {
		return "", &veredicto.InvalidInputError{File: file, Problem: fmt.Sprintf("is larger than %d bytes", MaxKnowledgeFile)}
	}
	text, err := search.DecodeText(b)
	if err != nil {
		return "", &veredicto.InvalidInputError{File: file, Problem: err.Error()}
	}
	return text, nil
}

var nonID = regexp.MustCompile(`[^A-Za-z0-9]+`)

// ChunkText splits one document into chunks of at most about ChunkChars
// characters at paragraph breaks (a longer paragraph is cut at line or word
// breaks), with ids <source as identifier>_<NNN>.
func ChunkText(source, text string) []Chunk {
	base := strings.Trim(nonID.ReplaceAllString(source, "-"), "-")
	var pieces []string
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			pieces = append(pieces, s)
		}
		cur.Reset()
	}
	for _, para := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n") {
		para = strings.TrimSpace(para)
		if para == "" {
			continue
		}
		for _, part := range splitLong(para, ChunkChars) {
			if cur.Len() > 0 && utf8.RuneCountInString(cur.String())+utf8.RuneCountInString(part) > ChunkChars {
				flush()
			}
			if cur.Len() > 0 {
				cur.WriteString("\n\n")
			}
			cur.WriteString(part)
		}
	}
	flush()
	out := make([]Chunk, len(pieces))
	for i, p := range pieces {
		out[i] = Chunk{ID: fmt.Sprintf("%s_%03d", base, i+1), Source: source, Text: p}
	}
	return out
}

// UniqueIDs returns chunks with one id per chunk. ChunkText's ids are
// the source written as an identifier, so two sources can share them
// (a_b.md and a-b.md are both a-b-md): every chunk of a source whose ids
// an earlier source holds gets the first 8 hex digits of the source name's
// SHA-256 after its identifier (a-b-md-1f2e3d4c_001), the same on every
// load. A source listed again (overlapping S3 prefixes) is kept once. The
// slice is returned as is when nothing collides.
func UniqueIDs(chunks []Chunk) []Chunk {
	owner := map[string]string{} // chunk id → the first source that holds it
	clash := map[string]bool{}   // sources to re-id
	runs := map[string]int{}     // runs of consecutive chunks per source
	last := ""
	for i, c := range chunks {
		if i == 0 || c.Source != last {
			runs[c.Source]++
		}
		last = c.Source
		if o, held := owner[c.ID]; !held {
			owner[c.ID] = c.Source
		} else if o != c.Source {
			clash[c.Source] = true
		}
	}
	again := false
	for _, n := range runs {
		again = again || n > 1
	}
	if len(clash) == 0 && !again {
		return chunks
	}
	out := make([]Chunk, 0, len(chunks))
	done := map[string]bool{} // sources whose first run is over
	for i, c := range chunks {
		if i > 0 && c.Source != chunks[i-1].Source {
			done[chunks[i-1].Source] = true
		}
		if done[c.Source] {
			continue
		}
		if clash[c.Source] {
			base, n, _ := strings.Cut(c.ID, "_")
			sum := sha256.Sum256([]byte(c.Source))
			c.ID = base + "-" + hex.EncodeToString(sum[:4]) + "_" + n
		}
		out = append(out, c)
	}
	return out
}

func splitLong(s string, max int) []string {
	var out []string
	for utf8.RuneCountInString(s) > max {
		r := []rune(s)
		cut := max
		for i := max; i > max/2; i-- {
			if unicode.IsSpace(r[i]) {
				cut = i
				break
			}
		}
		out = append(out, strings.TrimSpace(string(r[:cut])))
		s = strings.TrimSpace(string(r[cut:]))
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// Index is an in-memory BM25 index (k1 = 1.2, b = 0.75) over chunks.
// Immutable after NewIndex; safe for concurrent use.
type Index struct {
	chunks []Chunk
	tf     []map[string]int
	lens   []int
	df     map[string]int
	avg    float64
}

// NewIndex indexes chunks, their ids made unique first (UniqueIDs).
func NewIndex(chunks []Chunk) *Index {
	chunks = UniqueIDs(chunks)
	ix := &Index{chunks: chunks, df: map[string]int{}}
	total := 0
	for _, c := range chunks {
		tf := map[string]int{}
		toks := Tokens(c.Text)
		for _, t := range toks {
			tf[t]++
		}
		for t := range tf {
			ix.df[t]++
		}
		ix.tf = append(ix.tf, tf)
		ix.lens = append(ix.lens, len(toks))
		total += len(toks)
	}
	if len(chunks) > 0 {
		ix.avg = float64(total) / float64(len(chunks))
	}
	return ix
}

// Len is the number of chunks.
func (ix *Index) Len() int { return len(ix.chunks) }

// Search returns the k best chunks for query by BM25, best first; ties by
// chunk order. Chunks that share no term with the query are not returned.
func (ix *Index) Search(query string, k int) []Chunk {
	const k1, b = 1.2, 0.75
	terms := sortedSet(Tokens(query))
	type hit struct {
		i     int
		score float64
	}
	var hits []hit
	n := float64(len(ix.chunks))
	for i, tf := range ix.tf {
		s := 0.0
		for _, t := range terms {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			df := float64(ix.df[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			s += idf * f * (k1 + 1) / (f + k1*(1-b+b*float64(ix.lens[i])/ix.avg))
		}
		if s > 0 {
			hits = append(hits, hit{i, s})
		}
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].score > hits[b].score })
	if len(hits) > k {
		hits = hits[:k]
	}
	out := make([]Chunk, len(hits))
	for i, h := range hits {
		out[i] = ix.chunks[h.i]
	}
	return out
}

// stopwords are Spanish and Portuguese function words left out of the index.
var stopwords = set(strings.Fields(`de la el los las un una unos unas y o u en con por para que del al se su sus es son
fue ser como mas más pero sin sobre entre este esta estos estas ese esa eso lo le les ya no si sí muy
da do das dos em um uma os as ao na no nas nos com por pelo pela ou que se não e é`))

// Tokens lowercases text, splits it at non-letters/digits and drops
// stopwords and one-letter tokens.
func Tokens(text string) []string {
	f := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	out := f[:0]
	for _, t := range f {
		if utf8.RuneCountInString(t) > 1 && !stopwords[t] {
			out = append(out, t)
		}
	}
	return out
}

// Retriever answers one query; Index through IndexRetriever, or a fake.
type Retriever interface {
	Retrieve(ctx context.Context, query string) ([]Chunk, error)
}

// IndexRetriever adapts an Index to Retriever (TopK chunks).
type IndexRetriever struct{ Index *Index }

// Retrieve searches the index unless ctx is already done.
func (r IndexRetriever) Retrieve(ctx context.Context, query string) ([]Chunk, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return r.Index.Search(query, TopK), nil
}

// ErrQueryBudget is a query refused because the debate used its budget.
var ErrQueryBudget = errors.New("RAG query budget exhausted")

// RAG is a debate's bounded access to the knowledge base: at most
// MaxQueries queries, each bounded by Timeout; the chunks retrieved are the
// only ones agents may cite. Safe for concurrent use.
type RAG struct {
	r          Retriever
	maxQueries int
	timeout    time.Duration

	mu        sync.Mutex
	queries   int
	succeeded int
	timedOut  int
	refused   int
	retrieved map[string]Chunk
}

// NewRAG bounds r (nil: an empty knowledge base) for one debate.
func NewRAG(r Retriever, maxQueries int, timeout time.Duration) *RAG {
	return &RAG{r: r, maxQueries: maxQueries, timeout: timeout, retrieved: map[string]Chunk{}}
}

// Query runs one query within the budget. The (maxQueries+1)th query is
// refused with ErrQueryBudget without touching the index; a query over its
// timeout is abandoned ("abortar consulta, continuar sem") and returns no
// chunks and the context error.
func (g *RAG) Query(ctx context.Context, query string) ([]Chunk, error) {
	g.mu.Lock()
	if g.queries >= g.maxQueries {
		g.refused++
		g.mu.Unlock()
		return nil, ErrQueryBudget
	}
	g.queries++
	g.mu.Unlock()
	if g.r == nil {
		g.mu.Lock()
		g.succeeded++
		g.mu.Unlock()
		return nil, nil
	}
	qctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	type res struct {
		c   []Chunk
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := g.r.Retrieve(qctx, query)
		ch <- res{c, err}
	}()
	var out res
	select {
	case out = <-ch:
	case <-qctx.Done():
		out = res{err: qctx.Err()}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if out.err != nil {
		if errors.Is(out.err, context.DeadlineExceeded) {
			g.timedOut++
		}
		return nil, fmt.Errorf("RAG query: %w", out.err)
	}
	g.succeeded++
	for _, c := range out.c {
		g.retrieved[c.ID] = c
	}
	return out.c, nil
}

// RAGStats is the log's rag_queries block, plus the refused count.
type RAGStats struct {
	Total, Succeeded, TimedOut, Refused int
}

// Stats reports the queries so far.
func (g *RAG) Stats() RAGStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return RAGStats{Total: g.queries, Succeeded: g.succeeded, TimedOut: g.timedOut, Refused: g.refused}
}

// Retrieved reports whether id was retrieved in this debate.
func (g *RAG) Retrieved(id string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.retrieved[id]
	return ok
}

var citationRE = regexp.MustCompile(`\[RAG:([^\]\s]+)\]`)

// CitedIDs returns the chunk ids cited as [RAG:<chunk_id>] in texts, in
// order, each once.
func CitedIDs(texts ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range texts {
		for _, m := range citationRE.FindAllStringSubmatch(t, -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				out = append(out, m[1])
			}
		}
	}
	return out
}

// premiseRE is the one form a premise may take.
var premiseRE = regexp.MustCompile(`^\[RAG:[^\]\s]+\]$`)

// CheckCitations rejects a citation of a chunk not in citable, and a
// premise that is not written [RAG:<chunk_id>].
func CheckCitations(citable map[string]bool, premises []string, texts ...string) error {
	for i, p := range premises {
		if !premiseRE.MatchString(strings.TrimSpace(p)) {
			return fmt.Errorf("premises[%d]: must be written [RAG:<chunk_id>]", i)
		}
	}
	for _, id := range CitedIDs(append(append([]string{}, premises...), texts...)...) {
		if !citable[id] {
			return fmt.Errorf("cites [RAG:%s], a chunk that was not retrieved for you; cite only the chunk_id values you received", id)
		}
	}
	return nil
}

// chunk returns a retrieved chunk by id.
func (g *RAG) chunk(id string) (Chunk, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.retrieved[id]
	return c, ok
}

// MaxKnowledgePrefix bounds one knowledge prefix, as S3 bounds a key.
const MaxKnowledgePrefix = 1024

// ValidateKnowledge checks a debate's knowledge prefixes before anything is
// read: each lies inside tenant's own namespace, <kind>/<tenant>/…, written
// plainly (relative, no empty, "." or ".." segment, no backslash or control
// character). A prefix that is not is refused at once, named, as an
// *veredicto.InvalidInputError on the field knowledge: the refusal reads
// only the prefix, so it says nothing of what another tenant stores.
func ValidateKnowledge(tenant string, prefixes []string) error {
	for i, p := range prefixes {
		if problem := knowledgePrefixProblem(tenant, p); problem != "" {
			return &veredicto.InvalidInputError{File: "execution input", Field: "knowledge",
				Problem: fmt.Sprintf("%q (item %d) %s: a knowledge prefix lies inside <kind>/%s/… (such as knowledge/%s/)", p, i, problem, tenant, tenant)}
		}
	}
	return nil
}

// knowledgePrefixProblem says what is wrong with prefix p of tenant, or "".
func knowledgePrefixProblem(tenant, p string) string {
	if len(p) > MaxKnowledgePrefix {
		return fmt.Sprintf("is longer than %d bytes", MaxKnowledgePrefix)
	}
	if !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool { return unicode.IsControl(r) || r == '\\' }) {
		return "holds a control character, a backslash or invalid UTF-8"
	}
	if strings.HasPrefix(p, "/") {
		return "is an absolute path"
	}
	segs := strings.Split(strings.TrimSuffix(p, "/"), "/")
	for _, s := range segs {
		switch s {
		case "":
			return "has an empty segment"
		case ".", "..":
			return fmt.Sprintf("has a %q segment", s)
		}
	}
	if !validID(segs[0]) || len(segs) < 2 || segs[1] != tenant {
		return "is not inside the tenant's namespace"
	}
	if len(segs) == 2 && !strings.HasSuffix(p, "/") {
		// A listing of "knowledge/acme" would reach "knowledge/acme-2/".
		return "does not end the tenant segment with /"
	}
	return ""
}

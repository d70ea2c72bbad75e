package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/llm/llmtest"
	"github.com/veredicto/veredicto/internal/search/searchtest"
)

// cliSearch is the 200-candidate search run through the built CLI against
// searchtest's scripted model behind the OpenAI-compatible server (in this
// process, so the child's CPU is Veredicto's alone): every candidate
// passes every gate, GEM5 + 4 calls each, 801 calls.
type cliSearch struct {
	bin, dir string
	// runs holds every run's output and data folders until the whole
	// benchmark ends: on an ext4 without a journal each new file scans the
	// inodes deleted in the last minutes, so a run's folders removed before
	// the next run would be charged to that run's CPU.
	runs  string
	plans map[string]searchtest.Plan
}

func newCLISearch(b *testing.B, candidates int) *cliSearch {
	b.Helper()
	tmp := b.TempDir()
	// BENCH_CLI_BIN runs another build (an earlier commit's, to measure
	// before and after) instead of this tree's.
	bin := os.Getenv("BENCH_CLI_BIN")
	if bin == "" {
		bin = filepath.Join(tmp, "veredicto")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
	}
	s := &cliSearch{bin: bin, dir: filepath.Join(tmp, "search"), runs: filepath.Join(tmp, "runs"), plans: map[string]searchtest.Plan{}}
	if err := os.Mkdir(s.runs, 0o755); err != nil {
		b.Fatal(err)
	}
	ids := make([]string, candidates)
	for i := range ids {
		ids[i] = fmt.Sprintf("c-%03d", i)
		s.plans[ids[i]] = searchtest.Plan{Gem1: 8, Gem2: 8, Gem3: []int{8}, Rec: []string{"SI"}, Gem4: []int{8}}
	}
	searchtest.WriteSearch(b, s.dir, ids)
	return s
}

// cliRun is one run of the CLI: its wall time, its CPU (user + sys, the
// child's rusage) and the model calls it made.
type cliRun struct {
	wall, cpu, sys time.Duration
	calls          int
	maxRSS         int64 // bytes, the child's peak resident set
	// harness is the CPU this process spent meanwhile: the scripted
	// provider decoding each request and answering it, on the same two
	// cores as the CLI (a real provider runs elsewhere).
	harness time.Duration
	// first is how long the run took to make its first model call (start
	// up, reading and checking the search); tail how long it ran after its
	// last call's answer was due (the last report, the summary, the
	// record's end, exit).
	first, tail time.Duration
	// files counts the files and folders the run left under its output
	// and data folders: each one a new inode, which on a busy ext4 is a
	// large part of the run's CPU (see docs/BENCHMARKS.md).
	files int
}

// run evaluates the search once into fresh output and data folders, kept
// until the benchmark ends; wrap, when set, prefixes the command (strace).
func (s *cliSearch) run(b *testing.B, latency time.Duration, concurrency int, wrap ...string) cliRun {
	b.Helper()
	model := searchtest.NewModel(s.plans)
	respond := model.Respond(b)
	srv := llmtest.NewServer(b, func(c llmtest.Call) llmtest.Reply {
		r := respond(c)
		r.Delay = latency
		return r
	})
	out, err := os.MkdirTemp(s.runs, "out-")
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.MkdirTemp(s.runs, "data-")
	if err != nil {
		b.Fatal(err)
	}
	args := append(wrap, s.bin, "search", "run", s.dir, "--out", out, "--data", data, "--llm", "openai", "--concurrency", strconv.Itoa(concurrency))
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=bench", "OPENAI_BASE_URL="+srv.BaseURL(), "OPENAI_MODEL=gpt-4o-mini")
	before := selfCPU()
	start := time.Now()
	output, err := cmd.CombinedOutput()
	wall := time.Since(start)
	harness := selfCPU() - before
	if err != nil {
		b.Fatalf("search run: %v\n%s", err, output)
	}
	st := cmd.ProcessState
	var rss int64
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss * 1024 // Linux reports KiB
	}
	calls := srv.Calls()
	r := cliRun{wall: wall, cpu: st.UserTime() + st.SystemTime(), sys: st.SystemTime(), calls: len(calls), harness: harness,
		files: searchtest.CountFiles(b, out, data), maxRSS: rss}
	if len(calls) > 0 {
		firstAt, lastAt := calls[0].At, calls[0].At
		for _, c := range calls {
			if c.At.Before(firstAt) {
				firstAt = c.At
			}
			if c.At.After(lastAt) {
				lastAt = c.At
			}
		}
		r.first, r.tail = firstAt.Sub(start), start.Add(wall).Sub(lastAt.Add(latency))
	}
	return r
}

// BenchmarkSearchCLI200 runs "veredicto search run" on 200 candidates at
// --concurrency 20, its audit record on (as always): with an instant
// model, the CLI's CPU per model call (cpu-ms/call, the child's user +
// sys over its calls); with 100 ms a call, its wall time against the
// ideal calls ÷ 20 × 100 ms (x-ideal).
func BenchmarkSearchCLI200(b *testing.B) {
	s := newCLISearch(b, 200)
	// Where the runs write weighs on their system CPU: say it.
	b.Logf("the runs write under %s: %s", os.TempDir(), diskOf(os.TempDir()))
	for _, latency := range []time.Duration{0, 100 * time.Millisecond} {
		b.Run(fmt.Sprintf("latency=%s", latency), func(b *testing.B) {
			var cpu, sys, wall, first, tail, harness time.Duration
			calls, files := 0, 0
			var rss int64
			for b.Loop() {
				r := s.run(b, latency, 20)
				cpu, sys, wall, calls, files = cpu+r.cpu, sys+r.sys, wall+r.wall, calls+r.calls, files+r.files
				first, tail, harness = first+r.first, tail+r.tail, harness+r.harness
				rss = max(rss, r.maxRSS)
			}
			b.ReportMetric(float64(rss)/(1<<20), "max-rss-MiB")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(calls), "cpu-ms/call")
			b.ReportMetric(float64(sys.Microseconds())/1000/float64(calls), "sys-ms/call")
			b.ReportMetric(float64(files)/float64(calls), "new-files/call")
			b.ReportMetric(float64(calls)/float64(b.N), "calls/op")
			b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "ms-to-first-call")
			b.ReportMetric(float64(harness.Microseconds())/1000/float64(calls), "harness-cpu-ms/call")
			b.ReportMetric(float64(tail.Milliseconds())/float64(b.N), "ms-after-last-call")
			if latency > 0 {
				ideal := time.Duration(float64(calls) / 20 * float64(latency))
				b.ReportMetric(float64(wall)/float64(ideal), "x-ideal")
			}
		})
	}
}

// BenchmarkSearchCLI200Syscalls counts, under strace, the files the CLI
// opens and the fsyncs it makes in the same run (its times under strace
// mean nothing). It needs strace on the PATH.
func BenchmarkSearchCLI200Syscalls(b *testing.B) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		b.Skip("strace is not installed: no syscall count")
	}
	s := newCLISearch(b, 200)
	for b.Loop() {
		counts := filepath.Join(b.TempDir(), "strace.txt")
		r := s.run(b, 0, 20, strace, "-f", "-c", "-e", "trace=open,openat,fsync,fdatasync", "-o", counts)
		n := straceCounts(b, counts)
		b.ReportMetric(float64(n["open"]+n["openat"])/float64(r.calls), "opens/call")
		b.ReportMetric(float64(n["open"]+n["openat"]), "opens/op")
		b.ReportMetric(float64(n["fsync"]+n["fdatasync"])/float64(r.calls), "fsyncs/call")
	}
}

// straceCounts reads strace -c's table: calls by syscall name.
func straceCounts(b *testing.B, path string) map[string]int {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	n := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// % time  seconds  usecs/call  calls  [errors]  syscall
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		if calls, err := strconv.Atoi(fields[3]); err == nil {
			n[fields[len(fields)-1]] = calls
		}
	}
	return n
}

// diskOf describes the file system dir is on, from /proc/self/mountinfo:
// its type and device and, for ext4, whether it keeps a journal (an ext4
// without one scans for recently deleted inodes on every new file: see
// docs/BENCHMARKS.md, "CPU per model call").
func diskOf(dir string) string {
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	var mount, fstype, source string
	for _, line := range strings.Split(string(b), "\n") {
		// id parent major:minor root mountpoint options... - fstype source options
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 2 {
			continue
		}
		if mp := f[4]; (dir == mp || strings.HasPrefix(dir, strings.TrimSuffix(mp, "/")+"/")) && len(mp) >= len(mount) {
			mount, fstype, source = mp, g[0], g[1]
		}
	}
	desc := fmt.Sprintf("%s on %s (mounted at %s)", fstype, source, mount)
	if fstype == "ext4" {
		journal, _ := filepath.Glob("/proc/fs/jbd2/" + filepath.Base(source) + "-*")
		if len(journal) == 0 {
			return desc + ", without a journal: new files cost more CPU here"
		}
		return desc + ", with a journal"
	}
	return desc
}

// selfCPU is this process's user + system CPU so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

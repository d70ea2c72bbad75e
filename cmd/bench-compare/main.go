// Command bench-compare measures the project's ASL engine against the npm
// engine aws-local-stepfunctions on the same four workloads
// (internal/asl/aslbench): a Pass chain, an inline Map, a Choice loop and
// a Task chain. Rounds are interleaved (the engine that goes first
// alternates) and the medians are printed as transitions per second with
// the ratio; both engines' outputs must be equal or the command fails.
// Beside them it prints the Go engine's collections per run, the CPU time
// the hypervisor stole during each engine's runs (from /proc/stat), and a
// control loop that only allocates, measured with each GOMAXPROCS value:
// what the machine makes a second CPU cost, engine aside.
//
// Run it with `make bench-compare`; the table it prints is the one recorded
// in docs/BENCHMARKS.md.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/veredicto/veredicto/internal/asl/aslbench"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench-compare:", err)
		os.Exit(1)
	}
}

type config struct {
	rounds int
	each   time.Duration
	node   string
	script string
	procs  []int
	only   string
}

func parse(args []string) (config, error) {
	fs := flag.NewFlagSet("bench-compare", flag.ContinueOnError)
	c := config{}
	fs.IntVar(&c.rounds, "rounds", 8, "interleaved rounds per workload (the median is reported; a multiple of 4 balances the order)")
	fs.DurationVar(&c.each, "time", time.Second, "how long each engine runs a workload per round")
	fs.StringVar(&c.node, "node", "node_modules/.bin/node", "the Node.js binary")
	fs.StringVar(&c.script, "script", "scripts/bench-compare.mjs", "the Node half of the benchmark")
	cpus := fs.String("cpu", "1,2", "GOMAXPROCS values to measure the Go engine with, comma-separated")
	fs.StringVar(&c.only, "only", "", "run only the workload with this name")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.rounds < 1 || c.each <= 0 {
		return c, fmt.Errorf("-rounds and -time must be positive")
	}
	for _, s := range strings.Split(*cpus, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return c, fmt.Errorf("-cpu: %q is not a positive integer", s)
		}
		c.procs = append(c.procs, n)
	}
	return c, nil
}

// sample is one engine's figures over the rounds.
type sample struct {
	perSecond   []float64
	allocs      []float64
	collections []float64 // per run (Go only)
	steal       []float64 // the share of the machine's CPU time stolen (-1: unknown)
}

func (s *sample) add(m aslbench.Measurement, steal float64) {
	s.perSecond = append(s.perSecond, m.PerSecond())
	s.allocs = append(s.allocs, m.Allocs)
	s.collections = append(s.collections, m.Collections)
	s.steal = append(s.steal, steal)
}

// procStat is where Linux reports the CPU time, steal included.
var procStat = "/proc/stat"

// cpuTimes returns the machine's total and stolen CPU time so far, in
// clock ticks, from the first line of /proc/stat; false where there is no
// such file (not Linux) or it does not read as expected.
func cpuTimes() (total, steal uint64, ok bool) {
	b, err := os.ReadFile(procStat)
	if err != nil {
		return 0, 0, false
	}
	return parseCPULine(string(b))
}

// parseCPULine reads the aggregate "cpu" line of /proc/stat: user nice
// system idle iowait irq softirq steal [guest guest_nice], in ticks (the
// guest times are already counted in user and nice).
func parseCPULine(stat string) (total, steal uint64, ok bool) {
	line, _, _ := strings.Cut(stat, "\n")
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0, 0, false
	}
	for i, f := range fields[1:9] {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += n
		if i == 7 {
			steal = n
		}
	}
	return total, steal, true
}

// stealDuring runs f and returns the share of the machine's CPU time the
// hypervisor gave to others meanwhile (-1 when it cannot be read): a
// measurement taken while it was high says more about the host than about
// the engine.
func stealDuring(f func() error) (float64, error) {
	t0, s0, ok0 := cpuTimes()
	err := f()
	t1, s1, ok1 := cpuTimes()
	if !ok0 || !ok1 || t1 <= t0 {
		return -1, err
	}
	return float64(s1-s0) / float64(t1-t0), err
}

// share prints a median steal share ("–" when unknown).
func share(v []float64) string {
	if len(v) == 0 || slices.Min(v) < 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f %%", 100*median(v))
}

// schedule orders round number round: whether the Go engine goes before
// Node, and the order of the GOMAXPROCS values. Over every four rounds
// each value goes first as often as the others and, with two values, is
// measured next to the Node run as often as the other: the run next to
// Node (which loads both CPUs, then exits) measured 10-40 % slower on a
// 2-CPU VM, and alternating only which engine and which value go first
// put the same value next to Node every round.
func schedule(round int, procs []int) (goFirst bool, order []int) {
	goFirst = round%2 == 0
	order = procs
	if (round/2)%2 == 1 {
		order = slices.Clone(procs)
		slices.Reverse(order)
	}
	return goFirst, order
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func run(ctx context.Context, args []string, out io.Writer) error {
	cfg, err := parse(args)
	if err != nil {
		return err
	}
	var ws []aslbench.Workload
	for _, w := range aslbench.All() {
		if cfg.only == "" || cfg.only == w.Name {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return fmt.Errorf("-only: no workload named %q", cfg.only)
	}
	dir, err := os.MkdirTemp("", "bench-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := aslbench.Write(dir, ws); err != nil {
		return err
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))

	fmt.Fprintf(out, "bench-compare: %d rounds × %s per engine; %s, %d CPUs\n", cfg.rounds, cfg.each, runtime.Version(), runtime.NumCPU())
	type row struct {
		name string
		goBy map[int]*sample
		node sample
	}
	var rows []row
	for _, w := range ws {
		r, err := aslbench.NewRunner(w)
		if err != nil {
			return err
		}
		rw := row{name: w.Name, goBy: map[int]*sample{}}
		for _, p := range cfg.procs {
			rw.goBy[p] = &sample{}
		}
		for round := 0; round < cfg.rounds; round++ {
			goFirst, procs := schedule(round, cfg.procs)
			goRound := func() error {
				for _, p := range procs {
					runtime.GOMAXPROCS(p)
					var m aslbench.Measurement
					steal, err := stealDuring(func() (err error) {
						m, err = r.Measure(ctx, cfg.each)
						return err
					})
					if err != nil {
						return err
					}
					rw.goBy[p].add(m, steal)
				}
				return nil
			}
			nodeRound := func() error {
				goOut, transitions, err := r.Run(ctx)
				if err != nil {
					return err
				}
				var m aslbench.Measurement
				steal, err := stealDuring(func() (err error) {
					m, err = measureNode(ctx, cfg, filepath.Join(dir, w.Name+".json"))
					return err
				})
				if err != nil {
					return fmt.Errorf("%s: node: %w", w.Name, err)
				}
				if err := sameJSON(goOut, m.Output); err != nil {
					return fmt.Errorf("%s: the engines disagree: %w", w.Name, err)
				}
				m.Transitions = transitions
				m.Allocs, m.Collections = 0, 0
				rw.node.add(m, steal)
				return nil
			}
			first, second := goRound, nodeRound
			if !goFirst {
				first, second = nodeRound, goRound
			}
			if err := first(); err != nil {
				return err
			}
			if err := second(); err != nil {
				return err
			}
		}
		rows = append(rows, rw)
	}
	// The control loop, measured with each GOMAXPROCS value in the same
	// balanced order: what a second P costs the runtime itself here.
	control := map[int]*sample{}
	for _, p := range cfg.procs {
		control[p] = &sample{}
	}
	for round := 0; round < cfg.rounds; round++ {
		_, procs := schedule(round, cfg.procs)
		for _, p := range procs {
			runtime.GOMAXPROCS(p)
			var m aslbench.Measurement
			steal, _ := stealDuring(func() error { m = aslbench.MeasureControl(cfg.each); return nil })
			control[p].add(m, steal)
		}
	}

	fmt.Fprintln(out)
	header := "| workload | aws-local-stepfunctions |"
	sep := "|---|---:|"
	for _, p := range cfg.procs {
		header += fmt.Sprintf(" Go, GOMAXPROCS=%d | ratio | allocs/transition |", p)
		sep += "---:|---:|---:|"
	}
	fmt.Fprintln(out, header)
	fmt.Fprintln(out, sep)
	for _, rw := range rows {
		node := median(rw.node.perSecond)
		line := fmt.Sprintf("| %s | %s |", rw.name, rate(node))
		for _, p := range cfg.procs {
			g := median(rw.goBy[p].perSecond)
			ratio := 0.0
			if node > 0 {
				ratio = g / node
			}
			line += fmt.Sprintf(" %s | %.2f× | %.2f |", rate(g), ratio, median(rw.goBy[p].allocs))
		}
		fmt.Fprintln(out, line)
	}
	fmt.Fprintln(out, "\ntransitions/s, medians of the rounds; ratio = Go / Node.")
	// The spread says how far to trust a median on a machine whose load
	// comes and goes.
	fmt.Fprintln(out, "\nSpread (slowest – fastest round):")
	for _, rw := range rows {
		line := fmt.Sprintf("- %s: Node %s", rw.name, spread(rw.node.perSecond))
		for _, p := range cfg.procs {
			line += fmt.Sprintf("; Go GOMAXPROCS=%d %s", p, spread(rw.goBy[p].perSecond))
		}
		fmt.Fprintln(out, line)
	}
	// Collections are what a second CPU makes dearer on a VM (their
	// stop-the-world phases wait for it), and steal says how busy the host
	// was: both explain a two-CPU column below the one-CPU one.
	fmt.Fprintln(out, "\nGo collections per run, and CPU time stolen by the hypervisor during the runs (medians):")
	for _, rw := range rows {
		line := fmt.Sprintf("- %s: Node steal %s", rw.name, share(rw.node.steal))
		for _, p := range cfg.procs {
			line += fmt.Sprintf("; Go GOMAXPROCS=%d %.2f collections, steal %s", p, median(rw.goBy[p].collections), share(rw.goBy[p].steal))
		}
		fmt.Fprintln(out, line)
	}
	fmt.Fprintf(out, "\nControl: a loop that only allocates what one Task-chain run does (%d objects, %d KB), engine aside:\n", aslbench.ControlObjects, aslbench.ControlBytes>>10)
	line := "-"
	for i, p := range cfg.procs {
		c := control[p]
		if i > 0 {
			line += ";"
		}
		line += fmt.Sprintf(" GOMAXPROCS=%d %.0f runs/s (%.2f collections per run, steal %s)", p, median(c.perSecond), median(c.collections), share(c.steal))
	}
	if len(cfg.procs) > 1 {
		if base := median(control[cfg.procs[0]].perSecond); base > 0 {
			last := cfg.procs[len(cfg.procs)-1]
			line += fmt.Sprintf("; GOMAXPROCS=%d / GOMAXPROCS=%d: %.2f×", last, cfg.procs[0], median(control[last].perSecond)/base)
		}
	}
	fmt.Fprintln(out, line)
	return nil
}

// spread is the slowest and fastest of v ("a – b").
func spread(v []float64) string {
	if len(v) == 0 {
		return "–"
	}
	return rate(slices.Min(v)) + " – " + rate(slices.Max(v))
}

func rate(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2f M/s", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.0f k/s", v/1e3)
	default:
		return fmt.Sprintf("%.0f /s", v)
	}
}

func measureNode(ctx context.Context, cfg config, file string) (aslbench.Measurement, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, cfg.node, cfg.script, file, strconv.FormatInt(cfg.each.Milliseconds(), 10))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return aslbench.Measurement{}, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var m aslbench.Measurement
	if err := json.Unmarshal(stdout.Bytes(), &m); err != nil {
		return m, fmt.Errorf("decode its output: %w", err)
	}
	return m, nil
}

func sameJSON(a, b []byte) error {
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return fmt.Errorf("go output: %w", err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return fmt.Errorf("node output: %w", err)
	}
	if !reflect.DeepEqual(x, y) {
		return fmt.Errorf("outputs differ: go %.200s, node %.200s", a, b)
	}
	return nil
}

package loadgen

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// Latencies are the durations of the answered calls, in any order.
type Latencies []time.Duration

// Percentile is the nearest-rank p-th percentile (0 < p ≤ 100): the
// smallest latency at least p % of the calls took no longer than; 0 for
// none.
func (l Latencies) Percentile(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	return s.sortedPercentile(p)
}

func (s Latencies) sortedPercentile(p float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	rank := int(p / 100 * float64(len(s)))
	if float64(rank) < p/100*float64(len(s)) {
		rank++ // the nearest rank rounds up
	}
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// Summary is the p50, p90, p99 and max of some latencies.
type Summary struct {
	N                  int
	P50, P90, P99, Max time.Duration
}

// Summarize sorts a copy of l once for every percentile.
func (l Latencies) Summarize() Summary {
	s := slices.Clone(l)
	slices.Sort(s)
	out := Summary{N: len(s), P50: s.sortedPercentile(50), P90: s.sortedPercentile(90), P99: s.sortedPercentile(99)}
	if len(s) > 0 {
		out.Max = s[len(s)-1]
	}
	return out
}

// PerSecond is n over d, 0 for no time.
func PerSecond(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// Report is what a run measured.
type Report struct {
	Target  float64       // starts/s asked for (0: as fast as the workers go)
	Workers int           // concurrent callers
	Window  time.Duration // from the first start sent to the last answered

	Started int            // StartExecution calls answered with an execution
	Refused map[string]int // calls that failed, by error code
	Latency Summary        // of the answered StartExecution calls, from when each was sent
	// Response is, at a target rate, the answered starts' latency from
	// when each was due on the schedule: a start that waited for a free
	// worker counts that wait, as the client it stands for would (the
	// service latency alone hides a server that falls behind).
	Response Summary
	// Seconds counts the starts answered in each second after the first
	// was sent: a rate sustained is the slowest of the full seconds, not
	// the average (a stall followed by a catch-up averages out).
	Seconds   []int
	Behind    time.Duration // the latest a start was sent against the schedule (Target > 0)
	Completed int           // executions SUCCEEDED
	Failed    int           // executions that closed otherwise
	Running   int           // executions still RUNNING when the run stopped waiting
	// Drained is from the first start to the moment no started execution
	// was running any more (0 if that moment was not seen).
	Drained time.Duration
	// CompletedInWindow is the executions that had closed when the last
	// start was answered.
	CompletedInWindow int

	Server *Usage // the server's process, when its PID was given: starts, drain and listings
	// ServerStarts is the server's process while the starts ran only.
	ServerStarts *Usage
	Client       Usage // this process
	Machine      Machine
}

// StartsPerSecond is the rate of answered starts over the window.
func (r Report) StartsPerSecond() float64 { return PerSecond(r.Started, r.Window) }

// CompletionsPerSecond is the rate at which the started executions
// completed: those that SUCCEEDED over the time until none was left
// running (a failed execution is not a completion), or, when that moment
// was not seen, those closed within the window over it.
func (r Report) CompletionsPerSecond() float64 {
	if r.Drained > 0 {
		return PerSecond(r.Completed, r.Drained)
	}
	return PerSecond(r.CompletedInWindow, r.Window)
}

// SlowestSecond is the fewest starts answered in a full second of the
// window (the last, partial second left out), and how many full seconds
// there were; 0, 0 for a window under two seconds.
func (r Report) SlowestSecond() (starts, seconds int) {
	full := r.Seconds
	if len(full) > 0 {
		full = full[:len(full)-1]
	}
	if len(full) < 1 {
		return 0, 0
	}
	return slices.Min(full), len(full)
}

// Write prints the report, one figure a line.
func (r Report) Write(w io.Writer) {
	target := "as fast as the workers go"
	if r.Target > 0 {
		target = fmt.Sprintf("%.0f/s (a start sent at most %v behind schedule)", r.Target, r.Behind.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "workers %d, target %s, window %.2f s\n", r.Workers, target, r.Window.Seconds())
	fmt.Fprintf(w, "starts        %d answered, %.0f/s", r.Started, r.StartsPerSecond())
	for code, n := range r.Refused {
		fmt.Fprintf(w, ", %d %s", n, code)
	}
	fmt.Fprintln(w)
	if n, secs := r.SlowestSecond(); secs > 0 {
		fmt.Fprintf(w, "sustained     at least %d starts answered in each of %d full seconds\n", n, secs)
	}
	l := r.Latency
	fmt.Fprintf(w, "latency       p50 %v  p90 %v  p99 %v  max %v (from when each start was sent)\n", ms(l.P50), ms(l.P90), ms(l.P99), ms(l.Max))
	if l := r.Response; r.Target > 0 && l.N > 0 {
		fmt.Fprintf(w, "response      p50 %v  p90 %v  p99 %v  max %v (from when each start was due)\n", ms(l.P50), ms(l.P90), ms(l.P99), ms(l.Max))
	}
	drained := "not drained"
	if r.Drained > 0 {
		drained = fmt.Sprintf("all closed %.2f s after the first start", r.Drained.Seconds())
	}
	fmt.Fprintf(w, "completions   %d succeeded, %d failed, %d still running; %.0f/s (%s; %d closed within the window)\n",
		r.Completed, r.Failed, r.Running, r.CompletionsPerSecond(), drained, r.CompletedInWindow)
	if s := r.ServerStarts; s != nil {
		fmt.Fprintf(w, "server starts CPU %.1f s user + %.1f s sys = %.0f %% of one core while the starts ran\n",
			s.User.Seconds(), s.System.Seconds(), 100*s.Cores())
	}
	if s := r.Server; s != nil {
		fmt.Fprintf(w, "server        CPU %.1f s user + %.1f s sys = %.0f %% of one core; RSS %.0f MiB at the end, peak %.0f MiB; %d threads\n",
			s.User.Seconds(), s.System.Seconds(), 100*s.Cores(), mib(s.RSS), mib(s.PeakRSS), s.Threads)
	}
	c := r.Client
	fmt.Fprintf(w, "load generator CPU %.1f s user + %.1f s sys = %.0f %% of one core\n", c.User.Seconds(), c.System.Seconds(), 100*c.Cores())
	m := r.Machine
	fmt.Fprintf(w, "machine       %d CPUs %.0f %% busy, %.1f %% stolen; load average %.2f before, %.2f after\n",
		m.CPUs, 100*m.Busy, 100*m.Steal, m.LoadBefore, m.LoadAfter)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func mib(b int64) float64 { return float64(b) / (1 << 20) }

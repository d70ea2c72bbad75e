package loadgen

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// ticksPerSecond is USER_HZ, the unit of /proc's CPU times: 100 on every
// Linux build Go supports (sysconf(_SC_CLK_TCK) would need cgo).
const ticksPerSecond = 100

// procRoot is /proc (a test points it at a fake tree).
var procRoot = "/proc"

// Usage is what a process used over a run.
type Usage struct {
	User, System time.Duration // CPU time
	Wall         time.Duration // the run's length
	RSS          int64         // resident set at the end, bytes
	PeakRSS      int64         // the process's high-water mark, bytes
	Threads      int
}

// Cores is the CPU time over the wall time: 1 is one core kept busy.
func (u Usage) Cores() float64 {
	if u.Wall <= 0 {
		return 0
	}
	return (u.User + u.System).Seconds() / u.Wall.Seconds()
}

// procSample is one reading of /proc/<pid>.
type procSample struct {
	at        time.Time
	user, sys time.Duration
	rss, peak int64
	threads   int
}

// sampleProc reads /proc/<pid>/stat and /proc/<pid>/status ("self" for
// this process).
func sampleProc(pid string) (procSample, error) {
	s := procSample{at: time.Now()}
	stat, err := os.ReadFile(procRoot + "/" + pid + "/stat")
	if err != nil {
		return s, err
	}
	if s.user, s.sys, err = parseStat(stat); err != nil {
		return s, fmt.Errorf("%s/%s/stat: %w", procRoot, pid, err)
	}
	status, err := os.ReadFile(procRoot + "/" + pid + "/status")
	if err != nil {
		return s, err
	}
	s.rss, s.peak, s.threads = parseStatus(status)
	return s, nil
}

// parseStat reads utime and stime (fields 14 and 15) of /proc/<pid>/stat.
// The command name, field 2, is in parentheses and may hold spaces and
// parentheses itself: fields are counted after its last ')'.
func parseStat(b []byte) (user, sys time.Duration, err error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("no command name")
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	ticks := func(s string) (time.Duration, error) {
		n, err := strconv.ParseInt(s, 10, 64)
		return time.Duration(n) * time.Second / ticksPerSecond, err
	}
	if user, err = ticks(f[11]); err != nil {
		return 0, 0, err
	}
	sys, err = ticks(f[12])
	return user, sys, err
}

// parseStatus reads VmRSS, VmHWM (in kB) and Threads of
// /proc/<pid>/status; a missing line reads 0.
func parseStatus(b []byte) (rss, peak int64, threads int) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = n * 1024
		case "VmHWM":
			peak = n * 1024
		case "Threads":
			threads = int(n)
		}
	}
	return rss, peak, threads
}

// usage is what a process used between two samples.
func usage(a, b procSample) Usage {
	return Usage{User: b.user - a.user, System: b.sys - a.sys, Wall: b.at.Sub(a.at), RSS: b.rss, PeakRSS: b.peak, Threads: b.threads}
}

// Machine is what the whole machine did over a run: other jobs share it.
type Machine struct {
	CPUs                  int
	Busy, Steal           float64 // shares of the CPU time: not idle, taken by the hypervisor
	LoadBefore, LoadAfter float64 // 1-minute load average
}

// cpuSample is the aggregate line of /proc/stat, in ticks.
type cpuSample struct{ total, idle, steal int64 }

func sampleCPU() (cpuSample, error) {
	b, err := os.ReadFile(procRoot + "/stat")
	if err != nil {
		return cpuSample{}, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return parseCPULine(string(line))
}

// parseCPULine reads "cpu user nice system idle iowait irq softirq steal …".
func parseCPULine(line string) (cpuSample, error) {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuSample{}, fmt.Errorf("not the aggregate cpu line: %q", line)
	}
	var s cpuSample
	for i, v := range f[1:] {
		if i >= 8 { // guest time is already counted in user
			break
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return cpuSample{}, fmt.Errorf("cpu line field %d: %w", i+1, err)
		}
		s.total += n
		switch i {
		case 3, 4: // idle, iowait
			s.idle += n
		case 7:
			s.steal = n
		}
	}
	return s, nil
}

func machineBetween(a, b cpuSample) (busy, steal float64) {
	total := float64(b.total - a.total)
	if total <= 0 {
		return 0, 0
	}
	return 1 - float64(b.idle-a.idle)/total, float64(b.steal-a.steal) / total
}

// loadAverage is the 1-minute load average (0 where /proc has none).
func loadAverage() float64 {
	b, err := os.ReadFile(procRoot + "/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

func numCPU() int { return runtime.NumCPU() }

package benche2e

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The figures of a process come from Linux's /proc; elsewhere they are
// reported as unavailable.

// clockTick is the unit of the CPU times in /proc (USER_HZ, 100 on every
// Linux architecture's user ABI).
const clockTick = 10 * time.Millisecond

// ProcCPU returns the CPU time (user + system, all threads) process pid has
// used so far, from /proc/<pid>/stat.
func ProcCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(b)
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/<pid>/stat line; the command name, field 2, is in parentheses and
// may hold spaces, so the fields are counted after its closing one.
func parseStatCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("proc stat: no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): utime is field 14, f[11].
	if len(f) < 13 {
		return 0, fmt.Errorf("proc stat: %d fields after the command name", len(f))
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("proc stat: bad utime/stime %q %q", f[11], f[12])
	}
	return time.Duration(ut+st) * clockTick, nil
}

// PeakRSS returns the peak resident set size (VmHWM) of process pid in
// bytes, from /proc/<pid>/status.
func PeakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseStatusKB(b, "VmHWM:")
}

// parseStatusKB returns the value of a "<key> <n> kB" line in bytes.
func parseStatusKB(b []byte, key string) (int64, error) {
	for line := range strings.SplitSeq(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, key)
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("proc status: bad %s line %q", key, line)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("proc status: bad %s line %q", key, line)
		}
		return n << 10, nil
	}
	return 0, fmt.Errorf("proc status: no %s line", key)
}

// ResetPeakRSS sets the peak RSS of process pid back to its current RSS
// (writing 5 to /proc/<pid>/clear_refs), so that PeakRSS then reports the
// peak of what follows. It fails where the kernel does not allow it.
func ResetPeakRSS(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// MachineCPU returns the busy and total CPU time of the whole machine so
// far (all CPUs), from the first line of /proc/stat.
func MachineCPU() (busy, total time.Duration, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	return parseMachineCPU(b)
}

func parseMachineCPU(b []byte) (busy, total time.Duration, err error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("proc stat: bad cpu line %q", line)
	}
	var idle int64
	var sum int64
	// user nice system idle iowait irq softirq steal guest guest_nice; guest
	// times are already counted in user and nice.
	for i, s := range f[1:min(len(f), 9)] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("proc stat: bad cpu field %q", s)
		}
		sum += n
		if i == 3 || i == 4 { // idle, iowait
			idle += n
		}
	}
	return time.Duration(sum-idle) * clockTick, time.Duration(sum) * clockTick, nil
}

// LoadAvg returns the first three fields of /proc/loadavg, or "n/a".
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

// ProcIOCalls returns the number of read and write system calls (read,
// write, readv, writev, ...; syscr + syscw of /proc/<pid>/io) process pid
// has made so far.
func ProcIOCalls(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0, err
	}
	return parseIOCalls(b)
}

func parseIOCalls(b []byte) (int64, error) {
	var sum int64
	found := 0
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "syscr" && k != "syscw") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("proc io: bad %s line %q", k, line)
		}
		sum += n
		found++
	}
	if found != 2 {
		return 0, fmt.Errorf("proc io: no syscr/syscw")
	}
	return sum, nil
}

// usage is what a process used so far.
type usage struct {
	cpu time.Duration
	io  int64 // read/write system calls, -1 unknown
}

// readUsage reads the CPU time and the I/O system calls of pid.
func readUsage(pid int) (usage, error) {
	cpu, err := ProcCPU(pid)
	if err != nil {
		return usage{}, err
	}
	io, err := ProcIOCalls(pid)
	if err != nil {
		io = -1
	}
	return usage{cpu: cpu, io: io}, nil
}

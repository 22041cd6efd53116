package benche2e

import (
	"math"
	"slices"
	"time"
)

// Quantile returns the q-quantile (0 ≤ q ≤ 1) of v by nearest rank: the
// smallest value with at least q·len(v) values at or below it. It sorts a
// copy; an empty v gives 0.
func Quantile(v []time.Duration, q float64) time.Duration {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// Diffs returns a[i] - b[i] for the pairs of a and b (the shorter length).
func Diffs(a, b []time.Duration) []time.Duration {
	n := min(len(a), len(b))
	out := make([]time.Duration, n)
	for i := range n {
		out[i] = a[i] - b[i]
	}
	return out
}

// Ratio returns a / b, or NaN when b is not positive (no meaningful
// ratio: a target that adds nothing, or a figure not measured).
func Ratio(a, b float64) float64 {
	if b <= 0 || math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return a / b
}

// Figures are the measurements of one target in one phase.
type Figures struct {
	Target string
	// N is the number of measured requests.
	N int
	// TTFT and Total are per request: request sent → first content read,
	// and → end of the response read.
	TTFT, Total []time.Duration
	// Added is, at c=1, TTFT minus the TTFT of the direct call of the same
	// round (empty for the direct target and at c>1).
	Added []time.Duration
	// Wall is the time the measured requests took (at c>1: the sum of the
	// batch durations).
	Wall time.Duration
	// CPU is the CPU time (user + system) the target's own process spent
	// during the measured requests; HaveCPU is false for the direct target
	// (no process between client and LLM).
	CPU     time.Duration
	HaveCPU bool
	// Dials is the number of connections the target opened to the LLM
	// during the phase (-1: unknown), UpstreamRequests the number of
	// requests it sent there.
	Dials, UpstreamRequests int64
	// IOCalls is the number of read/write system calls of the target's
	// process during the measured requests (-1: unknown).
	IOCalls int64
	// PeakRSS is the largest resident set (bytes) of the target's process
	// during the phase (VmHWM, reset at the phase start when the kernel
	// allows; else over the process's life, see PeakLifetime).
	PeakRSS      int64
	PeakLifetime bool
}

// ReqPerSec is the measured throughput.
func (f *Figures) ReqPerSec() float64 {
	if f.Wall <= 0 {
		return math.NaN()
	}
	return float64(f.N) / f.Wall.Seconds()
}

// CPUPerReq is the target process's CPU time per request, -1 without one.
func (f *Figures) CPUPerReq() time.Duration {
	if !f.HaveCPU || f.N == 0 {
		return -1
	}
	return f.CPU / time.Duration(f.N)
}

// IOCallsPerReq is the read/write system calls per request, -1 unknown.
func (f *Figures) IOCallsPerReq() float64 {
	if !f.HaveCPU || f.IOCalls < 0 || f.N == 0 {
		return -1
	}
	return float64(f.IOCalls) / float64(f.N)
}

// AddedP50 is the median added TTFT, -1 when not measured.
func (f *Figures) AddedP50() time.Duration {
	if len(f.Added) == 0 {
		return -1
	}
	return Quantile(f.Added, 0.5)
}

// Ratios compares agentchat with the bare proxy in one scenario (NaN where
// a figure is missing).
type Ratios struct {
	// AddedTTFT is agentchat's added TTFT p50 over the proxy's (c=1).
	AddedTTFT float64
	// CPU is CPU per request at the highest concurrency.
	CPU float64
	// ReqPerSec is throughput at the highest concurrency.
	ReqPerSec float64
	// PeakRSS is peak RSS at the highest concurrency.
	PeakRSS float64
}

// Compare computes agentchat's ratios to the proxy from the c=1 figures
// (added TTFT) and the concurrent ones (CPU, req/s, RSS); either may be nil.
func Compare(c1Agent, c1Proxy, cNAgent, cNProxy *Figures) Ratios {
	r := Ratios{AddedTTFT: math.NaN(), CPU: math.NaN(), ReqPerSec: math.NaN(), PeakRSS: math.NaN()}
	if c1Agent != nil && c1Proxy != nil {
		a, p := c1Agent.AddedP50(), c1Proxy.AddedP50()
		if a >= 0 && p >= 0 {
			r.AddedTTFT = Ratio(float64(a), float64(p))
		}
	}
	if cNAgent != nil && cNProxy != nil {
		a, p := cNAgent.CPUPerReq(), cNProxy.CPUPerReq()
		if a >= 0 && p >= 0 {
			r.CPU = Ratio(float64(a), float64(p))
		}
		r.ReqPerSec = Ratio(cNAgent.ReqPerSec(), cNProxy.ReqPerSec())
		r.PeakRSS = Ratio(float64(cNAgent.PeakRSS), float64(cNProxy.PeakRSS))
	}
	return r
}

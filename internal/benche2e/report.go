package benche2e

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// Goals are the targets of issue 26 (issue 11's, tightened: /v1 added
// TTFT ≤ 1.1× and req/s ≥ 0.9×), as ratios to the bare proxy of the same
// run (and one absolute bound).
var Goals = struct {
	// V1AddedTTFT bounds agentchat's added TTFT p50 on /v1 streams.
	V1AddedTTFT float64
	// V1CPU bounds CPU per streamed /v1 request at the highest concurrency.
	V1CPU float64
	// V1ReqPerSec is the least /v1 stream throughput at the highest
	// concurrency.
	V1ReqPerSec float64
	// PeakRSS bounds agentchat's peak RSS at the highest concurrency.
	PeakRSS int64
	// ProjectAddedTTFT bounds the project streams' added TTFT p50.
	ProjectAddedTTFT float64
}{1.1, 1.3, 0.9, 32 << 20, 2.0}

func ms(d time.Duration) string {
	if d < 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(d)/float64(time.Millisecond))
}

func mib(n int64) string {
	if n <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(n)/(1<<20))
}

func ratio(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f×", r)
}

// WriteText prints the report as tables, one per scenario and
// concurrency, then the ratios and the goals.
func (r *Report) WriteText(w io.Writer) {
	o := r.Options
	fmt.Fprintf(w, "agentchat end-to-end benchmark: %d requests per target and phase after %d warm-up, c=1 and c=%d (batches of %d), %d chunks per answer\n",
		o.Requests, o.Warmup, o.Concurrency, o.Batch, o.Chunks)
	store := o.Store
	if store == "" {
		store = "sqlite"
	}
	fmt.Fprintf(w, "agentchat's store: %s; started %s, took %s; %d CPUs; load average %s before, %s after\n",
		store, r.Started.Format(time.RFC3339), r.Elapsed.Round(time.Second), r.CPUs, r.LoadBefore, r.LoadAfter)
	if !math.IsNaN(r.MachineBusy) {
		fmt.Fprintf(w, "machine CPU busy during the run: %.0f%% (benchmark processes %.0f%%, others %.0f%%)\n",
			100*r.MachineBusy, 100*r.OwnBusy, 100*max(r.MachineBusy-r.OwnBusy, 0))
	}
	fmt.Fprintln(w, "times in ms; added = TTFT minus the direct call's TTFT of the same round (c=1); cpu = user+system of the target's process per request;")
	fmt.Fprintln(w, "io calls = read/write system calls of that process per request; dials/100 = new connections to the LLM per 100 requests;")
	fmt.Fprintln(w, "peak RSS = VmHWM of the process during the phase (* = over its life)")
	for _, sc := range r.Scenarios {
		fmt.Fprintf(w, "\n== %s: %s\n", sc.Name, sc.Description)
		for _, p := range sc.Phases {
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintf(tw, "c=%d\tn\tttft p50\tttft p99\tadded p50\ttotal p50\ttotal p99\treq/s\tcpu ms/req\tio calls/req\tdials/100\tpeak RSS MiB\t\n", p.Concurrency)
			for _, f := range p.Figures {
				peak := mib(f.PeakRSS)
				if f.PeakLifetime && f.PeakRSS > 0 {
					peak += "*"
				}
				calls := "-"
				if c := f.IOCallsPerReq(); c >= 0 {
					calls = fmt.Sprintf("%.1f", c)
				}
				dials := "-"
				if f.Dials >= 0 && f.N > 0 {
					dials = fmt.Sprintf("%.1f", 100*float64(f.Dials)/float64(f.N))
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t\n", f.Target, f.N,
					ms(Quantile(f.TTFT, 0.5)), ms(Quantile(f.TTFT, 0.99)), ms(f.AddedP50()),
					ms(Quantile(f.Total, 0.5)), ms(Quantile(f.Total, 0.99)), f.ReqPerSec(),
					ms(f.CPUPerReq()), calls, dials, peak)
			}
			_ = tw.Flush()
		}
		rt := sc.Ratios
		fmt.Fprintf(w, "agentchat / proxy: added TTFT p50 %s (c=1); at c=%d: CPU/req %s, req/s %s, peak RSS %s\n",
			ratio(rt.AddedTTFT), sc.Phases[len(sc.Phases)-1].Concurrency, ratio(rt.CPU), ratio(rt.ReqPerSec), ratio(rt.PeakRSS))
	}
	if g := r.Goals(); len(g) > 0 {
		fmt.Fprintln(w, "\ngoals (ratios to the bare proxy, this run):")
		for _, c := range g {
			mark := "MET "
			if !c.Met {
				mark = "MISS"
			}
			fmt.Fprintf(w, "  %s %s: %s (goal %s)\n", mark, c.Name, c.Value, c.Goal)
		}
	}
	fmt.Fprintln(w, "\nsummary (markdown):")
	r.WriteMarkdown(w)
}

// GoalCheck is one goal and whether this run met it.
type GoalCheck struct {
	Name, Value, Goal string
	Met               bool
}

func (r *Report) scenario(name string) *ScenarioResult {
	for _, s := range r.Scenarios {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Goals checks the run against Goals (only the scenarios it ran).
func (r *Report) Goals() []GoalCheck {
	var out []GoalCheck
	le := func(name string, v, goal float64) {
		out = append(out, GoalCheck{Name: name, Value: ratio(v), Goal: "≤ " + ratio(goal), Met: !math.IsNaN(v) && v <= goal})
	}
	if s := r.scenario(ScenarioV1Stream); s != nil {
		le("/v1 stream added TTFT p50", s.Ratios.AddedTTFT, Goals.V1AddedTTFT)
		if len(s.Phases) > 1 {
			c := s.Phases[len(s.Phases)-1].Concurrency
			le(fmt.Sprintf("/v1 stream CPU per request at c=%d", c), s.Ratios.CPU, Goals.V1CPU)
			v := s.Ratios.ReqPerSec
			out = append(out, GoalCheck{Name: fmt.Sprintf("/v1 stream req/s at c=%d", c), Value: ratio(v),
				Goal: "≥ " + ratio(Goals.V1ReqPerSec), Met: !math.IsNaN(v) && v >= Goals.V1ReqPerSec})
			peak := s.Phases[len(s.Phases)-1].Target(TargetAgentchat).PeakRSS
			out = append(out, GoalCheck{Name: fmt.Sprintf("agentchat peak RSS at c=%d (/v1 stream)", c), Value: mib(peak) + " MiB",
				Goal: "≤ " + mib(Goals.PeakRSS) + " MiB", Met: peak > 0 && peak <= Goals.PeakRSS})
		}
	}
	for _, n := range []string{ScenarioProjectNew, ScenarioProjectNewID, ScenarioProjectOngoing} {
		if s := r.scenario(n); s != nil {
			le(n+" added TTFT p50", s.Ratios.AddedTTFT, Goals.ProjectAddedTTFT)
		}
	}
	return out
}

// WriteMarkdown prints one row per scenario: agentchat's figures next to
// the proxy's, and their ratio.
func (r *Report) WriteMarkdown(w io.Writer) {
	c := r.Options.Concurrency
	fmt.Fprintf(w, "| scenario | added TTFT p50, c=1 (proxy) | CPU per request, c=%d (proxy) | req/s, c=%d (proxy) | peak RSS, c=%d (proxy) |\n", c, c, c)
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, sc := range r.Scenarios {
		p1 := sc.Phases[0]
		pn := sc.Phases[len(sc.Phases)-1]
		a1, x1 := p1.Target(TargetAgentchat), p1.Target(TargetProxy)
		an, xn := pn.Target(TargetAgentchat), pn.Target(TargetProxy)
		cells := []string{
			sc.Name,
			fmt.Sprintf("%s ms (%s) %s", ms(a1.AddedP50()), ms(x1.AddedP50()), ratio(sc.Ratios.AddedTTFT)),
			fmt.Sprintf("%s ms (%s) %s", ms(an.CPUPerReq()), ms(xn.CPUPerReq()), ratio(sc.Ratios.CPU)),
			fmt.Sprintf("%.0f (%.0f) %s", an.ReqPerSec(), xn.ReqPerSec(), ratio(sc.Ratios.ReqPerSec)),
			fmt.Sprintf("%s MiB (%s)", mib(an.PeakRSS), mib(xn.PeakRSS)),
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}

// Summary is the report in a JSON-friendly form (missing figures are
// null).
type Summary struct {
	Started     time.Time      `json:"started"`
	ElapsedS    float64        `json:"elapsed_s"`
	LoadBefore  string         `json:"load_before"`
	LoadAfter   string         `json:"load_after"`
	MachineBusy *float64       `json:"machine_busy"`
	OwnBusy     *float64       `json:"own_busy"`
	Rows        []SummaryRow   `json:"rows"`
	Ratios      []SummaryRatio `json:"ratios"`
	Goals       []GoalCheck    `json:"goals"`
}

// SummaryRow is one target of one phase.
type SummaryRow struct {
	Scenario    string   `json:"scenario"`
	Concurrency int      `json:"concurrency"`
	Target      string   `json:"target"`
	N           int      `json:"n"`
	TTFTP50     *float64 `json:"ttft_p50_ms"`
	TTFTP99     *float64 `json:"ttft_p99_ms"`
	AddedP50    *float64 `json:"added_ttft_p50_ms"`
	TotalP50    *float64 `json:"total_p50_ms"`
	TotalP99    *float64 `json:"total_p99_ms"`
	ReqPerSec   *float64 `json:"req_per_s"`
	CPUPerReq   *float64 `json:"cpu_ms_per_req"`
	IOCalls     *float64 `json:"io_calls_per_req"`
	DialsPer100 *float64 `json:"dials_per_100_req"`
	PeakRSSMiB  *float64 `json:"peak_rss_mib"`
}

// SummaryRatio is agentchat / proxy for one scenario.
type SummaryRatio struct {
	Scenario  string   `json:"scenario"`
	AddedTTFT *float64 `json:"added_ttft_p50"`
	CPU       *float64 `json:"cpu_per_req"`
	ReqPerSec *float64 `json:"req_per_s"`
	PeakRSS   *float64 `json:"peak_rss"`
}

func num(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func msNum(d time.Duration) *float64 {
	if d < 0 {
		return nil
	}
	return num(float64(d) / float64(time.Millisecond))
}

// Summary returns the report's figures for JSON.
func (r *Report) Summary() Summary {
	s := Summary{Started: r.Started, ElapsedS: r.Elapsed.Seconds(), LoadBefore: r.LoadBefore, LoadAfter: r.LoadAfter,
		MachineBusy: num(r.MachineBusy), OwnBusy: num(r.OwnBusy), Goals: r.Goals()}
	for _, sc := range r.Scenarios {
		for _, p := range sc.Phases {
			for _, f := range p.Figures {
				row := SummaryRow{Scenario: sc.Name, Concurrency: p.Concurrency, Target: f.Target, N: f.N,
					TTFTP50: msNum(Quantile(f.TTFT, 0.5)), TTFTP99: msNum(Quantile(f.TTFT, 0.99)),
					AddedP50: msNum(f.AddedP50()), TotalP50: msNum(Quantile(f.Total, 0.5)),
					TotalP99: msNum(Quantile(f.Total, 0.99)), ReqPerSec: num(f.ReqPerSec()), CPUPerReq: msNum(f.CPUPerReq())}
				if c := f.IOCallsPerReq(); c >= 0 {
					row.IOCalls = num(c)
				}
				if f.Dials >= 0 && f.N > 0 {
					row.DialsPer100 = num(100 * float64(f.Dials) / float64(f.N))
				}
				if f.PeakRSS > 0 {
					row.PeakRSSMiB = num(float64(f.PeakRSS) / (1 << 20))
				}
				s.Rows = append(s.Rows, row)
			}
		}
		s.Ratios = append(s.Ratios, SummaryRatio{Scenario: sc.Name, AddedTTFT: num(sc.Ratios.AddedTTFT),
			CPU: num(sc.Ratios.CPU), ReqPerSec: num(sc.Ratios.ReqPerSec), PeakRSS: num(sc.Ratios.PeakRSS)})
	}
	return s
}

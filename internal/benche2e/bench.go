package benche2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Targets, in the order of every table.
const (
	TargetDirect    = "direct"
	TargetProxy     = "proxy"
	TargetAgentchat = "agentchat"
)

var targets = []string{TargetDirect, TargetProxy, TargetAgentchat}

// Scenario names.
const (
	ScenarioV1Stream       = "v1-stream"
	ScenarioV1Complete     = "v1-nonstream"
	ScenarioProjectNew     = "project-new"
	ScenarioProjectNewID   = "project-new-client-id"
	ScenarioProjectOngoing = "project-continuing"
)

// Scenarios are every scenario, in the order they run.
var Scenarios = []string{ScenarioV1Stream, ScenarioV1Complete, ScenarioProjectNew, ScenarioProjectNewID, ScenarioProjectOngoing}

// Env is the running system under test: the scripted LLM, the proxy in
// front of it and agentchat, each its own process.
type Env struct {
	// LLMURL, ProxyURL and ServerURL are roots (http://127.0.0.1:port).
	LLMURL, ProxyURL, ServerURL string
	// ProxyPID and ServerPID are the processes whose CPU time and peak RSS
	// are measured (0: not measured); LLMPID only counts in the machine's
	// load.
	ProxyPID, ServerPID, LLMPID int
	// Token is the bearer JWT for agentchat.
	Token string
}

// Options are the knobs of a benchmark run.
type Options struct {
	// Requests is the number of measured requests per target, scenario
	// and concurrency.
	Requests int
	// Warmup is the number of unmeasured requests per target before each
	// scenario's c=1 phase.
	Warmup int
	// Concurrency is the number of concurrent requests of the second
	// phase (≤ 1: no second phase).
	Concurrency int
	// Batch is the number of requests of one batch of the concurrent phase
	// (targets take turns batch by batch); default 5 × Concurrency.
	Batch int
	// Chunks is the number of content chunks the scripted LLM streams.
	Chunks int
	// Scenarios to run (default: all, in order).
	Scenarios []string
	// Project is the project id of the project chat scenarios.
	Project string
	// TurnsPerSession is how many measured turns a continuing session
	// serves (each session starts with one unmeasured turn).
	TurnsPerSession int
	// RequestTimeout bounds one request.
	RequestTimeout time.Duration
	// Progress receives one line per phase (nil: none).
	Progress io.Writer
	// Store names agentchat's store in the report (sqlite, dynalite);
	// empty is sqlite.
	Store string
}

// DefaultRequests is the default number of measured requests per target,
// scenario and concurrency: the whole run takes about a minute and a half
// on a 2-CPU machine.
const DefaultRequests = 2000

func (o *Options) defaults() {
	if o.Requests <= 0 {
		o.Requests = DefaultRequests
	}
	if o.Warmup < 0 {
		o.Warmup = 0
	}
	if o.Concurrency > 1 && o.Batch <= 0 {
		o.Batch = 5 * o.Concurrency
	}
	if o.Chunks <= 0 {
		o.Chunks = DefaultChunks
	}
	if len(o.Scenarios) == 0 {
		o.Scenarios = Scenarios
	}
	if o.Project == "" {
		o.Project = "bench-project"
	}
	if o.TurnsPerSession <= 0 {
		o.TurnsPerSession = 8
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = time.Minute
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
}

// Phase is one concurrency level of one scenario.
type Phase struct {
	Concurrency int
	// Figures of each target, in the order direct, proxy, agentchat.
	Figures []*Figures
}

// Target returns the figures of a target.
func (p *Phase) Target(name string) *Figures {
	for _, f := range p.Figures {
		if f.Target == name {
			return f
		}
	}
	return nil
}

// ScenarioResult is one scenario's phases and ratios.
type ScenarioResult struct {
	Name, Description string
	Phases            []*Phase
	Ratios            Ratios
}

// Report is a whole run.
type Report struct {
	Options   Options
	Scenarios []*ScenarioResult
	Started   time.Time
	Elapsed   time.Duration
	// LoadBefore and LoadAfter are /proc/loadavg at both ends.
	LoadBefore, LoadAfter string
	// MachineBusy is the share of the machine's CPU time that was busy
	// during the run; OwnBusy the share used by the benchmark's own
	// processes (client, LLM, proxy, agentchat); NaN when unknown.
	MachineBusy, OwnBusy float64
	// CPUs is the number of CPUs.
	CPUs int
}

// scenario describes one scenario.
type scenario struct {
	name, desc string
	// continuing posts to existing sessions.
	continuing bool
	// agentCall is the agentchat call (sessionID: the session to continue,
	// "" for a new one).
	agentCall func(sessionID string) Call
	// upstreamKind is the kind of the direct calls; lastStream selects the
	// last streamed upstream request as their body.
	upstreamKind Kind
	lastStream   bool
}

func (b *bench) scenario(name string) (*scenario, error) {
	v1 := func(stream bool) func(string) Call {
		body, _ := json.Marshal(map[string]any{
			"model":          "naked",
			"messages":       []map[string]string{{"role": "user", "content": "How are R1 and R2 linked?"}},
			"stream":         stream,
			"stream_options": map[string]bool{"include_usage": true},
		})
		if !stream {
			body, _ = json.Marshal(map[string]any{
				"model":    "naked",
				"messages": []map[string]string{{"role": "user", "content": "How are R1 and R2 linked?"}},
			})
		}
		kind := KindChunks
		if !stream {
			kind = KindCompletion
		}
		call := Call{URL: b.env.ServerURL + "/v1/chat/completions", Auth: b.env.Token, Body: body, Kind: kind}
		if stream {
			call.Want = b.o.Chunks
		}
		return func(string) Call { return call }
	}
	project := func(sessionID string) Call {
		m := map[string]string{"message": "How are R1 and R2 linked?"}
		if sessionID != "" {
			m["session_id"] = sessionID
		}
		body, _ := json.Marshal(m)
		return Call{URL: b.env.ServerURL + "/v3/projects/" + b.o.Project + "/chat/stream", Auth: b.env.Token,
			Body: body, Kind: KindEvents, Want: b.o.Chunks}
	}
	switch name {
	case ScenarioV1Stream:
		return &scenario{name: name, desc: "POST /v1/chat/completions, stream",
			agentCall: v1(true), upstreamKind: KindChunks, lastStream: true}, nil
	case ScenarioV1Complete:
		return &scenario{name: name, desc: "POST /v1/chat/completions, not streamed",
			agentCall: v1(false), upstreamKind: KindCompletion}, nil
	case ScenarioProjectNew:
		return &scenario{name: name, desc: "POST /v3/projects/{p}/chat/stream, new session",
			agentCall: project, upstreamKind: KindChunks, lastStream: true}, nil
	case ScenarioProjectNewID:
		// As the GNS3 web UI and the web console start a session: with an
		// id of their own.
		return &scenario{name: name, desc: "POST /v3/projects/{p}/chat/stream, new session, client-made id",
			agentCall: func(string) Call { return project(uuid.NewString()) }, upstreamKind: KindChunks, lastStream: true}, nil
	case ScenarioProjectOngoing:
		return &scenario{name: name, desc: "POST /v3/projects/{p}/chat/stream, continuing session",
			agentCall: project, upstreamKind: KindChunks, lastStream: true, continuing: true}, nil
	}
	return nil, fmt.Errorf("unknown scenario %q (known: %s)", name, strings.Join(Scenarios, ", "))
}

// bench is one run.
type bench struct {
	env    Env
	o      Options
	client *Client
}

// Run runs the benchmark against env and returns its report.
func Run(ctx context.Context, env Env, o Options) (*Report, error) {
	o.defaults()
	b := &bench{env: env, o: o, client: NewClient(max(o.Concurrency, 1) + 8)}
	defer b.client.Close()
	rep := &Report{Options: o, Started: time.Now(), LoadBefore: LoadAvg()}
	busy0, total0, mErr := MachineCPU()
	own0 := b.ownCPU()
	for _, name := range o.Scenarios {
		sc, err := b.scenario(name)
		if err != nil {
			return nil, err
		}
		res, err := b.run(ctx, sc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		rep.Scenarios = append(rep.Scenarios, res)
	}
	rep.Elapsed = time.Since(rep.Started)
	rep.LoadAfter = LoadAvg()
	busy1, total1, mErr1 := MachineCPU()
	rep.MachineBusy, rep.OwnBusy = math.NaN(), math.NaN()
	if mErr == nil && mErr1 == nil && total1 > total0 {
		rep.MachineBusy = float64(busy1-busy0) / float64(total1-total0)
		if own1 := b.ownCPU(); own0 >= 0 && own1 >= 0 {
			rep.OwnBusy = float64(own1-own0) / float64(total1-total0)
		}
	}
	rep.CPUs = runtime.NumCPU()
	return rep, nil
}

// ownCPU is the CPU time of this process, the LLM, the proxy and agentchat
// (-1 when one cannot be read).
func (b *bench) ownCPU() time.Duration {
	var sum time.Duration
	for _, pid := range []int{os.Getpid(), b.env.ProxyPID, b.env.ServerPID, b.env.LLMPID} {
		if pid <= 0 {
			continue
		}
		t, err := ProcCPU(pid)
		if err != nil {
			return -1
		}
		sum += t
	}
	return sum
}

// calls are the three calls of a scenario; the agentchat one depends on
// the session.
type calls struct {
	direct, proxy Call
	agent         func(sessionID string) Call
}

// prime sends one agentchat call and derives the direct and proxy calls
// from the request agentchat sent upstream.
func (b *bench) prime(ctx context.Context, sc *scenario) (*calls, error) {
	sid := ""
	if sc.continuing {
		s, err := b.do(ctx, sc.agentCall(""))
		if err != nil {
			return nil, err
		}
		sid = s.SessionID
	}
	if _, err := b.do(ctx, sc.agentCall(sid)); err != nil {
		return nil, err
	}
	body, err := b.lastUpstream(ctx, sc.lastStream)
	if err != nil {
		return nil, err
	}
	if sc.upstreamKind == KindCompletion {
		// The direct call asks the LLM for what the client asked
		// agentchat: one chat.completion.
		if body, err = withoutStream(body); err != nil {
			return nil, err
		}
	}
	want := 0
	if sc.upstreamKind == KindChunks {
		want = b.o.Chunks
	}
	c := &calls{
		direct: Call{URL: b.env.LLMURL + "/v1/chat/completions", Auth: "bench-key", Body: body, Kind: sc.upstreamKind, Want: want, Target: TargetDirect},
		proxy:  Call{URL: b.env.ProxyURL + "/v1/chat/completions", Auth: "bench-key", Body: body, Kind: sc.upstreamKind, Want: want, Target: TargetProxy},
		agent:  sc.agentCall,
	}
	return c, nil
}

// withoutStream turns a request body into its non-streamed form.
func withoutStream(body []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("upstream request: %w", err)
	}
	delete(m, "stream")
	delete(m, "stream_options")
	return json.Marshal(m)
}

// llmStats fetches the scripted LLM's counts (nil when it cannot).
func (b *bench) llmStats(ctx context.Context) Stats {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.env.LLMURL+PathStats, nil)
	if err != nil {
		return nil
	}
	resp, err := b.client.hc.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var st Stats
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&st) != nil {
		return nil
	}
	return st
}

// addDials records the new upstream connections of each target between
// two counts.
func addDials(p *Phase, s0, s1 Stats) {
	for _, f := range p.Figures {
		a, b := s0[f.Target], s1[f.Target]
		if s0 == nil || s1 == nil || b == nil {
			f.Dials = -1
			continue
		}
		if a == nil {
			a = &ConnStats{}
		}
		f.Dials = b.NewConns - a.NewConns
		f.UpstreamRequests = b.Requests - a.Requests
	}
}

// lastUpstream fetches the body of the last request the LLM got.
func (b *bench) lastUpstream(ctx context.Context, stream bool) ([]byte, error) {
	u := b.env.LLMURL + PathLastRequest
	if stream {
		u += "?kind=stream"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := b.client.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("last upstream request: %s %v", resp.Status, err)
	}
	return body, nil
}

func (b *bench) do(ctx context.Context, c Call) (Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, b.o.RequestTimeout)
	defer cancel()
	return b.client.Do(ctx, c)
}

// sessions hands out continuing sessions, each to one request at a time,
// each for TurnsPerSession turns.
type sessions struct {
	ch chan *session
}

type session struct {
	id   string
	left int
}

// newSessions starts n sessions with one (unmeasured) turn each.
func (b *bench) newSessions(ctx context.Context, sc *scenario, n int) (*sessions, error) {
	p := &sessions{ch: make(chan *session, n)}
	for range n {
		s, err := b.do(ctx, sc.agentCall(""))
		if err != nil {
			return nil, fmt.Errorf("start a session: %w", err)
		}
		if s.SessionID == "" {
			return nil, errors.New("start a session: no X-Session-Id")
		}
		p.ch <- &session{id: s.SessionID, left: b.o.TurnsPerSession}
	}
	return p, nil
}

func (p *sessions) take(ctx context.Context) (*session, error) {
	select {
	case s := <-p.ch:
		return s, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *sessions) put(s *session) {
	if s.left--; s.left > 0 {
		p.ch <- s
	}
}

// doTarget runs one request of target.
func (b *bench) doTarget(ctx context.Context, cs *calls, target string, pool *sessions) (Sample, error) {
	switch target {
	case TargetDirect:
		return b.do(ctx, cs.direct)
	case TargetProxy:
		return b.do(ctx, cs.proxy)
	}
	if pool == nil {
		return b.do(ctx, cs.agent(""))
	}
	s, err := pool.take(ctx)
	if err != nil {
		return Sample{}, err
	}
	defer pool.put(s)
	return b.do(ctx, cs.agent(s.id))
}

// pid is the process of a target (0: none).
func (b *bench) pid(target string) int {
	switch target {
	case TargetProxy:
		return b.env.ProxyPID
	case TargetAgentchat:
		return b.env.ServerPID
	}
	return 0
}

func (b *bench) sessionsFor(ctx context.Context, sc *scenario, requests, concurrency int) (*sessions, error) {
	if !sc.continuing {
		return nil, nil
	}
	n := (requests+b.o.TurnsPerSession-1)/b.o.TurnsPerSession + concurrency
	return b.newSessions(ctx, sc, n)
}

// run runs one scenario: priming, warm-up, the c=1 phase, then the
// concurrent one.
func (b *bench) run(ctx context.Context, sc *scenario) (*ScenarioResult, error) {
	res := &ScenarioResult{Name: sc.name, Description: sc.desc}
	start := time.Now()
	cs, err := b.prime(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("prime: %w", err)
	}
	pool, err := b.sessionsFor(ctx, sc, b.o.Warmup, 1)
	if err != nil {
		return nil, err
	}
	if _, err := b.sequential(ctx, cs, pool, b.o.Warmup, false); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	if pool, err = b.sessionsFor(ctx, sc, b.o.Requests, 1); err != nil {
		return nil, err
	}
	p1, err := b.sequential(ctx, cs, pool, b.o.Requests, true)
	if err != nil {
		return nil, fmt.Errorf("c=1: %w", err)
	}
	res.Phases = append(res.Phases, p1)
	fmt.Fprintf(b.o.Progress, "%s: c=1 done (%s)\n", sc.name, time.Since(start).Round(time.Millisecond))
	if b.o.Concurrency > 1 {
		start = time.Now()
		warm := 2 * b.o.Concurrency
		if pool, err = b.sessionsFor(ctx, sc, warm, b.o.Concurrency); err != nil {
			return nil, err
		}
		if _, err := b.concurrent(ctx, cs, pool, warm, false); err != nil {
			return nil, fmt.Errorf("c=%d warm-up: %w", b.o.Concurrency, err)
		}
		if pool, err = b.sessionsFor(ctx, sc, b.o.Requests, b.o.Concurrency); err != nil {
			return nil, err
		}
		pn, err := b.concurrent(ctx, cs, pool, b.o.Requests, true)
		if err != nil {
			return nil, fmt.Errorf("c=%d: %w", b.o.Concurrency, err)
		}
		res.Phases = append(res.Phases, pn)
		fmt.Fprintf(b.o.Progress, "%s: c=%d done (%s)\n", sc.name, b.o.Concurrency, time.Since(start).Round(time.Millisecond))
	}
	last := res.Phases[len(res.Phases)-1]
	res.Ratios = Compare(p1.Target(TargetAgentchat), p1.Target(TargetProxy), last.Target(TargetAgentchat), last.Target(TargetProxy))
	return res, nil
}

var errNoProcess = errors.New("no process")

// newPhase returns empty figures for every target.
func newPhase(c int) *Phase {
	p := &Phase{Concurrency: c}
	for _, t := range targets {
		p.Figures = append(p.Figures, &Figures{Target: t})
	}
	return p
}

// rotation is the order of the targets in round i: each target goes
// first, second and last equally often.
func rotation(i int) []string {
	out := make([]string, len(targets))
	for j := range targets {
		out[j] = targets[(i+j)%len(targets)]
	}
	return out
}

// resetPeaks resets the peak RSS of the measured processes; it returns whether
// the kernel allowed it for all.
func (b *bench) resetPeaks() bool {
	ok := true
	for _, t := range targets {
		if pid := b.pid(t); pid > 0 && ResetPeakRSS(pid) != nil {
			ok = false
		}
	}
	return ok
}

func (b *bench) readPeaks(p *Phase, reset bool) {
	for _, f := range p.Figures {
		if pid := b.pid(f.Target); pid > 0 {
			f.PeakRSS, _ = PeakRSS(pid)
			f.PeakLifetime = !reset
		}
	}
}

// usageOf reads what each measured target used so far (absent: unreadable).
func (b *bench) usageOf() map[string]usage {
	m := map[string]usage{}
	for _, t := range targets {
		if pid := b.pid(t); pid > 0 {
			if u, err := readUsage(pid); err == nil {
				m[t] = u
			}
		}
	}
	return m
}

// addUsage adds the usage between u0 and u1 to f.
func addUsage(f *Figures, u0, u1 usage) {
	f.CPU += u1.cpu - u0.cpu
	f.HaveCPU = true
	if u0.io >= 0 && u1.io >= 0 && f.IOCalls >= 0 {
		f.IOCalls += u1.io - u0.io
	} else {
		f.IOCalls = -1
	}
}

// sequential runs n rounds of one request per target, one request at a
// time, the targets' order rotating each round. Added TTFT is paired with
// the direct call of the same round.
func (b *bench) sequential(ctx context.Context, cs *calls, pool *sessions, n int, measure bool) (*Phase, error) {
	p := newPhase(1)
	if n == 0 {
		return p, nil
	}
	reset := b.resetPeaks()
	u0 := b.usageOf()
	s0 := b.llmStats(ctx)
	for i := range n {
		round := map[string]Sample{}
		for _, t := range rotation(i) {
			s, err := b.doTarget(ctx, cs, t, pool)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t, err)
			}
			round[t] = s
		}
		for _, f := range p.Figures {
			s := round[f.Target]
			f.N++
			f.TTFT = append(f.TTFT, s.TTFT)
			f.Total = append(f.Total, s.Total)
			f.Wall += s.Total
			if f.Target != TargetDirect {
				f.Added = append(f.Added, s.TTFT-round[TargetDirect].TTFT)
			}
		}
	}
	if !measure {
		return p, nil
	}
	u1 := b.usageOf()
	addDials(p, s0, b.llmStats(ctx))
	for _, f := range p.Figures {
		before, ok0 := u0[f.Target]
		after, ok1 := u1[f.Target]
		if ok0 && ok1 {
			addUsage(f, before, after)
		}
	}
	b.readPeaks(p, reset)
	return p, nil
}

// concurrent runs n requests per target at Concurrency, in batches of
// Batch requests, the targets taking turns batch by batch (rotating the
// order each round). CPU time and wall time are summed over a target's
// batches.
func (b *bench) concurrent(ctx context.Context, cs *calls, pool *sessions, n int, measure bool) (*Phase, error) {
	p := newPhase(b.o.Concurrency)
	reset := b.resetPeaks()
	s0 := b.llmStats(ctx)
	batch := b.o.Batch
	for i, done := 0, 0; done < n; i++ {
		size := min(batch, n-done)
		for _, t := range rotation(i) {
			f := p.Target(t)
			pid := b.pid(t)
			var u0 usage
			var err0 error = errNoProcess
			if pid > 0 {
				u0, err0 = readUsage(pid)
			}
			start := time.Now()
			samples, err := b.batch(ctx, cs, t, pool, size)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t, err)
			}
			f.Wall += time.Since(start)
			if err0 == nil {
				if u1, err := readUsage(pid); err == nil {
					addUsage(f, u0, u1)
				}
			}
			for _, s := range samples {
				f.N++
				f.TTFT = append(f.TTFT, s.TTFT)
				f.Total = append(f.Total, s.Total)
			}
		}
		done += size
	}
	if measure {
		b.readPeaks(p, reset)
		addDials(p, s0, b.llmStats(ctx))
	}
	return p, nil
}

// batch runs size requests of one target, Concurrency at a time.
func (b *bench) batch(ctx context.Context, cs *calls, target string, pool *sessions, size int) ([]Sample, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next    atomic.Int64
		mu      sync.Mutex
		samples = make([]Sample, 0, size)
		first   error
		wg      sync.WaitGroup
	)
	for range min(b.o.Concurrency, size) {
		wg.Go(func() {
			for next.Add(1) <= int64(size) {
				s, err := b.doTarget(ctx, cs, target, pool)
				mu.Lock()
				if err != nil {
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
					return
				}
				samples = append(samples, s)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return slices.Clip(samples), nil
}

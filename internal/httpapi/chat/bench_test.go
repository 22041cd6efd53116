package chat_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"agentchat/internal/config"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/localserver"
	"agentchat/internal/wire"
	"agentchat/internal/wire/dynamowire"

	"github.com/google/uuid"
)

// The benchmarks of this file measure the real local server (`make run`):
// config.Load, wire.NewBase with the SQLite store in a temporary DATA_DIR
// and localserver.Handler behind a net/http server on 127.0.0.1, with
// OPENAI_BASE_URL pointing at a scripted LLM (llmtest) in the same
// process. Timing is only reported, never asserted.
//
// The measuring clients run in a separate process (this test binary
// started again with clientEnv set, see TestMain), as curl or a browser
// would: a client inside the server's process would share its Go
// scheduler (a ready client goroutine waits for a free P while server
// goroutines run) and its heap. The client process speaks plain HTTP/1.1
// over loopback TCP to agentchat and, for the "direct" figures, to the
// scripted LLM, replaying the very body agentchat sends upstream; so a
// direct call and a call through agentchat differ only by what agentchat
// adds.

// clientEnv, set to "1", makes the test binary a benchmark client process.
const clientEnv = "AGENTCHAT_BENCH_CLIENT"

// TestMain runs the benchmark client process when clientEnv asks for it,
// else the tests.
func TestMain(m *testing.M) {
	if os.Getenv(clientEnv) == "1" {
		os.Exit(runClientProcess(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// benchTitle is the scripted answer to the (non-streamed) title call.
const benchTitle = "Bench title"

// benchStack is the local server in front of a scripted LLM, with an
// in-process client for setup turns (never for measurements).
type benchStack struct {
	llm    *llmtest.Server
	url    string       // agentchat root, http://127.0.0.1:port
	client *http.Client // setup client of agentchat
	// token is the bearer token of every request to agentchat ("": none,
	// the local server without authentication).
	token string
}

// newBenchStack starts the local server over a fresh SQLite file and a
// scripted LLM streaming reply to every streamed request (the title call
// gets benchTitle).
func newBenchStack(b *testing.B, reply llmtest.Reply) *benchStack {
	b.Helper()
	return newBenchStackWith(b, reply, nil, "")
}

// newBenchStackWith is newBenchStack with extra server variables (over
// the defaults) and the bearer token of the requests to agentchat.
func newBenchStackWith(b *testing.B, reply llmtest.Reply, extra map[string]string, token string) *benchStack {
	b.Helper()
	fake := llmtest.NewServer(b)
	fake.SetHandler(func(req llmtest.Request) llmtest.Reply {
		if !req.Stream {
			return llmtest.Reply{Text: benchTitle}
		}
		return reply
	})
	env := map[string]string{
		"ADDR":            "127.0.0.1:0",
		"DATA_DIR":        b.TempDir(),
		"OPENAI_BASE_URL": fake.BaseURL(),
		"OPENAI_API_KEY":  apiKey,
		"OPENAI_MODEL":    "bench-model",
		// One user opens heapStreams streams at once (BenchmarkHeapPerStream).
		"MAX_TURNS_PER_USER": "1000",
	}
	maps.Copy(env, extra)
	cfg, err := config.Load(func(k string) string { return env[k] }, config.LocalDefaults())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	// The JSON logger at the configured level (info) does all its work;
	// only the bytes go nowhere.
	log := wire.NewLogger(io.Discard, cfg.LogLevel)
	base, err := wire.NewBase(ctx, cfg, log, localserver.StoreOpener(dynamowire.Open))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = base.Close() })
	handler, cleanup, err := localserver.Handler(ctx, base)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cleanup)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		b.Fatal(err)
	}
	// The settings of localserver.Run.
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	tr := http.DefaultTransport.(*http.Transport).Clone()
	b.Cleanup(tr.CloseIdleConnections)
	return &benchStack{llm: fake, url: "http://" + ln.Addr().String(), client: &http.Client{Transport: tr}, token: token}
}

// chatCmd is the client command of one POST /stream (a new session when
// sessionID is empty).
func (s *benchStack) chatCmd(sessionID, message string) clientCmd {
	body := map[string]string{"message": message}
	if sessionID != "" {
		body["session_id"] = sessionID
	}
	raw, _ := json.Marshal(body) // a map of strings always encodes
	return clientCmd{URL: s.url + path("/stream"), Body: raw, Auth: s.token}
}

// directCmd is the client command of one streamed chat completion sent
// straight to the scripted LLM with body.
func (s *benchStack) directCmd(body []byte) clientCmd {
	return clientCmd{URL: s.llm.BaseURL() + "/chat/completions", Auth: apiKey, Body: body, Direct: true}
}

// upstreamBody is the body of the last streamed request agentchat sent to
// the scripted LLM: the direct calls replay it, so that both paths ask the
// same of the LLM.
func (s *benchStack) upstreamBody(b *testing.B) []byte {
	b.Helper()
	reqs := s.llm.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Stream {
			return reqs[i].Body
		}
	}
	b.Fatal("agentchat sent no streamed request to the LLM")
	return nil
}

// turn runs one whole turn on agentchat from this process (setup only)
// and returns its session id.
func (s *benchStack) turn(b *testing.B, sessionID string) string {
	b.Helper()
	c := s.chatCmd(sessionID, "How are R1 and R2 linked?")
	es, err := openStream(context.Background(), s.client, c)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := es.contentTimes(time.Now()); err != nil {
		b.Fatal(err)
	}
	return es.resp.Header.Get("X-Session-Id")
}

// sessionCycle hands out existing sessions, starting a new one (with one
// whole turn, title call included) every turns turns so that histories
// stay short and alike.
type sessionCycle struct {
	s     *benchStack
	turns int
	n     int
	id    string
}

func (c *sessionCycle) next(b *testing.B) string {
	if c.n%c.turns == 0 {
		c.id = c.s.turn(b, "")
	}
	c.n++
	return c.id
}

// clientCmd is one request of the benchmark to the client process.
type clientCmd struct {
	// Op is "stream" (one stream read to its end; the reply has the
	// arrival time of each content), "open" (N streams opened at once and
	// held open once each has its first content) or "close" (hang up the
	// streams held open).
	Op     string `json:"op"`
	URL    string `json:"url,omitempty"`
	Auth   string `json:"auth,omitempty"`
	Body   []byte `json:"body,omitempty"`
	Direct bool   `json:"direct,omitempty"`
	N      int    `json:"n,omitempty"`
}

// clientReply is the client process's answer to a clientCmd.
type clientReply struct {
	// Times are, for "stream", the arrival of each content after the
	// request was sent.
	Times []time.Duration `json:"times,omitempty"`
	Err   string          `json:"err,omitempty"`
}

// runClientProcess serves clientCmds read from in until its end, answering
// each on out; it returns the process exit code.
func runClientProcess(in io.Reader, out io.Writer) int {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	c := &http.Client{Transport: tr}
	dec, enc := json.NewDecoder(in), json.NewEncoder(out)
	var held *streamSet
	for {
		var cmd clientCmd
		if err := dec.Decode(&cmd); err != nil {
			if held != nil {
				held.hangUp()
			}
			if errors.Is(err, io.EOF) {
				return 0
			}
			fmt.Fprintln(os.Stderr, "bench client:", err)
			return 1
		}
		var rep clientReply
		var err error
		switch cmd.Op {
		case "stream":
			rep.Times, err = streamTimes(c, cmd)
		case "open":
			if held != nil {
				held.hangUp()
			}
			held, err = openStreams(c, cmd)
		case "close":
			if held != nil {
				held.hangUp()
				held = nil
			}
			tr.CloseIdleConnections()
		default:
			err = fmt.Errorf("unknown op %q", cmd.Op)
		}
		if err != nil {
			rep.Err = err.Error()
		}
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintln(os.Stderr, "bench client:", err)
			return 1
		}
	}
}

// streamTimes runs one stream to its end and returns the arrival time of
// each content after the request was sent.
func streamTimes(c *http.Client, cmd clientCmd) ([]time.Duration, error) {
	start := time.Now()
	es, err := openStream(context.Background(), c, cmd)
	if err != nil {
		return nil, err
	}
	return es.contentTimes(start)
}

// streamSet is a set of streams held open, each past its first content.
type streamSet struct {
	streams []*eventStream
	cancel  context.CancelFunc
}

// openStreams opens cmd.N streams, a few at a time, and returns once each
// has received its first content.
func openStreams(c *http.Client, cmd clientCmd) (*streamSet, error) {
	if err := ensureFDs(uint64(cmd.N) + 256); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	set := &streamSet{cancel: cancel}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, 32)
	for range cmd.N {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			es, err := openStream(ctx, c, cmd)
			if err == nil {
				if _, err = es.nextContent(); err != nil {
					es.close()
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			set.streams = append(set.streams, es)
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		set.hangUp()
		return nil, fmt.Errorf("%d of %d streams failed to open; first: %w", len(errs), cmd.N, errs[0])
	}
	return set, nil
}

// hangUp closes every stream of the set.
func (set *streamSet) hangUp() {
	set.cancel()
	for _, es := range set.streams {
		es.close()
	}
}

// clientProc is the benchmark's handle on its client process.
type clientProc struct {
	mu  sync.Mutex
	enc *json.Encoder
	dec *json.Decoder
}

// startClient starts the client process; it ends with the benchmark.
func startClient(b *testing.B) *clientProc {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), clientEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = in.Close() // the process hangs up its streams and exits
		_ = cmd.Wait()
	})
	return &clientProc{enc: json.NewEncoder(in), dec: json.NewDecoder(out)}
}

// do runs cmd with op in the client process.
func (c *clientProc) do(op string, cmd clientCmd) (clientReply, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cmd.Op = op
	var rep clientReply
	if err := c.enc.Encode(cmd); err != nil {
		return rep, fmt.Errorf("send %s to the client process: %w", op, err)
	}
	if err := c.dec.Decode(&rep); err != nil {
		return rep, fmt.Errorf("read the client process's %s reply: %w", op, err)
	}
	if rep.Err != "" {
		return rep, fmt.Errorf("client %s %s: %s", op, cmd.URL, rep.Err)
	}
	return rep, nil
}

// stream runs one stream in the client process and returns the arrival
// time of each content.
func (c *clientProc) stream(b *testing.B, cmd clientCmd, want int) []time.Duration {
	b.Helper()
	rep, err := c.do("stream", cmd)
	if err != nil {
		b.Fatal(err)
	}
	if len(rep.Times) != want {
		b.Fatalf("%s: %d contents, want %d", cmd.URL, len(rep.Times), want)
	}
	return rep.Times
}

// openStream POSTs cmd and returns the 200 response as an event stream.
func openStream(ctx context.Context, c *http.Client, cmd clientCmd) (*eventStream, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cmd.URL, bytes.NewReader(cmd.Body))
	if err != nil {
		return nil, fmt.Errorf("new request %s: %w", cmd.URL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if cmd.Auth != "" {
		req.Header.Set("Authorization", "Bearer "+cmd.Auth)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", cmd.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		_ = resp.Body.Close()
		return nil, fmt.Errorf("POST %s: %d %s", cmd.URL, resp.StatusCode, msg)
	}
	return &eventStream{resp: resp, br: bufio.NewReader(resp.Body), direct: cmd.Direct}, nil
}

// eventStream reads the SSE lines of a response of agentchat (project
// events) or of the LLM (chat completion chunks, direct).
type eventStream struct {
	resp   *http.Response
	br     *bufio.Reader
	direct bool
}

// errEnd is the end of a stream (agentchat's done, the LLM's [DONE]).
var errEnd = errors.New("end of stream")

// next returns the payload of the next data line and the time it was
// read, before any decoding.
func (e *eventStream) next() ([]byte, time.Time, error) {
	for {
		line, err := e.br.ReadBytes('\n')
		at := time.Now()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, at, io.ErrUnexpectedEOF
			}
			return nil, at, fmt.Errorf("read stream: %w", err)
		}
		if p, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			return bytes.TrimSpace(p), at, nil
		}
	}
}

// nextContent returns the arrival time of the next non-empty content:
// agentchat's content event, or an LLM chunk with delta content. It
// returns errEnd at the end of the stream and an agentchat error event as
// an error.
func (e *eventStream) nextContent() (time.Time, error) {
	for {
		p, at, err := e.next()
		if err != nil {
			return at, err
		}
		if e.direct {
			if string(p) == "[DONE]" {
				return at, errEnd
			}
			var c struct {
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(p, &c); err != nil {
				return at, fmt.Errorf("decode chunk %s: %w", p, err)
			}
			if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
				return at, nil
			}
			continue
		}
		var ev struct {
			Type    string `json:"type"`
			Content string `json:"content"`
			Error   string `json:"error"`
		}
		if err := json.Unmarshal(p, &ev); err != nil {
			return at, fmt.Errorf("decode event %s: %w", p, err)
		}
		switch ev.Type {
		case "content":
			if ev.Content != "" {
				return at, nil
			}
		case "error":
			return at, fmt.Errorf("error event: %s", ev.Error)
		case "done":
			return at, errEnd
		}
	}
}

// contentTimes reads the stream to its end and returns the arrival time of
// every content after start. The body is read to EOF after the end of the
// stream, so that the connection is reused.
func (e *eventStream) contentTimes(start time.Time) ([]time.Duration, error) {
	defer e.close()
	var out []time.Duration
	for {
		at, err := e.nextContent()
		if errors.Is(err, errEnd) {
			if _, err := io.Copy(io.Discard, e.br); err != nil {
				return out, fmt.Errorf("read the end of the stream: %w", err)
			}
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, at.Sub(start))
	}
}

func (e *eventStream) close() { _ = e.resp.Body.Close() }

// quantile returns the q-quantile (nearest rank) of v, sorting v.
func quantile[T float64 | time.Duration](v []T, q float64) T {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	i := int(q*float64(len(v))+0.5) - 1
	return v[min(max(i, 0), len(v)-1)]
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// processCPU is the CPU time (user and system) this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ttftReply is the scripted answer of BenchmarkAddedTTFT.
const ttftReply = "R1 and R2 are linked through Ethernet0/0 on both sides."

// BenchmarkAddedTTFT measures the time to first token that agentchat adds
// over a direct call to the same scripted LLM. Each iteration times, from
// the client process, a direct streamed chat completion (request sent to
// first content chunk read) and POST /stream through agentchat (request
// sent to first content event read), in alternating order; the direct
// call replays the body agentchat sends upstream. added-ttft-µs is the
// median over iterations of the per-iteration difference (and its 90th
// percentile); direct-ttft-µs and ttft-µs are the medians of each path.
// "new-session" creates the session in the request (no session_id; the
// title call follows the answer); "new-session-client-id" too, with an id
// of the client's (as the GNS3 web UI makes); "continuing-session" posts
// to an existing session with a few earlier exchanges (a new session
// every 8 turns, made outside the timer). cpu-µs/op is the CPU time of
// this process (agentchat and the scripted LLM; the client is its own
// process) per iteration, the direct call's share of the LLM included.
func BenchmarkAddedTTFT(b *testing.B) {
	for _, name := range []string{"new-session", "new-session-client-id", "continuing-session"} {
		b.Run(name, func(b *testing.B) {
			measureAddedTTFT(b, newBenchStack(b, llmtest.Reply{Text: ttftReply}), name)
		})
	}
}

// measureAddedTTFT runs the iterations of BenchmarkAddedTTFT's case name
// on s, whose LLM streams ttftReply, and reports its figures.
func measureAddedTTFT(b *testing.B, s *benchStack, name string) {
	continuing, clientID := name == "continuing-session", name == "new-session-client-id"
	c := startClient(b)
	words := len(strings.Fields(ttftReply))
	cycle := &sessionCycle{s: s, turns: 8}
	s.turn(b, s.turn(b, ""))
	direct := s.directCmd(s.upstreamBody(b))
	// Warm up both paths of the client process.
	c.stream(b, direct, words)
	c.stream(b, s.chatCmd(cycle.next(b), "Hello?"), words)

	var directT, total, added []time.Duration
	cpu0 := processCPU(b)
	for i := 0; b.Loop(); i++ {
		sid := ""
		switch {
		case continuing:
			b.StopTimer()
			sid = cycle.next(b)
			b.StartTimer()
		case clientID:
			sid = uuid.NewString()
		}
		chat := s.chatCmd(sid, "Are R1 and R2 linked?")
		var d, t time.Duration
		if i%2 == 0 {
			d = c.stream(b, direct, words)[0]
			t = c.stream(b, chat, words)[0]
		} else {
			t = c.stream(b, chat, words)[0]
			d = c.stream(b, direct, words)[0]
		}
		directT, total, added = append(directT, d), append(total, t), append(added, t-d)
	}
	// The session cycle's setup outside the timer is counted too: it
	// is the same in both of two builds compared.
	b.ReportMetric(micros(processCPU(b)-cpu0)/float64(b.N), "cpu-µs/op")
	b.ReportMetric(micros(quantile(added, 0.5)), "added-ttft-µs")
	b.ReportMetric(micros(quantile(added, 0.9)), "added-ttft-p90-µs")
	b.ReportMetric(micros(quantile(directT, 0.5)), "direct-ttft-µs")
	b.ReportMetric(micros(quantile(total, 0.5)), "ttft-µs")
}

// BenchmarkInterTokenGaps checks that agentchat forwards each token as it
// comes (no buffering): the scripted LLM streams gapTokens content chunks
// gapDelay apart, and the client process records the arrival of each
// content chunk on a direct call and of each content event through
// agentchat, in the same iterations. The upstream gap is the median gap
// seen on the direct calls (upstream-gap-µs: gapDelay plus the fake's
// timer overshoot, which is systematic). gap-dev-µs, gap-dev-p99-µs and
// gap-dev-max-µs are the median, the 99th percentile and the largest
// |gap - upstream gap| over all consecutive content events through
// agentchat; the direct-gap-dev-* figures are the same on the direct
// calls, the jitter of the fake and the client alone, against which
// agentchat's figures are to be read. Buffering would show as gaps near 0 next to gaps of several
// upstream gaps.
func BenchmarkInterTokenGaps(b *testing.B) {
	const (
		gapTokens = 40
		gapDelay  = 5 * time.Millisecond
	)
	text := strings.TrimSpace(strings.Repeat("tok ", gapTokens))
	s := newBenchStack(b, llmtest.Reply{Text: text, ChunkDelay: gapDelay})
	c := startClient(b)
	cycle := &sessionCycle{s: s, turns: 8}
	s.turn(b, "")
	direct := s.directCmd(s.upstreamBody(b))

	gaps := func(times, into []time.Duration) []time.Duration {
		for i := 1; i < len(times); i++ {
			into = append(into, times[i]-times[i-1])
		}
		return into
	}
	var chatGaps, directGaps []time.Duration
	for b.Loop() {
		b.StopTimer()
		sid := cycle.next(b)
		b.StartTimer()
		directGaps = gaps(c.stream(b, direct, gapTokens), directGaps)
		chatGaps = gaps(c.stream(b, s.chatCmd(sid, "Count the tokens."), gapTokens), chatGaps)
	}
	upstream := quantile(slices.Clone(directGaps), 0.5)
	devs := func(gaps []time.Duration) []time.Duration {
		out := make([]time.Duration, len(gaps))
		for i, g := range gaps {
			out[i] = (g - upstream).Abs()
		}
		return out
	}
	chatDev, directDev := devs(chatGaps), devs(directGaps)
	b.ReportMetric(micros(upstream), "upstream-gap-µs")
	b.ReportMetric(micros(quantile(chatDev, 0.5)), "gap-dev-µs")
	b.ReportMetric(micros(quantile(chatDev, 0.99)), "gap-dev-p99-µs")
	b.ReportMetric(micros(quantile(chatDev, 1)), "gap-dev-max-µs")
	b.ReportMetric(micros(quantile(directDev, 0.5)), "direct-gap-dev-µs")
	b.ReportMetric(micros(quantile(directDev, 0.99)), "direct-gap-dev-p99-µs")
	b.ReportMetric(micros(quantile(directDev, 1)), "direct-gap-dev-max-µs")
}

// heapStreams is the number of concurrent streams of
// BenchmarkHeapPerStream.
const heapStreams = 500

// BenchmarkHeapPerStream measures the memory one idle open stream costs
// agentchat, with heapStreams streams open at once.
//
// Method: the clients live in the client process, so this process holds
// agentchat and the scripted LLM only. Each iteration measures, after
// runtime.GC, the live heap (MemStats.HeapAlloc), the goroutine stacks
// (StackInuse) and the goroutines twice:
//
//   - direct: heapStreams client streams straight from the LLM, which
//     sends its first content chunk and then holds the response open; the
//     growth over the settled process is the fake LLM's own cost;
//   - through agentchat: heapStreams clients POST /stream (new sessions)
//     and each receives its first content event while agentchat's
//     upstream call is held open the same way; the growth is agentchat +
//     the fake LLM.
//
// The direct calls replay the body agentchat sends upstream, so that the
// fake (which records every request) holds the same per request in both.
// agentchat's share is the difference: heap-B/stream, stack-B/stream and
// goroutines/stream; total-heap-B/stream and direct-heap-B/stream are the
// two raw growths per stream. Every stream is released (the clients hang
// up, which cancels the turns and their upstream calls) and the process
// settles before the next measurement. A first cycle, not measured, grows
// the pools (connections, SQLite readers) to their working size.
func BenchmarkHeapPerStream(b *testing.B) {
	// Per stream, in this process: the server end of the client
	// connection and both ends of agentchat's upstream connection.
	if err := ensureFDs(3*heapStreams + 512); err != nil {
		b.Skip(err)
	}
	s := newBenchStack(b, llmtest.Reply{Text: "holding the line", Hang: true, HangAfter: 2})
	c := startClient(b)
	idleGoroutines := runtime.NumGoroutine()

	chat := s.chatCmd("", "Hold on.")
	chat.N = heapStreams
	if _, err := c.do("open", chat); err != nil {
		b.Fatal(err)
	}
	release(b, c, idleGoroutines)
	direct := s.directCmd(s.upstreamBody(b))
	direct.N = heapStreams

	var share, stack, goroutines, total, directHeap []float64
	per := func(v int64) float64 { return float64(v) / heapStreams }
	for b.Loop() {
		d := measureStreams(b, c, direct, idleGoroutines)
		a := measureStreams(b, c, chat, idleGoroutines)
		share = append(share, per(a.heap-d.heap))
		stack = append(stack, per(a.stack-d.stack))
		goroutines = append(goroutines, per(a.goroutines-d.goroutines))
		total = append(total, per(a.heap))
		directHeap = append(directHeap, per(d.heap))
	}
	b.ReportMetric(quantile(share, 0.5), "heap-B/stream")
	b.ReportMetric(quantile(stack, 0.5), "stack-B/stream")
	b.ReportMetric(quantile(goroutines, 0.5), "goroutines/stream")
	b.ReportMetric(quantile(total, 0.5), "total-heap-B/stream")
	b.ReportMetric(quantile(directHeap, 0.5), "direct-heap-B/stream")
}

// growth is what heapStreams open streams add to the settled process.
type growth struct{ heap, stack, goroutines int64 }

// memNow returns the live heap and the stack memory after a collection.
func memNow() (heap, stack int64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc), int64(m.StackInuse)
}

// measureStreams has the client process open cmd.N streams with cmd,
// measures what they add to this process, and releases them.
func measureStreams(b *testing.B, c *clientProc, cmd clientCmd, idleGoroutines int) growth {
	b.Helper()
	settle()
	g0 := runtime.NumGoroutine()
	h0, s0 := memNow()
	if _, err := c.do("open", cmd); err != nil {
		b.Fatal(err)
	}
	settle()
	g1 := runtime.NumGoroutine()
	h1, s1 := memNow()
	release(b, c, idleGoroutines)
	return growth{heap: h1 - h0, stack: s1 - s0, goroutines: int64(g1 - g0)}
}

// settle waits until the goroutine count has been steady for 100ms (at
// most 5s): in-flight work (message appends, closing connections) is over.
func settle() {
	deadline := time.Now().Add(5 * time.Second)
	last, steady := -1, 0
	for steady < 5 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		n := runtime.NumGoroutine()
		if n == last {
			steady++
		} else {
			last, steady = n, 0
		}
	}
}

// release has the client process hang up the streams it holds and waits
// until the LLM has seen each upstream call end and the goroutines are
// back to (about) idle: the turns have persisted and released their
// leases.
func release(b *testing.B, c *clientProc, idleGoroutines int) {
	b.Helper()
	if _, err := c.do("close", clientCmd{}); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for runtime.NumGoroutine() > idleGoroutines+16 {
		if time.Now().After(deadline) {
			b.Fatalf("streams not released: %d goroutines (idle %d)", runtime.NumGoroutine(), idleGoroutines)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

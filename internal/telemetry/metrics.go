package telemetry

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Metric names, in Prometheus' translation of the OpenTelemetry GenAI
// semantic conventions where one exists (gen_ai.client.token.usage,
// gen_ai.client.operation.duration), agentchat_* for the server's own.
const (
	MetricTokenUsage       = "gen_ai_client_token_usage"
	MetricOperationSeconds = "gen_ai_client_operation_duration_seconds"
	MetricFirstTokenSecs   = "agentchat_llm_time_to_first_token_seconds"
	MetricTurnsStarted     = "agentchat_turns_started_total"
	MetricTurnsEnded       = "agentchat_turns_ended_total"
	MetricActiveStreams    = "agentchat_active_streams"
	MetricToolCalls        = "agentchat_tool_calls_total"
	MetricRefusals         = "agentchat_http_refusals_total"
)

// Bucket boundaries advised by the GenAI semantic conventions.
var (
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
)

// Turn outcomes counted by TurnEnded.
const (
	TurnCompleted = "completed"
	TurnFailed    = "failed"
	TurnAborted   = "aborted"
)

// Metrics counts what a process serves: LLM calls (tokens, duration, time
// to first token), turns, open streams, tool calls and refusals. It is
// safe for concurrent use. A nil *Metrics counts nothing, at the cost of a
// nil check, so that callers need no switch of their own.
type Metrics struct {
	mu       sync.Mutex
	families map[string]*family
}

// family is one metric: its kind, help and series by label set.
type family struct {
	kind, help string
	buckets    []float64
	series     map[string]*series
}

// series is one label set's value (counter, gauge) or histogram.
type series struct {
	labels string // rendered, e.g. `model="gpt-4o",type="input"`
	value  float64
	counts []uint64 // per bucket, not cumulative
	sum    float64
	count  uint64
}

// NewMetrics returns metrics with every family defined and no sample.
func NewMetrics() *Metrics {
	m := &Metrics{families: map[string]*family{}}
	m.define(MetricTokenUsage, "histogram", "Tokens used by LLM calls, by operation, model and token type (input, output).", tokenBuckets)
	m.define(MetricOperationSeconds, "histogram", "Duration of LLM calls in seconds, by operation, model and error type.", durationBuckets)
	m.define(MetricFirstTokenSecs, "histogram", "Time from an LLM request to its first streamed token, in seconds, by model.", durationBuckets)
	m.define(MetricTurnsStarted, "counter", "Agent turns started.", nil)
	m.define(MetricTurnsEnded, "counter", "Agent turns ended, by outcome (completed, failed, aborted).", nil)
	m.define(MetricActiveStreams, "gauge", "Server-sent event streams open now.", nil)
	m.define(MetricToolCalls, "counter", "Tool calls, by tool and status (ok, error).", nil)
	m.define(MetricRefusals, "counter", "Requests refused as busy (409) or over a limit (429), by route and status.", nil)
	return m
}

func (m *Metrics) define(name, kind, help string, buckets []float64) {
	m.families[name] = &family{kind: kind, help: help, buckets: buckets, series: map[string]*series{}}
}

// LLMCall records one LLM call: its input and output tokens (when the
// model reported usage), its duration, its time to first token (0: not
// streamed or no token) and its error type ("" when it succeeded).
func (m *Metrics) LLMCall(model string, input, output int, took, firstToken time.Duration, errorType string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	op := []string{"gen_ai_operation_name", "chat", "gen_ai_request_model", model}
	if input > 0 || output > 0 {
		m.observe(MetricTokenUsage, float64(input), append(slices.Clone(op), "gen_ai_token_type", "input")...)
		m.observe(MetricTokenUsage, float64(output), append(slices.Clone(op), "gen_ai_token_type", "output")...)
	}
	if errorType != "" {
		op = append(op, "error_type", errorType)
	}
	m.observe(MetricOperationSeconds, took.Seconds(), op...)
	if firstToken > 0 {
		m.observe(MetricFirstTokenSecs, firstToken.Seconds(), "gen_ai_request_model", model)
	}
}

// TurnStarted counts a turn that starts running.
func (m *Metrics) TurnStarted() { m.add(MetricTurnsStarted, 1) }

// TurnEnded counts a turn's end with its outcome (TurnCompleted,
// TurnFailed or TurnAborted).
func (m *Metrics) TurnEnded(outcome string) { m.add(MetricTurnsEnded, 1, "outcome", outcome) }

// StreamOpened and StreamClosed keep the count of open SSE streams.
func (m *Metrics) StreamOpened() { m.add(MetricActiveStreams, 1) }

// StreamClosed counts down an SSE stream StreamOpened counted.
func (m *Metrics) StreamClosed() { m.add(MetricActiveStreams, -1) }

// ToolCall counts one tool call of tool; failed tells its status.
func (m *Metrics) ToolCall(tool string, failed bool) {
	status := "ok"
	if failed {
		status = "error"
	}
	m.add(MetricToolCalls, 1, "gen_ai_tool_name", tool, "status", status)
}

// Refused counts a 409 or 429 answer of route (its pattern, never the raw
// path); other statuses are not counted.
func (m *Metrics) Refused(route string, status int) {
	if status != 409 && status != 429 {
		return
	}
	m.add(MetricRefusals, 1, "route", route, "status", strconv.Itoa(status))
}

func (m *Metrics) add(name string, v float64, labels ...string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.get(name, labels).value += v
	m.mu.Unlock()
}

// observe adds v to a histogram; m.mu is held.
func (m *Metrics) observe(name string, v float64, labels ...string) {
	s := m.get(name, labels)
	f := m.families[name]
	if s.counts == nil {
		s.counts = make([]uint64, len(f.buckets))
	}
	if i, _ := slices.BinarySearch(f.buckets, v); i < len(f.buckets) {
		s.counts[i]++
	}
	s.sum += v
	s.count++
}

// get returns the series of labels (name, value pairs), made on first use;
// m.mu is held.
func (m *Metrics) get(name string, labels []string) *series {
	f := m.families[name]
	var b strings.Builder
	for i := 0; i+1 < len(labels); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(labels[i])
		b.WriteString(`="`)
		b.WriteString(escapeLabel(labels[i+1]))
		b.WriteByte('"')
	}
	key := b.String()
	s := f.series[key]
	if s == nil {
		s = &series{labels: key}
		f.series[key] = s
	}
	return s
}

// escapeLabel escapes a label value as the Prometheus text format wants:
// backslash, double quote and line feed.
func escapeLabel(v string) string {
	if !strings.ContainsAny(v, "\\\"\n") {
		return v // the usual case: nothing to build
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}

// ContentType is the media type of WriteText's output.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// WriteText writes every metric in the Prometheus text exposition format
// (families and series in name order, histograms with cumulative buckets).
func (m *Metrics) WriteText(w io.Writer) error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	var b strings.Builder
	names := make([]string, 0, len(m.families))
	for n := range m.families {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		f := m.families[n]
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", n, f.help, n, f.kind)
		keys := make([]string, 0, len(f.series))
		for k := range f.series {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if len(keys) == 0 && f.kind != "histogram" {
			fmt.Fprintf(&b, "%s 0\n", n)
		}
		for _, k := range keys {
			s := f.series[k]
			if f.kind != "histogram" {
				fmt.Fprintf(&b, "%s%s %s\n", n, braces(s.labels, ""), formatFloat(s.value))
				continue
			}
			var cum uint64
			for i, le := range f.buckets {
				cum += s.counts[i]
				fmt.Fprintf(&b, "%s_bucket%s %d\n", n, braces(s.labels, `le="`+formatFloat(le)+`"`), cum)
			}
			fmt.Fprintf(&b, "%s_bucket%s %d\n", n, braces(s.labels, `le="+Inf"`), s.count)
			fmt.Fprintf(&b, "%s_sum%s %s\n%s_count%s %d\n", n, braces(s.labels, ""), formatFloat(s.sum), n, braces(s.labels, ""), s.count)
		}
	}
	m.mu.Unlock()
	_, err := io.WriteString(w, b.String())
	return err
}

// braces renders a label set with an extra label, "" when both are empty.
func braces(labels, extra string) string {
	switch {
	case labels == "" && extra == "":
		return ""
	case labels == "":
		return "{" + extra + "}"
	case extra == "":
		return "{" + labels + "}"
	}
	return "{" + labels + "," + extra + "}"
}

func formatFloat(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

package telemetry_test

import (
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"agentchat/internal/httpapi"
	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/llm/llmtrace"
	"agentchat/internal/telemetry"
	"agentchat/internal/telemetry/telemetrytest"
)

// attr is telemetrytest.Attr.
var attr = telemetrytest.Attr

func byName(spans []*tracepb.Span, name string) *tracepb.Span {
	for _, s := range spans {
		if s.Name == name {
			return s
		}
	}
	return nil
}

const (
	clientTraceID = "0af7651916cd43dd8448eb211c80319c"
	clientSpanID  = "b7ad6b7169203331"
	apiKey        = "sk-very-secret-llm-key"
	gns3Token     = "gns3-user-token-abcdef"
	userSecret    = "my password is hunter2"
)

// setup starts the receiver, the scripted LLM and a router whose chat
// route streams one LLM call through the traced resolver.
func setup(t *testing.T, capture string) (*telemetrytest.Receiver, *llmtest.Server, *telemetry.Provider, http.Handler) {
	rc := telemetrytest.NewReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rc.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_TRACES_SAMPLER", "")
	t.Setenv(telemetry.CaptureContentEnv, capture)
	p, err := telemetry.New(context.Background(), os.Getenv)
	if err != nil || p == nil {
		t.Fatalf("New = %v, %v", p, err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })

	srv := llmtest.NewServer(t)
	srv.SetDefault(llmtest.Reply{Text: "the answer", Model: "scripted-model-2", Usage: &llmtest.Usage{PromptTokens: 11, CompletionTokens: 7}})
	c, err := llm.NewClient(llm.Config{APIKey: apiKey, BaseURL: srv.BaseURL(), Model: "scripted-model"}, llm.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	res := llmtrace.Resolver(llm.NewStaticResolver(c), p, nil)
	chat := httpapi.Route{Method: http.MethodPost, Path: "/v3/projects/{project_id}/chat/stream", Public: true, Style: httpapi.StyleGNS3,
		Handler: func(w http.ResponseWriter, r *http.Request) {
			rs, err := res.Resolve(r.Context(), "u1")
			if err != nil {
				httpapi.Error(w, r, http.StatusServiceUnavailable, "no llm")
				return
			}
			out, err := rs.Client.Stream(r.Context(), llm.Request{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: userSecret}}}, nil)
			if err != nil {
				httpapi.Error(w, r, http.StatusBadGateway, "llm failed")
				return
			}
			_, _ = io.WriteString(w, out.Content)
		}}
	h := httpapi.NewRouter(httpapi.Deps{Logger: slog.New(slog.DiscardHandler), Tracer: p.Tracer()}, chat)
	return rc, srv, p, h
}

func do(t *testing.T, h http.Handler, method, path string) int {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(`{}`))
	req.Header.Set("traceparent", "00-"+clientTraceID+"-"+clientSpanID+"-01")
	req.Header.Set("Authorization", "Bearer "+gns3Token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

func TestTraceOfAChatRequest(t *testing.T) {
	rc, srv, p, h := setup(t, "")
	if code := do(t, h, http.MethodPost, "/v3/projects/4f8c-1234-project/chat/stream"); code != http.StatusOK {
		t.Fatalf("chat status %d", code)
	}
	if code := do(t, h, http.MethodGet, "/v3/projects/4f8c-1234-project/nothing"); code != http.StatusNotFound {
		t.Fatalf("unknown path status %d", code)
	}
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := rc.Spans()
	for _, s := range spans {
		if strings.Contains(s.Name, "4f8c") {
			t.Errorf("span name %q carries an id", s.Name)
		}
	}
	server := byName(spans, "POST /v3/projects/{project_id}/chat/stream")
	if server == nil {
		t.Fatalf("no server span named by the route template among %v", names(spans))
	}
	if got := hex.EncodeToString(server.TraceId); got != clientTraceID {
		t.Errorf("server span trace %s, want the client's %s", got, clientTraceID)
	}
	if got := hex.EncodeToString(server.ParentSpanId); got != clientSpanID {
		t.Errorf("server span parent %s, want the client's %s", got, clientSpanID)
	}
	if server.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("server span kind %v", server.Kind)
	}
	wantAttrs(t, server, map[string]any{"http.request.method": "POST", "http.route": "/v3/projects/{project_id}/chat/stream", "http.response.status_code": int64(200)})
	if nf := byName(spans, "GET"); nf == nil {
		t.Errorf("no span named GET for the unmatched path among %v", names(spans))
	} else {
		wantAttrs(t, nf, map[string]any{"http.response.status_code": int64(404)})
	}

	call := byName(spans, "chat scripted-model")
	if call == nil {
		t.Fatalf("no LLM span among %v", names(spans))
	}
	if string(call.ParentSpanId) != string(server.SpanId) || string(call.TraceId) != string(server.TraceId) {
		t.Error("the LLM span is not a child of the server span")
	}
	if call.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("LLM span kind %v", call.Kind)
	}
	wantAttrs(t, call, map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.request.model": "scripted-model", "gen_ai.response.model": "scripted-model-2",
		"gen_ai.usage.input_tokens": int64(11), "gen_ai.usage.output_tokens": int64(7),
	})
	if fr := attr(call, "gen_ai.response.finish_reasons"); fr == nil || len(fr.GetArrayValue().GetValues()) != 1 || fr.GetArrayValue().Values[0].GetStringValue() != "stop" {
		t.Errorf("finish reasons %v", fr)
	}
	if len(call.Events) == 0 || call.Events[0].Name != "gen_ai.first_token" {
		t.Errorf("no first token event: %v", call.Events)
	}

	// The LLM request carries the LLM span as its parent.
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d LLM requests", len(reqs))
	}
	want := "00-" + clientTraceID + "-" + hex.EncodeToString(call.SpanId) + "-01"
	if got := reqs[0].Header.Get("traceparent"); got != want {
		t.Errorf("LLM request traceparent %q, want %q", got, want)
	}

	if v := rc.Resource("service.name"); v != "agentchat" {
		t.Errorf("service.name %q", v)
	}
	noneContains(t, spans, apiKey, gns3Token, "Bearer", "hunter2", "the answer")
}

func TestCaptureContent(t *testing.T) {
	rc, _, p, h := setup(t, "true")
	if code := do(t, h, http.MethodPost, "/v3/projects/p1/chat/stream"); code != http.StatusOK {
		t.Fatalf("chat status %d", code)
	}
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := rc.Spans()
	call := byName(spans, "chat scripted-model")
	if call == nil {
		t.Fatalf("no LLM span among %v", names(spans))
	}
	if in := attr(call, "gen_ai.input.messages").GetStringValue(); !strings.Contains(in, "hunter2") {
		t.Errorf("input messages %q without the prompt", in)
	}
	if out := attr(call, "gen_ai.output.messages").GetStringValue(); !strings.Contains(out, "the answer") {
		t.Errorf("output messages %q without the completion", out)
	}
	noneContains(t, spans, apiKey, gns3Token, "Bearer")
}

func TestOffIsNil(t *testing.T) {
	env := map[string]string{}
	p, err := telemetry.New(context.Background(), func(k string) string { return env[k] })
	if p != nil || err != nil {
		t.Fatalf("New without endpoint = %v, %v", p, err)
	}
	if p.Tracer() != nil || p.Flush(context.Background()) != nil || p.Shutdown(context.Background()) != nil {
		t.Error("a nil provider is not off")
	}
	r := llm.NewStaticResolver(nil)
	if llmtrace.Resolver(r, nil, nil) != r {
		t.Error("LLMResolver wraps with tracing off")
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		if !telemetry.Enabled(func(s string) string { return map[string]string{k: "http://collector:4318"}[s] }) {
			t.Errorf("%s does not enable tracing", k)
		}
	}
}

func wantAttrs(t *testing.T, s *tracepb.Span, want map[string]any) {
	t.Helper()
	for k, w := range want {
		v := attr(s, k)
		var got any
		switch w.(type) {
		case string:
			got = v.GetStringValue()
		case int64:
			got = v.GetIntValue()
		}
		if v == nil || got != w {
			t.Errorf("span %s: %s = %v, want %v", s.Name, k, v, w)
		}
	}
}

func noneContains(t *testing.T, spans []*tracepb.Span, secrets ...string) {
	t.Helper()
	for _, s := range spans {
		text := telemetrytest.Text(s)
		for _, sec := range secrets {
			if strings.Contains(text, sec) {
				t.Errorf("span %s exports %q", s.Name, sec)
			}
		}
	}
}

func names(spans []*tracepb.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

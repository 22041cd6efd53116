package gateway_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"agentchat/internal/agent"
	"agentchat/internal/httpapi/gateway"
	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"
)

// ctxMark marks the context of a request; the gateway's logs must carry it.
type ctxMark struct{}

// markRecorder is a slog handler that keeps the message and the ctxMark
// value of the context of every record.
type markRecorder struct {
	mu    *sync.Mutex
	marks *[]string
}

func (m markRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (m markRecorder) Handle(ctx context.Context, r slog.Record) error {
	mark, _ := ctx.Value(ctxMark{}).(string)
	m.mu.Lock()
	defer m.mu.Unlock()
	*m.marks = append(*m.marks, r.Message+"@"+mark)
	return nil
}

func (m markRecorder) WithAttrs([]slog.Attr) slog.Handler { return m }
func (m markRecorder) WithGroup(string) slog.Handler      { return m }

// TestLogsCarryTheRequestContext: the gateway logs with the request's
// context, so that a context-aware handler adds the request id.
func TestLogsCarryTheRequestContext(t *testing.T) {
	srv := llmtest.NewServer(t)
	c, err := llm.NewClient(llm.Config{APIKey: llmKey, BaseURL: srv.BaseURL(), Model: "test-model", MaxRetries: -1}, llm.WithLogger(discard))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		client llm.Client
		status int
		log    string
	}{
		{"upstream 500", c, http.StatusBadGateway, "gateway run failed"},
		{"panic", panicClient{before: true}, http.StatusInternalServerError, "gateway handler panicked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := agent.NewRegistry("naked")
			reg.Register(&agent.Agent{ID: "naked"})
			rt := agent.NewRuntime(agent.Options{Agents: reg, LLM: llm.NewStaticResolver(tc.client), Logger: discard})
			rec := markRecorder{mu: &sync.Mutex{}, marks: &[]string{}}
			gw := gateway.New(gateway.Options{Runtime: rt, Agents: reg, Logger: slog.New(rec)})
			var h http.HandlerFunc
			for _, r := range gw.Routes() {
				if r.Path == gateway.PathCompletions {
					h = r.Handler
				}
			}
			srv.Enqueue(llmtest.Reply{Status: 500})
			ctx := context.WithValue(context.Background(), ctxMark{}, "req-1")
			req := httptest.NewRequestWithContext(ctx, http.MethodPost, gateway.PathCompletions,
				strings.NewReader(`{"model":"naked","messages":[{"role":"user","content":"hi"}]}`))
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			h(w, req)
			if w.Code != tc.status {
				t.Fatalf("status %d %s", w.Code, w.Body)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if got := *rec.marks; len(got) != 1 || got[0] != tc.log+"@req-1" {
				t.Fatalf("logs = %q", got)
			}
		})
	}
}

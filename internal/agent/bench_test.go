package agent

import (
	"context"
	"testing"
	"time"

	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"

	openai "github.com/sashabaranov/go-openai"
)

// BenchmarkTurnOverhead measures a full short turn (StartTurn + Run: lease,
// history, user and assistant appends, statistics, release) against the
// scripted LLM and a SQLite file, beside the bare LLM call it wraps: the
// difference is what the runtime adds. Each turn runs on a fresh session
// with one earlier exchange and a user title (no title call). The
// ttft-ns/op metric is the time from the call to the first content delta.
func BenchmarkTurnOverhead(b *testing.B) {
	h := newHarness(b, nil)
	h.llm.SetDefault(llmtest.Reply{Text: "A short answer of a few words."})
	ctx := context.Background()

	b.Run("turn", func(b *testing.B) {
		b.ReportAllocs()
		var ttft time.Duration
		for b.Loop() {
			b.StopTimer()
			k := newKey()
			if err := h.st.CreateSession(ctx, &store.Session{ThreadID: k.ThreadID, UserID: k.UserID, ProjectID: k.ProjectID, Title: "Bench"}); err != nil {
				b.Fatal(err)
			}
			if _, err := h.st.RenameSession(ctx, k, "Bench"); err != nil {
				b.Fatal(err)
			}
			if _, err := h.st.AppendMessages(ctx, k, []store.Message{
				{Role: store.RoleUser, Content: "Earlier question"}, {Role: store.RoleAssistant, Content: "Earlier answer"},
			}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()

			start := time.Now()
			tr, err := h.rt.StartTurn(ctx, TurnRequest{Key: k, AgentID: "tester", Message: "Hello"})
			if err != nil {
				b.Fatal(err)
			}
			var first time.Duration
			tr.Run(ctx, func(e Event) {
				switch {
				case e.Type == EventError:
					b.Errorf("turn failed: %s", e.Error)
				case e.Type == EventContent && first == 0:
					first = time.Since(start)
				}
			})
			if first == 0 {
				b.Fatal("no content")
			}
			ttft += first
		}
		b.ReportMetric(float64(ttft.Nanoseconds())/float64(b.N), "ttft-ns/op")
	})

	b.Run("llm-only", func(b *testing.B) {
		b.ReportAllocs()
		c := newClient(b, h.llm.BaseURL(), 0)
		req := llm.Request{Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: "You are a test agent.\n\nUse the test tools."},
			{Role: openai.ChatMessageRoleUser, Content: "Earlier question"},
			{Role: openai.ChatMessageRoleAssistant, Content: "Earlier answer"},
			{Role: openai.ChatMessageRoleUser, Content: "Hello"},
		}}
		var ttft time.Duration
		for b.Loop() {
			start := time.Now()
			var first time.Duration
			if _, err := c.Stream(ctx, req, func(d llm.Delta) error {
				if d.Content != "" && first == 0 {
					first = time.Since(start)
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			ttft += first
		}
		b.ReportMetric(float64(ttft.Nanoseconds())/float64(b.N), "ttft-ns/op")
	})
}

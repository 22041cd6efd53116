package llm_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"
)

// tokens returns n content chunks "t0", " t1", ...
func tokens(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(" t%d", i)
	}
	out[0] = strings.TrimSpace(out[0])
	return out
}

// TestStreamBounds is the scaled-down acceptance of the call bounds: the
// first bound (LLM_TIMEOUT_SECONDS) holds a stream until its first token
// and a non-streamed call as a whole, the idle bound
// (LLM_IDLE_TIMEOUT_SECONDS) the silence between chunks after it, and the
// caller's context (the turn deadline) the whole call.
func TestStreamBounds(t *testing.T) {
	const bound = 300 * time.Millisecond
	tests := []struct {
		name string
		// replies are served in order (one per attempt).
		replies []llmtest.Reply
		// first and idle are the bounds (0: bound).
		first, idle time.Duration
		// deadline bounds the caller's context (0: none).
		deadline time.Duration
		// consume is how long onDelta takes per delta.
		consume time.Duration
		// complete runs a non-streamed call.
		complete bool
		// want is the content delivered (streamed or answered).
		want string
		// wantErr is a fragment of the user message, "" for success.
		wantErr string
		// notErr must not be in the user message.
		notErr   string
		requests int
	}{
		{
			name:    "a token every 100ms for 2s completes",
			replies: []llmtest.Reply{{Chunks: tokens(20), ChunkDelay: 100 * time.Millisecond}},
			want:    strings.Join(tokens(20), ""), requests: 1,
		},
		{
			name:    "gaps longer than the first bound but shorter than the idle bound",
			replies: []llmtest.Reply{{Chunks: tokens(3), ChunkDelay: 400 * time.Millisecond}},
			first:   600 * time.Millisecond, idle: time.Second,
			want: strings.Join(tokens(3), ""), requests: 1,
		},
		{
			name:    "two tokens then silence hits the idle bound",
			replies: []llmtest.Reply{{Chunks: []string{"one", " two", " three"}, Hang: true, HangAfter: 3}},
			want:    "one two",
			wantErr: "it sent nothing for 300ms (LLM_IDLE_TIMEOUT_SECONDS)", notErr: "(LLM_TIMEOUT_SECONDS)",
			requests: 1,
		},
		{
			name:    "nothing at all hits the first bound",
			replies: []llmtest.Reply{{Hang: true}},
			wantErr: "no first token within 300ms (LLM_TIMEOUT_SECONDS)", notErr: "IDLE",
			requests: 1,
		},
		{
			name:    "headers and a role chunk are not a first token",
			replies: []llmtest.Reply{{Text: "late", Hang: true, HangAfter: 1}},
			idle:    10 * time.Second,
			wantErr: "no first token within 300ms (LLM_TIMEOUT_SECONDS)", notErr: "IDLE",
			requests: 1,
		},
		{
			name:    "a slow consumer is not a silent model",
			replies: []llmtest.Reply{{Chunks: tokens(4), ChunkDelay: 50 * time.Millisecond}},
			consume: 400 * time.Millisecond,
			want:    strings.Join(tokens(4), ""), requests: 1,
		},
		{
			name: "a failure before the first token is retried within the first bound",
			replies: []llmtest.Reply{{Status: 500},
				{Chunks: tokens(10), ChunkDelay: 100 * time.Millisecond}},
			want: strings.Join(tokens(10), ""), requests: 2,
		},
		{
			name:     "the caller's deadline stays the overall bound",
			replies:  []llmtest.Reply{{Chunks: tokens(40), ChunkDelay: 100 * time.Millisecond}},
			deadline: 800 * time.Millisecond,
			wantErr:  "did not answer in time", notErr: "SECONDS",
			requests: 1,
		},
		{
			name:     "non-streamed: an answer within the bound",
			replies:  []llmtest.Reply{{Text: "quick answer", Delay: 50 * time.Millisecond}},
			complete: true, want: "quick answer", requests: 1,
		},
		{
			name:     "non-streamed: the bound holds the whole call",
			replies:  []llmtest.Reply{{Text: "too slow", Delay: 2 * time.Second}},
			complete: true,
			wantErr:  "no answer within 300ms (LLM_TIMEOUT_SECONDS)", notErr: "IDLE",
			requests: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Enqueue(tt.replies...)
			c := newClient(t, srv.BaseURL(), func(cfg *llm.Config) {
				cfg.CallTimeout, cfg.IdleTimeout = bound, bound
				if tt.first > 0 {
					cfg.CallTimeout = tt.first
				}
				if tt.idle > 0 {
					cfg.IdleTimeout = tt.idle
				}
			})
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			var got strings.Builder
			var res *llm.Result
			var err error
			if tt.complete {
				res, err = c.Complete(ctx, userMsg("x"))
				if res != nil {
					got.WriteString(res.Content)
				}
			} else {
				res, err = c.Stream(ctx, userMsg("x"), func(d llm.Delta) error {
					got.WriteString(d.Content)
					time.Sleep(tt.consume)
					return nil
				})
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("error %v (%s)", err, llm.UserMessage(err))
				}
				if got.String() != tt.want || res.Content != tt.want {
					t.Fatalf("delivered %q, result %q, want %q", got.String(), res.Content, tt.want)
				}
			} else {
				le := asLLMError(t, err)
				msg := llm.UserMessage(err)
				if le.Kind != llm.KindTimeout || !errors.Is(err, context.DeadlineExceeded) || le.Retryable() {
					t.Fatalf("error %+v (%s)", le, msg)
				}
				if !strings.Contains(msg, tt.wantErr) || (tt.notErr != "" && strings.Contains(msg, tt.notErr)) {
					t.Fatalf("user message %q, want it to contain %q and not %q", msg, tt.wantErr, tt.notErr)
				}
				if tt.want != "" && (got.String() != tt.want || res.Content != tt.want) {
					t.Fatalf("delivered %q, partial result %q, want %q", got.String(), res.Content, tt.want)
				}
				waitDisconnect(t, srv)
			}
			if n := len(srv.Requests()); n != tt.requests {
				t.Fatalf("%d requests, want %d", n, tt.requests)
			}
		})
	}
}

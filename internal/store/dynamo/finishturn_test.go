package dynamo

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"agentchat/internal/store"
)

// FinishTurn ends a turn in three requests (reservation, the answer's
// item, one update that commits it, counts the turn and releases the
// lease) and falls back to the separate writes, storing and counting
// everything once, when the one update cannot apply: another turn's lease,
// an earlier append still to commit, a stray item at the answer's seq, or
// an answer lost on its way back.
func TestFinishTurnPaths(t *testing.T) {
	oneWrite := []string{"UpdateItem", "PutItem", "UpdateItem"}
	cases := []struct {
		name    string
		prepare func(t *testing.T, s *Store, k store.Key)
		// lose drops the answer to the update that commits the answer.
		lose       bool
		wantOps    []string
		pinned     bool
		leaseStays bool // another turn holds the lease at the end
		// wantCount is the message count after the turn when not 2.
		wantCount int64
	}{
		{name: "one write", wantOps: oneWrite},
		{name: "pinned session", pinned: true, wantOps: oneWrite, prepare: func(t *testing.T, s *Store, k store.Key) {
			if _, err := s.SetPinned(t.Context(), k, true); err != nil {
				t.Fatal(err)
			}
		}},
		// B's lease counted the question (the reconciliation of a cut
		// turn's messages), and A's turn counts it again. B's lease
		// reserved a seq in this process, which A's end voids first.
		{name: "lease taken by another turn", leaseStays: true, wantCount: 3, wantOps: append([]string{"UpdateItem"}, oneWrite...), prepare: func(t *testing.T, s *Store, k store.Key) {
			if err := s.ReleaseLease(t.Context(), k, "A"); err != nil {
				t.Fatal(err)
			}
			if err := s.AcquireLease(t.Context(), k, "B", time.Hour); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "earlier append pending", prepare: func(t *testing.T, s *Store, k store.Key) { reserve(t, s, k, 1) }},
		{name: "stray item at the answer's seq", prepare: func(t *testing.T, s *Store, k store.Key) {
			c, err := s.readCommit(t.Context(), k)
			if err != nil {
				t.Fatal(err)
			}
			putRaw(t, s, k, c.seq+1, "stray")
		}},
		{name: "answer to the one write lost", lose: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var (
				mu   sync.Mutex
				ops  []string
				lose atomic.Bool
			)
			errLost := errors.New("answer lost by the test")
			s := newAnswerStore(t, "", func(op string, _ any) error {
				mu.Lock()
				defer mu.Unlock()
				ops = append(ops, op)
				return nil
			}, func(op string, in, _ any, err error) error {
				u, ok := in.(*dynamodb.UpdateItemInput)
				if err == nil && ok && u.UpdateExpression != nil && strings.Contains(*u.UpdateExpression, "REMOVE") &&
					lose.CompareAndSwap(true, false) {
					return errLost
				}
				return nil
			})
			s.stallTimeout = 100 * time.Millisecond
			s.log = slog.New(slog.DiscardHandler) // a skipped append is logged as a warning
			ctx := t.Context()
			k := createSession(t, s)
			if err := s.AcquireLease(ctx, k, "A", time.Hour); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "question"}}); err != nil {
				t.Fatal(err)
			}
			if tc.prepare != nil {
				tc.prepare(t, s, k)
			}
			lose.Store(tc.lose)
			mu.Lock()
			ops = nil
			mu.Unlock()

			answer := store.Message{Role: store.RoleAssistant, Content: "answer", CreatedAt: time.Now().UTC()}
			out, err := s.FinishTurn(ctx, k, "A", []store.Message{answer}, store.TurnStats{
				Turns: 1, Messages: 2, LLMCalls: 1, InputTokens: 10, OutputTokens: 4,
				ToolCalls: map[string]int64{"ping": 1}, LastMessageAt: answer.CreatedAt,
			})
			if err != nil {
				t.Fatalf("FinishTurn: %v", err)
			}
			mu.Lock()
			got := slices.Clone(ops)
			mu.Unlock()
			if tc.wantOps != nil && !slices.Equal(got, tc.wantOps) {
				t.Errorf("requests %v, want %v", got, tc.wantOps)
			}
			if tc.lose && lose.Load() {
				t.Error("the answer to lose was never sent")
			}
			if len(out) != 1 || out[0].Seq == 0 || out[0].ID == "" {
				t.Fatalf("FinishTurn returned %+v", out)
			}
			list, err := s.ListMessages(ctx, k, 0)
			if err != nil {
				t.Fatal(err)
			}
			if c := contents(list); !slices.Equal(c, []string{"question", "answer"}) || list[1].Seq != out[0].Seq {
				t.Errorf("history %q (answer at %d, returned %d), want question, answer", c, list[len(list)-1].Seq, out[0].Seq)
			}
			sess, err := s.GetSession(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantCount == 0 {
				tc.wantCount = 2
			}
			if sess.Stats.Turns != 1 || sess.MessageCount != tc.wantCount || sess.LLMCallsCount != 1 || sess.TotalTokens != 14 ||
				sess.Stats.ToolCalls["ping"] != 1 || sess.Pinned != tc.pinned || !sess.LastMessageAt.Equal(answer.CreatedAt) {
				t.Errorf("session after FinishTurn: %+v", sess)
			}
			if n, _ := committedCount(t, s, k); n != 2 {
				t.Errorf("msg_committed %d, want 2", n)
			}
			meta, err := s.readMeta(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if want := sessionGSI1SK(k.UserID, tc.pinned, sess.UpdatedAt, k.ThreadID); getS(meta, attrGSI1SK) != want {
				t.Errorf("GSI1SK %q, want %q", getS(meta, attrGSI1SK), want)
			}
			err = s.AcquireLease(ctx, k, "C", time.Hour)
			switch {
			case tc.leaseStays && !errors.Is(err, store.ErrLeaseHeld):
				t.Errorf("AcquireLease(C) while B holds the lease: %v, want ErrLeaseHeld", err)
			case !tc.leaseStays && err != nil:
				t.Errorf("AcquireLease(C) after FinishTurn: %v", err)
			}
		})
	}
}

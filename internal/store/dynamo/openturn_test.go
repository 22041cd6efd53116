package dynamo

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"agentchat/internal/store"
)

// TestOpenTurnOneRoundTrip: OpenTurn's lease and the query of the
// history go at once (the lease waits here until the query has started,
// which a lease taken first would never see: a hang detector, not a
// timing assertion), and nothing else is read: no session read, no read
// of the commit state.
func TestOpenTurnOneRoundTrip(t *testing.T) {
	var (
		armed        atomic.Bool
		queryStarted = make(chan struct{})
		once         sync.Once
		mu           sync.Mutex
		ops          []string
	)
	s := newObservedStore(t, "", func(op string, in any) error {
		if !armed.Load() {
			return nil
		}
		mu.Lock()
		ops = append(ops, op)
		mu.Unlock()
		switch in := in.(type) {
		case *dynamodb.QueryInput:
			if isMessageQuery(in) {
				once.Do(func() { close(queryStarted) })
			}
		case *dynamodb.UpdateItemInput:
			select {
			case <-queryStarted:
			case <-time.After(20 * time.Second):
				return errors.New("the history was not queried beside the lease")
			}
		}
		return nil
	}, nil)
	k := createSession(t, s)
	for _, c := range []string{"q1", "a1"} {
		mustAppend(t, s, k, store.Message{Role: store.RoleUser, Content: c})
	}
	armed.Store(true)
	sess, hist, err := s.OpenTurn(t.Context(), k, "turn", time.Minute, 0)
	armed.Store(false)
	if err != nil {
		t.Fatal(err)
	}
	if sess.ThreadID != k.ThreadID || !slices.Equal(contents(hist), []string{"q1", "a1"}) {
		t.Fatalf("OpenTurn = %s, %q", sess.ThreadID, contents(hist))
	}
	slices.Sort(ops)
	if !slices.Equal(ops, []string{"Query", "UpdateItem"}) {
		t.Errorf("OpenTurn made %v, want one Query and one UpdateItem", ops)
	}
	if err := s.AcquireLease(t.Context(), k, "other", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Errorf("lease after OpenTurn: %v, want it held", err)
	}
}

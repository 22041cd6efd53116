package dynamo

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/uuid"

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

// TestOpenTurnGuessesMissing: an opening that may create its session
// (store.OpenTurn with NewSession, as every chat request with a session id
// is) reads no session beside the lease (OpenTurnOrGuess): an existing
// session opens with the lease and the history query alone, a missing one
// is created after them without the meta item's read, and a wrong guess
// (a session without messages whose lease another turn holds) ends as the
// strict opening would: the creation finds the id taken, and the rejoin
// reports the held lease, with the session left as it was.
func TestOpenTurnGuessesMissing(t *testing.T) {
	var (
		armed atomic.Bool
		mu    sync.Mutex
		ops   []string
	)
	s := newObservedStore(t, "", func(op string, in any) error {
		if armed.Load() {
			mu.Lock()
			ops = append(ops, op)
			mu.Unlock()
		}
		return nil
	}, nil)
	open := func(k store.Key, title string) (*store.OpenedTurn, []string, error) {
		t.Helper()
		mu.Lock()
		ops = nil
		mu.Unlock()
		armed.Store(true)
		o, err := store.OpenTurn(t.Context(), s, store.TurnOpening{Key: k, Owner: "turn", TTL: time.Minute,
			NewSession: func() (*store.Session, error) {
				return &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID, Title: title}, nil
			}})
		armed.Store(false)
		mu.Lock()
		defer mu.Unlock()
		return o, slices.Clone(ops), err
	}

	t.Run("existing", func(t *testing.T) {
		k := createSession(t, s)
		mustAppend(t, s, k, store.Message{Role: store.RoleUser, Content: "q1"}, store.Message{Role: store.RoleAssistant, Content: "a1"})
		o, ops, err := open(k, "new")
		if err != nil {
			t.Fatal(err)
		}
		hist, _ := o.History(t.Context())
		if o.Created || !slices.Equal(contents(hist), []string{"q1", "a1"}) {
			t.Errorf("opened created=%v with %q", o.Created, contents(hist))
		}
		slices.Sort(ops)
		if !slices.Equal(ops, []string{"Query", "UpdateItem"}) {
			t.Errorf("the opening made %v, want one Query and one UpdateItem", ops)
		}
	})

	t.Run("missing", func(t *testing.T) {
		k := store.Key{ProjectID: "p", UserID: "alice", ThreadID: uuid.NewString()}
		o, ops, err := open(k, "made here")
		if err != nil {
			t.Fatal(err)
		}
		if !o.Created || o.Session.Title != "made here" {
			t.Errorf("opened created=%v, title %q", o.Created, o.Session.Title)
		}
		if slices.Contains(ops, "GetItem") || len(ops) > 3 {
			t.Errorf("the opening made %v, want the lease, the query and the creation", ops)
		}
		if err := s.AcquireLease(t.Context(), k, "other", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
			t.Errorf("lease after the creation: %v, want it held", err)
		}
	})

	t.Run("wrong guess", func(t *testing.T) {
		k := createSession(t, s)
		if err := s.AcquireLease(t.Context(), k, "other", time.Minute); err != nil {
			t.Fatal(err)
		}
		_, _, err := open(k, "must not be written")
		var held *store.LeaseHeldError
		if !errors.As(err, &held) || held.Owner != "other" {
			t.Fatalf("opening a session whose lease is held: %v, want the held lease", err)
		}
		got, err := s.GetSession(t.Context(), k)
		if err != nil || got.Title == "must not be written" {
			t.Errorf("session after the refused opening: %+v, %v", got, err)
		}
	})
}

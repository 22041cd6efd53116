package turnlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/store"
	"agentchat/internal/store/sqlite"
)

// counting counts the batches appended through it.
type counting struct {
	store.Store
	mu      sync.Mutex
	batches []store.TurnEvents
}

func (c *counting) AppendTurnEvents(ctx context.Context, k store.Key, ev store.TurnEvents, keep time.Duration) error {
	c.mu.Lock()
	c.batches = append(c.batches, store.TurnEvents{First: ev.First, Events: make([][]byte, len(ev.Events)), Final: ev.Final})
	c.mu.Unlock()
	return c.Store.AppendTurnEvents(ctx, k, ev, keep)
}

func (c *counting) list() []store.TurnEvents {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]store.TurnEvents(nil), c.batches...)
}

// newSession opens a SQLite store on a file with one session and returns
// it and the session's key.
func newSession(t *testing.T) (*counting, store.Key) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "chat.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	k := store.Key{ProjectID: uuid.NewString(), UserID: "alice", ThreadID: uuid.NewString()}
	if err := st.CreateSession(context.Background(), &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
		t.Fatal(err)
	}
	return &counting{Store: st}, k
}

func payload(i int) []byte { return fmt.Appendf(nil, `{"type":"content","content":"tok %d"}`, i) }

// readAll reads the whole log of turn.
func readAll(t *testing.T, st store.TurnLogs, k store.Key, turn string) ([][]byte, bool) {
	t.Helper()
	var out [][]byte
	for {
		p, err := st.ReadTurnEvents(context.Background(), k, turn, int64(len(out)))
		if err != nil {
			t.Fatal(err)
		}
		if p.Turn != turn {
			t.Fatalf("read turn %q, want %q", p.Turn, turn)
		}
		out = append(out, p.Events...)
		if len(p.Events) == 0 || p.Final {
			return out, p.Final
		}
	}
}

func TestRecorderBatches(t *testing.T) {
	cases := []struct {
		name   string
		events [][]byte
		o      Options
		// batches wanted after the marker (sizes); the last is final.
		want []int
	}{
		{"200 tokens", seq(200, payload), Options{FlushEvery: time.Hour}, []int{64, 64, 64, 8}},
		{"one event", seq(1, payload), Options{FlushEvery: time.Hour}, []int{1}},
		{"byte bound", seq(5, func(int) []byte { return bytes.Repeat([]byte("x"), 100) }), Options{FlushEvery: time.Hour, MaxBytes: 250}, []int{2, 2, 1}},
		{"an event over the byte bound", [][]byte{[]byte("a"), bytes.Repeat([]byte("y"), 1000), []byte("b")}, Options{FlushEvery: time.Hour, MaxBytes: 100}, []int{1, 1, 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, k := newSession(t)
			turn := uuid.Must(uuid.NewV7()).String()
			r := Start(context.Background(), st, k, turn, tc.o)
			for i, ev := range tc.events {
				r.Add(int64(i+1), ev)
			}
			r.Close()
			got, final := readAll(t, st, k, turn)
			if !final || len(got) != len(tc.events) {
				t.Fatalf("read %d events (final %v), want %d, final", len(got), final, len(tc.events))
			}
			for i := range got {
				if !bytes.Equal(got[i], tc.events[i]) {
					t.Fatalf("event %d = %q, want %q", i+1, got[i], tc.events[i])
				}
			}
			// The events came at once: the first batch has them, no
			// empty marker before it.
			b := st.list()
			if len(b) == 0 || b[0].First != 1 {
				t.Fatalf("batches %+v, want the first at 1", b)
			}
			var sizes []int
			for _, x := range b {
				sizes = append(sizes, len(x.Events))
			}
			if fmt.Sprint(sizes) != fmt.Sprint(tc.want) || !b[len(b)-1].Final {
				t.Fatalf("batches %v (last final %v), want %v, last final", sizes, b[len(b)-1].Final, tc.want)
			}
		})
	}
}

func seq(n int, f func(int) []byte) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// TestRecorderFlushesBeforeClose: an event reaches the log within
// FlushEvery, without waiting for more, and a Close after everything is
// written marks the last batch final again.
func TestRecorderFlushesBeforeClose(t *testing.T) {
	st, k := newSession(t)
	turn := uuid.Must(uuid.NewV7()).String()
	r := Start(context.Background(), st, k, turn, Options{FlushEvery: time.Millisecond})
	r.Add(1, payload(1))
	r.Add(2, payload(2))
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, err := st.ReadTurnEvents(context.Background(), k, turn, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Events) == 2 {
			if p.Final {
				t.Fatal("final before Close")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("events not logged before Close: %+v", p)
		}
		time.Sleep(time.Millisecond)
	}
	r.Close()
	got, final := readAll(t, st, k, turn)
	if len(got) != 2 || !final {
		t.Fatalf("after Close: %d events, final %v", len(got), final)
	}
}

// TestRecorderTurnFoundBeforeItsFirstBatch: a turn that has written no
// batch yet (no event for longer than FlushEvery) is the session's latest
// turn, live, found by its lease; no batch is written only to mark it,
// and its one event makes its one, final, batch.
func TestRecorderTurnFoundBeforeItsFirstBatch(t *testing.T) {
	st, k := newSession(t)
	turn := uuid.Must(uuid.NewV7()).String()
	if err := st.AcquireLease(context.Background(), k, turn, time.Minute); err != nil {
		t.Fatal(err)
	}
	r := Start(context.Background(), st, k, turn, Options{FlushEvery: time.Millisecond})
	time.Sleep(20 * time.Millisecond) // many FlushEvery: no batch is due
	p, err := st.ReadTurnEvents(context.Background(), k, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Turn != turn || !p.Live || len(p.Events) != 0 || p.Final {
		t.Fatalf("the running turn read as %+v", p)
	}
	if b := st.list(); len(b) != 0 {
		t.Fatalf("batches %+v written before any event", b)
	}
	r.Add(1, payload(1))
	r.Close()
	if b := st.list(); len(b) != 1 || len(b[0].Events) != 1 || !b[0].Final {
		t.Fatalf("batches %+v, want the final one alone", b)
	}
}

// TestRecorderStopsOnGap: an event out of order stops the log rather
// than writing a gap.
func TestRecorderStopsOnGap(t *testing.T) {
	st, k := newSession(t)
	turn := uuid.Must(uuid.NewV7()).String()
	r := Start(context.Background(), st, k, turn, Options{FlushEvery: time.Hour})
	r.Add(1, payload(1))
	r.Add(3, payload(3))
	r.Add(2, payload(2))
	r.Close()
	p, err := st.ReadTurnEvents(context.Background(), k, turn, 0)
	if err != nil || len(p.Events) != 0 || p.Final {
		t.Fatalf("logged %+v, %v after a gap; want nothing", p, err)
	}
}

// TestRecorderWaitsForTheSession: nothing is written before the session
// is stored, and nothing at all when it never is.
func TestRecorderWaitsForTheSession(t *testing.T) {
	st, k := newSession(t)
	turn := uuid.Must(uuid.NewV7()).String()
	release := make(chan struct{})
	r := Start(context.Background(), st, k, turn, Options{FlushEvery: time.Hour, Stored: func() error { <-release; return nil }})
	r.Add(1, payload(1))
	if n := len(st.list()); n != 0 {
		t.Fatalf("%d batches written before the session was stored", n)
	}
	close(release)
	r.Close()
	if got, final := readAll(t, st, k, turn); len(got) != 1 || !final {
		t.Fatalf("read %d events, final %v", len(got), final)
	}

	turn2 := uuid.Must(uuid.NewV7()).String()
	r = Start(context.Background(), st, k, turn2, Options{Stored: func() error { return errors.New("not created") }})
	r.Add(1, payload(1))
	r.Close()
	p, err := st.ReadTurnEvents(context.Background(), k, turn2, 0)
	if err != nil || p.Turn != "" {
		t.Fatalf("a turn whose session was not created logged: %+v, %v", p, err)
	}
}

// follow runs a Follower from the start of turn's log and returns what it
// received.
func follow(ctx context.Context, t *testing.T, f *Follower, st store.TurnLogs, k store.Key, turn string) ([][]byte, Outcome) {
	t.Helper()
	var page *store.TurnEvents
	for page == nil || page.Turn == "" {
		var err error
		if page, err = st.ReadTurnEvents(ctx, k, turn, 0); err != nil {
			t.Fatal(err)
		}
	}
	var got [][]byte
	out, err := f.Follow(ctx, k, page, func(seq int64, p []byte) error {
		if seq != int64(len(got)+1) {
			return fmt.Errorf("event %d after %d", seq, len(got))
		}
		got = append(got, append([]byte(nil), p...))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, out
}

// TestFollowLive: a follower started while the turn runs receives every
// event once, in order, woken by the hub or by polling.
func TestFollowLive(t *testing.T) {
	for _, viaHub := range []bool{true, false} {
		t.Run(fmt.Sprintf("hub=%v", viaHub), func(t *testing.T) {
			st, k := newSession(t)
			turn := uuid.Must(uuid.NewV7()).String()
			if err := st.AcquireLease(context.Background(), k, turn, time.Minute); err != nil {
				t.Fatal(err)
			}
			hub := &Hub{}
			o := Options{FlushEvery: time.Millisecond}
			f := &Follower{Logs: st, Poll: 5 * time.Millisecond}
			if viaHub {
				o.Hub, f.Hub, f.Poll = hub, hub, time.Hour
			}
			r := Start(context.Background(), st, k, turn, o)
			var wg sync.WaitGroup
			var got [][]byte
			var out Outcome
			wg.Go(func() { got, out = follow(context.Background(), t, f, st, k, turn) })
			want := seq(300, payload)
			for i, p := range want {
				r.Add(int64(i+1), p)
				if i%50 == 0 {
					time.Sleep(2 * time.Millisecond)
				}
			}
			r.Close()
			wg.Wait()
			if out != Finished || len(got) != len(want) {
				t.Fatalf("outcome %v, %d events; want Finished, %d", out, len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("event %d = %q, want %q", i+1, got[i], want[i])
				}
			}
		})
	}
}

// TestFollowDeadTurn: a log that stops without its last event, whose turn
// holds no lease, ends Interrupted after the grace; a cancelled context
// ends Stopped.
func TestFollowDeadTurn(t *testing.T) {
	st, k := newSession(t)
	turn := uuid.Must(uuid.NewV7()).String()
	if err := st.AppendTurnEvents(context.Background(), k, store.TurnEvents{Turn: turn, First: 1, Events: [][]byte{payload(1)}}, time.Hour); err != nil {
		t.Fatal(err)
	}
	f := &Follower{Logs: st, Poll: time.Millisecond, Grace: 20 * time.Millisecond}
	got, out := follow(context.Background(), t, f, st, k, turn)
	if out != Interrupted || len(got) != 1 {
		t.Fatalf("outcome %v with %d events, want Interrupted with 1", out, len(got))
	}

	if err := st.AcquireLease(context.Background(), k, turn, time.Minute); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.Grace = time.Hour
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, out := follow(ctx, t, f, st, k, turn); out != Stopped {
		t.Fatalf("outcome %v, want Stopped", out)
	}
}

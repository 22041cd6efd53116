package auth

import (
	"agentchat/internal/syncbuf"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"agentchat/internal/manualclock"
	"agentchat/internal/store"
)

func TestTouchAtMostOncePerInterval(t *testing.T) {
	keys := &memKeys{}
	carol := newKey(t, keys, "k-carol", "carol", time.Time{}, time.Time{})
	dave := newKey(t, keys, "k-dave", "dave", time.Time{}, time.Time{})
	revoked := newKey(t, keys, "k-revoked", "erin", time.Time{}, t0.Add(-time.Minute))
	clk := manualclock.New(t0)
	a, err := NewAuthenticator(secret, keys, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := NewJWTVerifier(secret, clk.Now)
	jwt, _ := v.Issue("carol", time.Hour)

	auth := func(cred string) {
		t.Helper()
		if _, err := a.Authenticate(context.Background(), "Bearer "+cred); err != nil {
			t.Fatalf("authenticate: %v", err)
		}
	}
	type step struct {
		at   time.Duration // after t0
		cred string
	}
	steps := []struct {
		name      string
		steps     []step
		wantCalls int       // TouchAPIKey calls in all so far
		wantCarol time.Time // carol's LastUsed afterwards
	}{
		{"first use is recorded", []step{{0, carol}}, 1, t0},
		{"more uses in the same interval are not", []step{{0, carol}, {time.Second, carol}, {TouchInterval - 1, carol}}, 1, t0},
		{"JWTs and refused keys never touch", []step{{TouchInterval, jwt}}, 1, t0},
		{"another key has its own interval", []step{{TouchInterval - 1, dave}}, 2, t0},
		{"a use one interval later is recorded", []step{{TouchInterval, carol}, {TouchInterval + time.Second, carol}}, 3, t0.Add(TouchInterval)},
		{"a clock going back is recorded (the store keeps the latest)", []step{{time.Second, carol}}, 4, t0.Add(TouchInterval)},
	}
	for _, tc := range steps {
		for _, st := range tc.steps {
			clk.Set(t0.Add(st.at))
			auth(st.cred)
		}
		if _, err := a.Authenticate(context.Background(), "Bearer "+revoked); !errors.Is(err, ErrInvalidCredentials) {
			t.Fatalf("%s: revoked key: %v", tc.name, err)
		}
		a.WaitTouches()
		calls := keys.touchCalls()
		if len(calls) != tc.wantCalls {
			t.Fatalf("%s: %d TouchAPIKey calls, want %d: %+v", tc.name, len(calls), tc.wantCalls, calls)
		}
		if got := keys.lastUsed("carol", "k-carol"); !got.Equal(tc.wantCarol) {
			t.Errorf("%s: carol's LastUsed = %v, want %v", tc.name, got, tc.wantCarol)
		}
	}
	for _, c := range keys.touchCalls() {
		if c.user == "erin" {
			t.Errorf("revoked key touched: %+v", c)
		}
	}
	if got := keys.lastUsed("dave", "k-dave"); !got.Equal(t0.Add(TouchInterval - 1)) {
		t.Errorf("dave's LastUsed = %v", got)
	}
}

func TestTouchSingleUser(t *testing.T) {
	keys := &memKeys{}
	key := newKey(t, keys, "k1", LocalUserID, time.Time{}, time.Time{})
	a, err := NewAuthenticator(nil, keys, clock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(context.Background(), "Bearer "+key); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(context.Background(), "Bearer some-gns3-token"); err != nil {
		t.Fatal(err)
	}
	a.WaitTouches()
	if calls := keys.touchCalls(); len(calls) != 1 || calls[0].user != LocalUserID || calls[0].id != "k1" || !calls[0].at.Equal(t0) {
		t.Fatalf("touches = %+v", calls)
	}
}

// The update runs after Authenticate returned, outlives the request's
// context, and has a deadline of its own.
func TestTouchIsAsynchronousAndOutlivesTheRequest(t *testing.T) {
	keys := &memKeys{touchEntered: make(chan struct{}), touchGate: make(chan struct{})}
	key := newKey(t, keys, "k", "carol", time.Time{}, time.Time{})
	a, err := NewAuthenticator(secret, keys, clock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// The store blocks the update until touchGate is closed: a synchronous
	// update would never let Authenticate return.
	id, err := a.Authenticate(ctx, "Bearer "+key)
	if err != nil || id.UserID != "carol" {
		t.Fatalf("authenticate: %v %v", id, err)
	}
	<-keys.touchEntered
	cancel() // the request is over
	close(keys.touchGate)
	a.WaitTouches()
	calls := keys.touchCalls()
	if len(calls) != 1 || calls[0].ctxErr != nil || !calls[0].hasDeadline {
		t.Fatalf("touches = %+v, want one with a live context that has a deadline", calls)
	}
	if got := keys.lastUsed("carol", "k"); !got.Equal(t0) {
		t.Errorf("LastUsed = %v", got)
	}
}

func TestTouchFailureIsLogged(t *testing.T) {
	keys := &memKeys{touchErr: fmt.Errorf("touch api key k: %w", errors.New("dynamodb: throttled"))}
	key := newKey(t, keys, "k", "carol", time.Time{}, time.Time{})
	var buf syncbuf.Buffer
	a, err := NewAuthenticator(secret, keys, clock, WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if id, err := a.Authenticate(context.Background(), "Bearer "+key); err != nil || id.UserID != "carol" || id.Via != ViaAPIKey {
		t.Fatalf("a failing update must not fail the request: %v %v", id, err)
	}
	a.WaitTouches()
	log := buf.String()
	if !strings.Contains(log, "level=WARN") || !strings.Contains(log, "api key last use not recorded") ||
		!strings.Contains(log, "key_id=k") || !strings.Contains(log, "throttled") {
		t.Errorf("log = %q", log)
	}
	if strings.Contains(log, key) || strings.Contains(log, HashAPIKey(key)) {
		t.Errorf("log leaks the key: %q", log)
	}
	// The next attempt waits for the next interval.
	if _, err := a.Authenticate(context.Background(), "Bearer "+key); err != nil {
		t.Fatal(err)
	}
	a.WaitTouches()
	if n := len(keys.touchCalls()); n != 1 {
		t.Errorf("%d TouchAPIKey calls after a failure, want 1", n)
	}
}

func TestClaimTouchIsBounded(t *testing.T) {
	tests := []struct {
		name    string
		fillAge time.Duration // how old the uses filling the memory are
		wantLen int           // remembered keys after one more
	}{
		{"stale uses are forgotten", TouchInterval, 1},
		{"fresh uses are forgotten when nothing is stale", time.Second, 1},
		{"uses from the future count as stale", -time.Hour, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := NewAuthenticator(secret, &memKeys{}, clock)
			if err != nil {
				t.Fatal(err)
			}
			fill := t0.Add(-tt.fillAge)
			for i := range maxTouched {
				if !a.claimTouch(keyRef{user: "u", id: fmt.Sprint(i)}, fill) {
					t.Fatalf("key %d: first use not claimed", i)
				}
			}
			if len(a.touched) != maxTouched {
				t.Fatalf("%d remembered, want %d", len(a.touched), maxTouched)
			}
			if !a.claimTouch(keyRef{user: "u", id: "new"}, t0) {
				t.Fatal("new key not claimed")
			}
			if len(a.touched) != tt.wantLen {
				t.Errorf("%d remembered after eviction, want %d", len(a.touched), tt.wantLen)
			}
			if a.claimTouch(keyRef{user: "u", id: "new"}, t0.Add(time.Second)) {
				t.Error("the new key was claimed twice in one interval")
			}
		})
	}

	// Mostly fresh: only the stale quarter and more goes.
	a, _ := NewAuthenticator(secret, &memKeys{}, clock)
	for i := range maxTouched {
		at := t0
		if i%2 == 0 {
			at = t0.Add(-2 * TouchInterval)
		}
		a.claimTouch(keyRef{user: "u", id: fmt.Sprint(i)}, at)
	}
	a.claimTouch(keyRef{user: "u", id: "new"}, t0)
	if want := maxTouched/2 + 1; len(a.touched) != want {
		t.Errorf("%d remembered, want %d (the fresh half and the new key)", len(a.touched), want)
	}
	if a.claimTouch(keyRef{user: "u", id: "1"}, t0) {
		t.Error("a fresh use was forgotten")
	}
}

var _ store.APIKeys = (*memKeys)(nil)

package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"agentchat/internal/store"

	"github.com/google/uuid"
)

// RunRateLimits runs the conformance tests of store.APIKeyLimits and
// store.RateCounters against stores made by newStore.
func RunRateLimits(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("KeyLimits", func(t *testing.T) { testKeyLimits(t, newStore(t)) })
	t.Run("RateWindow", func(t *testing.T) { testRateWindow(t, newStore(t)) })
	t.Run("RateConcurrent", func(t *testing.T) { testRateConcurrent(t, newStore(t)) })
}

// testKeyLimits: limits set at creation and changed later are what
// authentication reads (APIKeyByHash) and the list shows.
func testKeyLimits(t *testing.T, s store.Store) {
	ctx := context.Background()
	user := "u-" + uuid.NewString()
	k := &store.APIKey{ID: uuid.NewString(), UserID: user, Name: "k", Hash: uuid.NewString(), Prefix: "ack_x",
		CreatedAt: time.Now().UTC().Truncate(time.Second), Limits: store.KeyLimits{MaxParallel: 30, RPM: 5}}
	noErr(t, "create", s.CreateAPIKey(ctx, k))
	got, err := s.APIKeyByHash(ctx, k.Hash)
	noErr(t, "by hash", err)
	if got.Limits != k.Limits {
		t.Fatalf("limits at creation = %+v, want %+v", got.Limits, k.Limits)
	}
	want := store.KeyLimits{RPM: 60, TPM: 100000}
	noErr(t, "set limits", s.SetAPIKeyLimits(ctx, user, k.ID, want))
	got, err = s.APIKeyByHash(ctx, k.Hash)
	noErr(t, "by hash", err)
	list, err := s.ListAPIKeys(ctx, user)
	noErr(t, "list", err)
	if got.Limits != want || len(list) != 1 || list[0].Limits != want {
		t.Fatalf("limits after set = %+v / %+v, want %+v", got.Limits, list, want)
	}
	err = s.SetAPIKeyLimits(ctx, "someone-else", k.ID, want)
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another user's key: %v", err)
	}
	wantErr(t, "unknown key", s.SetAPIKeyLimits(ctx, user, uuid.NewString(), want), store.ErrNotFound)
}

// testRateWindow: a counter admits up to its limit per window, a new
// window starts from zero, n = 0 only reads, and limit 0 adds
// unconditionally.
func testRateWindow(t *testing.T, s store.Store) {
	ctx := context.Background()
	name := "key:" + uuid.NewString() + ":req"
	w0 := time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)
	for i := 1; i <= 5; i++ {
		c, ok, err := s.AddRate(ctx, name, w0, 1, 5, 2*time.Minute)
		noErr(t, "add", err)
		if !ok || c != int64(i) {
			t.Fatalf("request %d: count %d ok %v", i, c, ok)
		}
	}
	c, ok, err := s.AddRate(ctx, name, w0, 1, 5, 2*time.Minute)
	noErr(t, "add", err)
	if ok || c != 5 {
		t.Fatalf("6th request: count %d ok %v, want refused at 5", c, ok)
	}
	c, ok, err = s.AddRate(ctx, name, w0.Add(time.Minute), 1, 5, 2*time.Minute)
	noErr(t, "add", err)
	if !ok || c != 1 {
		t.Fatalf("next minute: count %d ok %v", c, ok)
	}
	// Tokens: a check (n = 0) under the limit, an unconditional add.
	tok := "key:" + uuid.NewString() + ":tok"
	c, ok, err = s.AddRate(ctx, tok, w0, 0, 100, 2*time.Minute)
	noErr(t, "check", err)
	if !ok || c != 0 {
		t.Fatalf("check: %d %v", c, ok)
	}
	c, ok, err = s.AddRate(ctx, tok, w0, 150, 0, 2*time.Minute)
	noErr(t, "add tokens", err)
	if !ok || c != 150 {
		t.Fatalf("add tokens: %d %v", c, ok)
	}
	c, ok, err = s.AddRate(ctx, tok, w0, 0, 100, 2*time.Minute)
	noErr(t, "check", err)
	if ok || c != 150 {
		t.Fatalf("check over: %d %v", c, ok)
	}
}

// testRateConcurrent: concurrent requests never admit more than the
// limit.
func testRateConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	name := "key:" + uuid.NewString() + ":req"
	w := time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)
	const limit, tries = 7, 20
	var mu sync.Mutex
	admitted := 0
	var wg sync.WaitGroup
	for range tries {
		wg.Go(func() {
			_, ok, err := s.AddRate(ctx, name, w, 1, limit, time.Minute)
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				mu.Lock()
				admitted++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if admitted != limit {
		t.Fatalf("admitted %d of %d, want %d", admitted, tries, limit)
	}
}

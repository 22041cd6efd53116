package sqlite

import (
	"context"
	"errors"
	"testing"
	"time"

	"agentchat/internal/manualclock"
	"agentchat/internal/store"
)

// The cached default LLM configuration follows every write made through
// the same Store at once, and a write by another process on the same file
// within readTTL.
func TestDefaultLLMConfigCache(t *testing.T) {
	ctx := context.Background()
	owner := store.UserOwner("alice")
	type env struct {
		s, other *Store
		clock    *manualclock.Clock
	}
	modelOf := func(t *testing.T, s *Store) string {
		t.Helper()
		c, err := s.DefaultLLMConfig(ctx, owner)
		if errors.Is(err, store.ErrNotFound) {
			return "(none)"
		}
		if err != nil {
			t.Fatalf("DefaultLLMConfig: %v", err)
		}
		m, _ := c.Config["model"].(string)
		return m
	}
	create := func(t *testing.T, s *Store, id, model string, isDefault bool) {
		t.Helper()
		c := &store.LLMConfig{ID: id, Owner: owner, Name: id, ModelType: "text", IsDefault: isDefault,
			Config: map[string]any{"model": model}}
		if err := s.CreateLLMConfig(ctx, c); err != nil {
			t.Fatalf("CreateLLMConfig %s: %v", id, err)
		}
	}
	update := func(t *testing.T, s *Store, id, model string) {
		t.Helper()
		c := &store.LLMConfig{ID: id, Owner: owner, Name: id, ModelType: "text", Config: map[string]any{"model": model}}
		if _, err := s.UpdateLLMConfig(ctx, c, 0); err != nil {
			t.Fatalf("UpdateLLMConfig %s: %v", id, err)
		}
	}
	cases := []struct {
		name string
		run  func(t *testing.T, e env)
	}{
		{"update through the store is seen at once", func(t *testing.T, e env) {
			create(t, e.s, "a", "m1", true)
			if got := modelOf(t, e.s); got != "m1" {
				t.Fatalf("model = %q, want m1", got)
			}
			update(t, e.s, "a", "m2")
			if got := modelOf(t, e.s); got != "m2" {
				t.Fatalf("model after update = %q, want m2", got)
			}
		}},
		{"a cached absence ends with a create", func(t *testing.T, e env) {
			if got := modelOf(t, e.s); got != "(none)" {
				t.Fatalf("model = %q, want none", got)
			}
			create(t, e.s, "a", "m1", true)
			if got := modelOf(t, e.s); got != "m1" {
				t.Fatalf("model after create = %q, want m1", got)
			}
		}},
		{"set default, unset default and delete are seen at once", func(t *testing.T, e env) {
			create(t, e.s, "a", "m1", true)
			create(t, e.s, "b", "m2", false)
			_ = modelOf(t, e.s)
			if _, err := e.s.SetDefaultLLMConfig(ctx, owner, "b"); err != nil {
				t.Fatal(err)
			}
			if got := modelOf(t, e.s); got != "m2" {
				t.Fatalf("model after set default = %q, want m2", got)
			}
			if err := e.s.UnsetDefaultLLMConfig(ctx, owner, "b"); err != nil {
				t.Fatal(err)
			}
			if got := modelOf(t, e.s); got != "(none)" {
				t.Fatalf("model after unset default = %q, want none", got)
			}
			if _, err := e.s.SetDefaultLLMConfig(ctx, owner, "a"); err != nil {
				t.Fatal(err)
			}
			_ = modelOf(t, e.s)
			if err := e.s.DeleteLLMConfig(ctx, owner, "a"); err != nil {
				t.Fatal(err)
			}
			if got := modelOf(t, e.s); got != "(none)" {
				t.Fatalf("model after delete = %q, want none", got)
			}
		}},
		{"another process's write is seen within the bound", func(t *testing.T, e env) {
			create(t, e.s, "a", "m1", true)
			_ = modelOf(t, e.s)
			update(t, e.other, "a", "m2")
			if got := modelOf(t, e.s); got != "m1" {
				t.Fatalf("model right after the other store's update = %q, want the cached m1", got)
			}
			e.clock.Add(readTTL)
			if got := modelOf(t, e.s); got != "m2" {
				t.Fatalf("model after %v = %q, want m2", readTTL, got)
			}
		}},
		{"callers do not share the cached value", func(t *testing.T, e env) {
			create(t, e.s, "a", "m1", true)
			c, err := e.s.DefaultLLMConfig(ctx, owner)
			if err != nil {
				t.Fatal(err)
			}
			c.Config["model"] = "changed by a caller"
			c.Name = "changed"
			if got := modelOf(t, e.s); got != "m1" {
				t.Fatalf("model = %q after a caller changed its copy, want m1", got)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := manualclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
			s, path := openTemp(t, WithClock(clock.Now))
			other, err := Open(ctx, path, WithClock(clock.Now))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = other.Close() })
			tc.run(t, env{s: s, other: other, clock: clock})
		})
	}
}

// A cached budget follows SetUserBudget through the same Store at once,
// and another process's within readTTL.
func TestUserBudgetCache(t *testing.T) {
	ctx := context.Background()
	clock := manualclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s, path := openTemp(t, WithClock(clock.Now))
	other, err := Open(ctx, path, WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	budgetOf := func(s *Store) int64 {
		t.Helper()
		b, err := s.UserBudget(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		return b.MaxNanos
	}
	if got := budgetOf(s); got != 0 {
		t.Fatalf("budget = %d, want none", got)
	}
	if err := s.SetUserBudget(ctx, "alice", store.Budget{MaxNanos: 5, Period: store.BudgetDay}); err != nil {
		t.Fatal(err)
	}
	if got := budgetOf(s); got != 5 {
		t.Fatalf("budget after a set through the store = %d, want 5", got)
	}
	if err := other.SetUserBudget(ctx, "alice", store.Budget{MaxNanos: 3, Period: store.BudgetDay}); err != nil {
		t.Fatal(err)
	}
	if got := budgetOf(s); got != 5 {
		t.Fatalf("budget right after another process's set = %d, want the cached 5", got)
	}
	clock.Add(readTTL)
	if got := budgetOf(s); got != 3 {
		t.Fatalf("budget after %v = %d, want 3", readTTL, got)
	}
}

// The cached default by reference (a group's configuration) follows the
// writes made through the same Store at once, and another process's
// within readTTL.
func TestDefaultLLMConfigRefCache(t *testing.T) {
	ctx := context.Background()
	group := store.GroupOwner("g")
	refModel := func(t *testing.T, s *Store) string {
		t.Helper()
		c, err := s.DefaultLLMConfigRef(ctx, "alice")
		if errors.Is(err, store.ErrNotFound) {
			return "(none)"
		}
		if err != nil {
			t.Fatalf("DefaultLLMConfigRef: %v", err)
		}
		m, _ := c.Config["model"].(string)
		return m
	}
	create := func(t *testing.T, s *Store, id, model string) {
		t.Helper()
		c := &store.LLMConfig{ID: id, Owner: group, Name: id, ModelType: "text", Config: map[string]any{"model": model}}
		if err := s.CreateLLMConfig(ctx, c); err != nil {
			t.Fatalf("CreateLLMConfig %s: %v", id, err)
		}
	}
	setRef := func(t *testing.T, s *Store, id string) {
		t.Helper()
		if _, err := s.SetDefaultLLMConfigRef(ctx, "alice", "g", id); err != nil {
			t.Fatalf("SetDefaultLLMConfigRef %s: %v", id, err)
		}
	}
	cases := []struct {
		name string
		run  func(t *testing.T, s, other *Store, clock *manualclock.Clock)
	}{
		{"set, update, unset and delete through the store are seen at once", func(t *testing.T, s, _ *Store, _ *manualclock.Clock) {
			create(t, s, "a", "m1")
			create(t, s, "b", "m2")
			if got := refModel(t, s); got != "(none)" {
				t.Fatalf("model = %q, want none", got)
			}
			setRef(t, s, "a")
			if got := refModel(t, s); got != "m1" {
				t.Fatalf("model after set = %q, want m1", got)
			}
			c := &store.LLMConfig{ID: "a", Owner: group, Name: "a", ModelType: "text", Config: map[string]any{"model": "m3"}}
			if _, err := s.UpdateLLMConfig(ctx, c, 0); err != nil {
				t.Fatal(err)
			}
			if got := refModel(t, s); got != "m3" {
				t.Fatalf("model after update = %q, want m3", got)
			}
			setRef(t, s, "b")
			if got := refModel(t, s); got != "m2" {
				t.Fatalf("model after another set = %q, want m2", got)
			}
			if err := s.UnsetDefaultLLMConfigRef(ctx, "alice", "g", "b"); err != nil {
				t.Fatal(err)
			}
			if got := refModel(t, s); got != "(none)" {
				t.Fatalf("model after unset = %q, want none", got)
			}
			setRef(t, s, "a")
			_ = refModel(t, s)
			if err := s.DeleteLLMConfig(ctx, group, "a"); err != nil {
				t.Fatal(err)
			}
			if got := refModel(t, s); got != "(none)" {
				t.Fatalf("model after delete = %q, want none", got)
			}
		}},
		{"another process's write is seen within the bound", func(t *testing.T, s, other *Store, clock *manualclock.Clock) {
			create(t, s, "a", "m1")
			if got := refModel(t, s); got != "(none)" {
				t.Fatalf("model = %q, want none", got)
			}
			setRef(t, other, "a")
			if got := refModel(t, s); got != "(none)" {
				t.Fatalf("model right after the other store's set = %q, want the cached none", got)
			}
			clock.Add(readTTL)
			if got := refModel(t, s); got != "m1" {
				t.Fatalf("model after %v = %q, want m1", readTTL, got)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := manualclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
			s, path := openTemp(t, WithClock(clock.Now))
			other, err := Open(ctx, path, WithClock(clock.Now))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = other.Close() })
			tc.run(t, s, other, clock)
		})
	}
}

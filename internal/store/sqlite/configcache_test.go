package sqlite

import (
	"context"
	"errors"
	"fmt"
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
		return modelOrNone(t, c, err)
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
			s, other, clock := twoProcesses(t)
			tc.run(t, env{s: s, other: other, clock: clock})
		})
	}
}

// A cached budget follows SetUserBudget through the same Store at once,
// and another process's within readTTL.
func TestUserBudgetCache(t *testing.T) {
	ctx := context.Background()
	s, other, clock := twoProcesses(t)
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

// A user's cached default by reference (a group's configuration) follows
// every write through the same Store at once (set, unset, the group
// configuration's update and deletion), and another process's write within
// readTTL.
func TestDefaultLLMConfigRefCache(t *testing.T) {
	ctx := context.Background()
	group := store.GroupOwner("g1")
	refModel := func(t *testing.T, s *Store) string {
		t.Helper()
		c, err := s.DefaultLLMConfigRef(ctx, "alice")
		return modelOrNone(t, c, err)
	}
	setup := func(t *testing.T, s *Store) {
		t.Helper()
		for _, id := range []string{"a", "b"} {
			if err := s.CreateLLMConfig(ctx, &store.LLMConfig{ID: id, Owner: group, Name: id, ModelType: "text",
				Config: map[string]any{"model": "m-" + id}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.SetDefaultLLMConfigRef(ctx, "alice", "g1", "a"); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name  string
		write func(t *testing.T, s *Store) error
		want  string
	}{
		{"set to another", func(t *testing.T, s *Store) error {
			_, err := s.SetDefaultLLMConfigRef(ctx, "alice", "g1", "b")
			return err
		}, "m-b"},
		{"unset", func(t *testing.T, s *Store) error { return s.UnsetDefaultLLMConfigRef(ctx, "alice", "g1", "a") }, "(none)"},
		{"group configuration updated", func(t *testing.T, s *Store) error {
			_, err := s.UpdateLLMConfig(ctx, &store.LLMConfig{ID: "a", Owner: group, Name: "a", ModelType: "text",
				Config: map[string]any{"model": "m-a2"}}, 0)
			return err
		}, "m-a2"},
		{"group configuration deleted", func(t *testing.T, s *Store) error { return s.DeleteLLMConfig(ctx, group, "a") }, "(none)"},
	}
	for _, tc := range cases {
		for _, viaOther := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, other process %v", tc.name, viaOther), func(t *testing.T) {
				s, other, clock := twoProcesses(t)
				setup(t, s)
				if got := refModel(t, s); got != "m-a" {
					t.Fatalf("before the write: %q, want m-a", got)
				}
				writer := s
				if viaOther {
					writer = other
				}
				if err := tc.write(t, writer); err != nil {
					t.Fatal(err)
				}
				if viaOther {
					if got := refModel(t, s); got != "m-a" {
						t.Fatalf("right after the other process's write: %q, want the cached m-a", got)
					}
					clock.Add(readTTL)
				}
				if got := refModel(t, s); got != tc.want {
					t.Fatalf("after the write: %q, want %q", got, tc.want)
				}
			})
		}
	}
}

// modelOrNone is the model of a default configuration read (c, err), or
// "(none)" when there is none.
func modelOrNone(t *testing.T, c *store.LLMConfig, err error) string {
	t.Helper()
	if errors.Is(err, store.ErrNotFound) {
		return "(none)"
	}
	if err != nil {
		t.Fatalf("read the default configuration: %v", err)
	}
	m, _ := c.Config["model"].(string)
	return m
}

// twoProcesses opens a temporary file twice, as two processes would, both
// Stores on one manual clock that the test moves.
func twoProcesses(t *testing.T) (s, other *Store, clock *manualclock.Clock) {
	t.Helper()
	clock = manualclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s, path := openTemp(t, WithClock(clock.Now))
	other, err := Open(context.Background(), path, WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	return s, other, clock
}

package sqlite

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"agentchat/internal/store"
)

// A database at schema 3 gains the LLM configuration tables, its sessions
// intact.
func TestMigrationAddsLLMConfigs(t *testing.T) {
	ctx := context.Background()
	k := store.Key{ProjectID: "p", UserID: "alice", ThreadID: "t"}
	path := createAtSchema(t, 3, store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID, Title: "kept"})
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open with migration 4: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if got, err := s.GetSession(ctx, k); err != nil || got.Title != "kept" {
		t.Fatalf("session after migration: %+v, %v", got, err)
	}
	c := &store.LLMConfig{ID: "c", Owner: store.UserOwner("alice"), Name: "n", ModelType: "text", IsDefault: true,
		Config: map[string]any{"model": "m"}}
	if err := s.CreateLLMConfig(ctx, c); err != nil {
		t.Fatalf("CreateLLMConfig after migration: %v", err)
	}
	if got, err := s.DefaultLLMConfig(ctx, c.Owner); err != nil || got.ID != "c" {
		t.Fatalf("DefaultLLMConfig = %+v, %v", got, err)
	}
}

// The schema itself refuses a second default for an owner and a default
// naming a configuration that does not exist.
func TestLLMConfigDefaultsSchema(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	owner := store.UserOwner("alice")
	for _, id := range []string{"a", "b"} {
		if err := s.CreateLLMConfig(ctx, &store.LLMConfig{ID: id, Owner: owner}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SetDefaultLLMConfig(ctx, owner, "a"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, owner, id, want string
	}{
		{"second default of the owner", "alice", "b", "UNIQUE"},
		{"default of a missing configuration", "bob", "zzz", "FOREIGN KEY"},
		{"default of another owner's configuration", "bob", "a", "FOREIGN KEY"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.w.ExecContext(ctx, `INSERT INTO llm_config_defaults (owner_kind, owner_id, config_id) VALUES ('U', ?, ?)`, tc.owner, tc.id)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("insert: %v, want a %s constraint error", err, tc.want)
			}
		})
	}
}

// Two handles on one file (two processes) setting defaults at once leave
// exactly one.
func TestLLMConfigDefaultTwoHandles(t *testing.T) {
	ctx := context.Background()
	a, path := openTemp(t)
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("second Open: %v", err)
	}
	defer func() { _ = b.Close() }()
	owner := store.GroupOwner("admins")
	const n = 10
	ids := make([]string, n)
	for i := range n {
		ids[i] = uuid.NewString()
		if err := a.CreateLLMConfig(ctx, &store.LLMConfig{ID: ids[i], Owner: owner, Name: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i := range n {
		s := []*Store{a, b}[i%2]
		wg.Go(func() {
			if _, err := s.SetDefaultLLMConfig(ctx, owner, ids[i]); err != nil {
				t.Errorf("SetDefaultLLMConfig %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	for _, s := range []*Store{a, b} {
		list, err := s.ListLLMConfigs(ctx, owner)
		if err != nil {
			t.Fatal(err)
		}
		var marked []string
		for _, c := range list {
			if c.IsDefault {
				marked = append(marked, c.ID)
			}
		}
		d, err := s.DefaultLLMConfig(ctx, owner)
		if err != nil || len(marked) != 1 || d.ID != marked[0] {
			t.Errorf("defaults marked %v, DefaultLLMConfig %v, %v; want one and the same", marked, d, err)
		}
	}
}

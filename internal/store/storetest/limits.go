package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/store"
)

// RunLimits runs the conformance tests of store.Limits against stores made
// by newStore with the limits l (each call returns a fresh, empty store,
// closed by newStore's cleanup).
func RunLimits(t *testing.T, newStore func(t *testing.T, l store.Limits) store.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, newStore func(t *testing.T, l store.Limits) store.Store)
	}{
		{"Sessions", testLimitSessions},
		{"SessionsConcurrent", testLimitSessionsConcurrent},
		{"SessionsOpenOrCreate", testLimitSessionsOpenOrCreate},
		{"LLMConfigs", testLimitLLMConfigs},
		{"LLMConfigsConcurrent", testLimitLLMConfigsConcurrent},
		{"APIKeys", testLimitAPIKeys},
		{"NoLimits", testNoLimits},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore) })
	}
}

// wantLimit checks that err is the *store.LimitError of res at limit.
func wantLimit(t *testing.T, what string, err error, res store.Resource, limit int) {
	t.Helper()
	var le *store.LimitError
	if !errors.Is(err, store.ErrLimitReached) || !errors.As(err, &le) {
		t.Fatalf("%s: error = %v, want a *store.LimitError", what, err)
	}
	if le.Resource != res || le.Limit != limit {
		t.Fatalf("%s: limit error %+v, want %s at %d", what, le, res, limit)
	}
}

func testLimitSessions(t *testing.T, newStore func(t *testing.T, l store.Limits) store.Store) {
	ctx := t.Context()
	s := newStore(t, store.Limits{SessionsPerUser: 3})
	p1, p2 := newProject(), newProject()
	// The limit counts a user's sessions over every project.
	a1, a2, a3 := newKey(p1, "alice"), newKey(p1, "alice"), newKey(p2, "alice")
	create(t, s, a1, nil)
	create(t, s, a2, nil)
	noErr(t, "CreateLeasedSession", s.CreateLeasedSession(ctx, &store.Session{ProjectID: a3.ProjectID, UserID: "alice", ThreadID: a3.ThreadID}, "turn", time.Hour))

	room, ok := store.Capability[store.SessionRoom](s)
	if !ok {
		t.Fatal("the store does not implement store.SessionRoom")
	}
	wantLimit(t, "CheckSessionRoom at the limit", room.CheckSessionRoom(ctx, "alice"), store.ResourceSessions, 3)
	noErr(t, "CheckSessionRoom of another user", room.CheckSessionRoom(ctx, "bob"))
	over := newKey(p2, "alice")
	wantLimit(t, "CreateSession past the limit", s.CreateSession(ctx, &store.Session{ProjectID: over.ProjectID, UserID: "alice", ThreadID: over.ThreadID}), store.ResourceSessions, 3)
	wantLimit(t, "CreateLeasedSession past the limit", s.CreateLeasedSession(ctx, &store.Session{ProjectID: over.ProjectID, UserID: "alice", ThreadID: over.ThreadID}, "turn", time.Hour), store.ResourceSessions, 3)
	_, err := s.GetSession(ctx, over)
	wantErr(t, "GetSession of a refused session", err, store.ErrNotFound)
	// Another user has their own limit.
	create(t, s, newKey(p1, "bob"), nil)

	// A failed creation (duplicate id) takes nothing.
	noErr(t, "DeleteSession", s.DeleteSession(ctx, a2))
	err = s.CreateSession(ctx, &store.Session{ProjectID: a1.ProjectID, UserID: "alice", ThreadID: a1.ThreadID})
	wantErr(t, "CreateSession of an existing id", err, store.ErrExists)
	noErr(t, "CheckSessionRoom after a delete", room.CheckSessionRoom(ctx, "alice"))
	// Deleting a session frees room for one, and only one.
	create(t, s, over, nil)
	wantLimit(t, "CreateSession after refilling", s.CreateSession(ctx, &store.Session{ProjectID: p1, UserID: "alice", ThreadID: uuid.NewString()}), store.ResourceSessions, 3)

	// Removing a project frees its sessions of every user.
	noErr(t, "DeleteProject", s.DeleteProject(ctx, p2)) // a3 and over
	create(t, s, newKey(p1, "alice"), nil)
	create(t, s, newKey(p1, "alice"), nil)
	wantLimit(t, "CreateSession after the project's removal", s.CreateSession(ctx, &store.Session{ProjectID: p1, UserID: "alice", ThreadID: uuid.NewString()}), store.ResourceSessions, 3)
	// Deleting twice frees once.
	noErr(t, "DeleteSession", s.DeleteSession(ctx, a1))
	wantErr(t, "DeleteSession again", s.DeleteSession(ctx, a1), store.ErrNotFound)
	create(t, s, newKey(p1, "alice"), nil)
	wantLimit(t, "CreateSession after a double delete", s.CreateSession(ctx, &store.Session{ProjectID: p1, UserID: "alice", ThreadID: uuid.NewString()}), store.ResourceSessions, 3)
}

// testLimitSessionsConcurrent: racing creations never pass the limit.
func testLimitSessionsConcurrent(t *testing.T, newStore func(t *testing.T, l store.Limits) store.Store) {
	ctx := t.Context()
	const limit, racers = 3, 10
	s := newStore(t, store.Limits{SessionsPerUser: limit})
	p := newProject()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created []store.Key
	)
	for i := range racers {
		wg.Go(func() {
			k := newKey(p, "alice")
			var err error
			if i%2 == 0 {
				err = s.CreateSession(ctx, &store.Session{ProjectID: p, UserID: "alice", ThreadID: k.ThreadID})
			} else {
				err = s.CreateLeasedSession(ctx, &store.Session{ProjectID: p, UserID: "alice", ThreadID: k.ThreadID}, "turn", time.Hour)
			}
			if err == nil {
				mu.Lock()
				created = append(created, k)
				mu.Unlock()
				return
			}
			if !errors.Is(err, store.ErrLimitReached) {
				t.Errorf("racing CreateSession: %v", err)
			}
		})
	}
	wg.Wait()
	if len(created) != limit {
		t.Fatalf("%d racing creations succeeded, want exactly %d", len(created), limit)
	}
	list, _, err := s.ListSessions(ctx, p, "alice", store.Page{Limit: 100})
	noErr(t, "ListSessions", err)
	if len(list) != limit {
		t.Fatalf("%d sessions stored, want %d", len(list), limit)
	}
}

// testLimitSessionsOpenOrCreate: the one-step creation of a turn honours
// the limit too and writes nothing when refused.
func testLimitSessionsOpenOrCreate(t *testing.T, newStore func(t *testing.T, l store.Limits) store.Store) {
	s := newStore(t, store.Limits{SessionsPerUser: 1})
	oc, ok := store.Capability[store.TurnOpenCreator](s)
	if !ok {
		t.Skip("the store has no OpenOrCreateTurn")
	}
	ctx := t.Context()
	p := newProject()
	k1, k2 := newKey(p, "alice"), newKey(p, "alice")
	if _, _, created, err := oc.OpenOrCreateTurn(ctx, k1, "A", time.Hour, 0, newLimitSession(k1)); err != nil || !created {
		t.Fatalf("OpenOrCreateTurn: created %v, %v", created, err)
	}
	// The existing session opens at the limit.
	noErr(t, "ReleaseLease", s.ReleaseLease(ctx, k1, "A"))
	if _, _, created, err := oc.OpenOrCreateTurn(ctx, k1, "A", time.Hour, 0, newLimitSession(k1)); err != nil || created {
		t.Fatalf("OpenOrCreateTurn of the existing session: created %v, %v", created, err)
	}
	_, _, _, err := oc.OpenOrCreateTurn(ctx, k2, "B", time.Hour, 0, newLimitSession(k2))
	wantLimit(t, "OpenOrCreateTurn past the limit", err, store.ResourceSessions, 1)
	_, err = s.GetSession(ctx, k2)
	wantErr(t, "GetSession of a refused session", err, store.ErrNotFound)
}

// newLimitSession is the newSession of OpenOrCreateTurn for k.
func newLimitSession(k store.Key) func() (*store.Session, error) {
	return func() (*store.Session, error) {
		return &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}, nil
	}
}

func limitConfig(owner store.Owner, name string) *store.LLMConfig {
	return &store.LLMConfig{Owner: owner, Name: name, ModelType: "text", Config: map[string]any{"provider": "openai", "model": "m", "context_limit": 8.0}}
}

func testLimitLLMConfigs(t *testing.T, newStore func(t *testing.T, l store.Limits) store.Store) {
	ctx := t.Context()
	s := newStore(t, store.Limits{LLMConfigsPerOwner: 2})
	for _, owner := range []store.Owner{store.UserOwner("alice"), store.GroupOwner("staff")} {
		first := limitConfig(owner, "one")
		noErr(t, "CreateLLMConfig", s.CreateLLMConfig(ctx, first))
		noErr(t, "CreateLLMConfig", s.CreateLLMConfig(ctx, limitConfig(owner, "two")))
		over := limitConfig(owner, "three")
		over.IsDefault = true
		wantLimit(t, fmt.Sprintf("CreateLLMConfig past the limit (%+v)", owner), s.CreateLLMConfig(ctx, over), store.ResourceLLMConfigs, 2)
		list, err := s.ListLLMConfigs(ctx, owner)
		noErr(t, "ListLLMConfigs", err)
		if len(list) != 2 {
			t.Fatalf("%+v has %d configurations after a refusal, want 2", owner, len(list))
		}
		if _, err := s.DefaultLLMConfig(ctx, owner); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a refused default configuration became the default: %v", err)
		}
		// Deleting one frees room; updating does not count.
		_, err = s.UpdateLLMConfig(ctx, &store.LLMConfig{ID: first.ID, Owner: owner, Name: "renamed", ModelType: "text", Config: first.Config}, 0)
		noErr(t, "UpdateLLMConfig at the limit", err)
		noErr(t, "DeleteLLMConfig", s.DeleteLLMConfig(ctx, owner, first.ID))
		noErr(t, "CreateLLMConfig after a delete", s.CreateLLMConfig(ctx, limitConfig(owner, "three")))
	}
	// Another user is not concerned.
	noErr(t, "CreateLLMConfig of bob", s.CreateLLMConfig(ctx, limitConfig(store.UserOwner("bob"), "one")))
}

// testLimitLLMConfigsConcurrent: racing creations never leave more than
// the limit (some may be refused even though one of them could pass).
func testLimitLLMConfigsConcurrent(t *testing.T, newStore func(t *testing.T, l store.Limits) store.Store) {
	ctx := t.Context()
	const limit, racers = 3, 10
	s := newStore(t, store.Limits{LLMConfigsPerOwner: limit})
	owner := store.UserOwner("alice")
	var (
		wg sync.WaitGroup
		mu sync.Mutex
		ok int
	)
	for i := range racers {
		wg.Go(func() {
			err := s.CreateLLMConfig(ctx, limitConfig(owner, fmt.Sprint("c", i)))
			switch {
			case err == nil:
				mu.Lock()
				ok++
				mu.Unlock()
			case !errors.Is(err, store.ErrLimitReached):
				t.Errorf("racing CreateLLMConfig: %v", err)
			}
		})
	}
	wg.Wait()
	list, err := s.ListLLMConfigs(ctx, owner)
	noErr(t, "ListLLMConfigs", err)
	if ok > limit || len(list) != ok {
		t.Fatalf("%d creations succeeded, %d stored; want at most %d, all stored", ok, len(list), limit)
	}
	// Whatever the race left, the owner can fill up to the limit.
	for range limit - len(list) {
		noErr(t, "CreateLLMConfig after the race", s.CreateLLMConfig(ctx, limitConfig(owner, "after")))
	}
	wantLimit(t, "CreateLLMConfig after the race", s.CreateLLMConfig(ctx, limitConfig(owner, "over")), store.ResourceLLMConfigs, limit)
}

func testLimitAPIKeys(t *testing.T, newStore func(t *testing.T, l store.Limits) store.Store) {
	ctx := t.Context()
	s := newStore(t, store.Limits{APIKeysPerUser: 2})
	n := 0
	mk := func(user string, expires time.Time) *store.APIKey {
		n++
		id := uuid.NewString()
		return &store.APIKey{ID: id, UserID: user, Name: "k", Hash: fmt.Sprintf("%064x", n), Prefix: "ack_" + id[:4], ExpiresAt: expires}
	}
	k1 := mk("alice", time.Time{})
	noErr(t, "CreateAPIKey", s.CreateAPIKey(ctx, k1))
	noErr(t, "CreateAPIKey", s.CreateAPIKey(ctx, mk("alice", time.Now().Add(time.Hour))))
	over := mk("alice", time.Time{})
	wantLimit(t, "CreateAPIKey past the limit", s.CreateAPIKey(ctx, over), store.ResourceAPIKeys, 2)
	if _, err := s.APIKeyByHash(ctx, over.Hash); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused key authenticates: %v", err)
	}
	if keys, err := s.ListAPIKeys(ctx, "alice"); err != nil || len(keys) != 2 {
		t.Fatalf("ListAPIKeys after a refusal: %d keys, %v", len(keys), err)
	}
	noErr(t, "CreateAPIKey of bob", s.CreateAPIKey(ctx, mk("bob", time.Time{})))
	// A revoked key frees room.
	noErr(t, "RevokeAPIKey", s.RevokeAPIKey(ctx, "alice", k1.ID))
	noErr(t, "CreateAPIKey after a revocation", s.CreateAPIKey(ctx, mk("alice", time.Time{})))
	wantLimit(t, "CreateAPIKey at the limit again", s.CreateAPIKey(ctx, mk("alice", time.Time{})), store.ResourceAPIKeys, 2)

	// Expired keys do not count.
	expired := mk("carol", time.Now().Add(-time.Hour))
	expired.CreatedAt = time.Now().Add(-2 * time.Hour)
	s2 := newStore(t, store.Limits{APIKeysPerUser: 1})
	noErr(t, "CreateAPIKey (expired)", s2.CreateAPIKey(ctx, expired))
	noErr(t, "CreateAPIKey beside an expired key", s2.CreateAPIKey(ctx, mk("carol", time.Time{})))
	wantLimit(t, "CreateAPIKey past the limit", s2.CreateAPIKey(ctx, mk("carol", time.Time{})), store.ResourceAPIKeys, 1)
}

// testNoLimits: zero limits cap nothing.
func testNoLimits(t *testing.T, newStore func(t *testing.T, l store.Limits) store.Store) {
	s := newStore(t, store.Limits{})
	p := newProject()
	for range 3 {
		if room, ok := store.Capability[store.SessionRoom](s); ok {
			noErr(t, "CheckSessionRoom without limits", room.CheckSessionRoom(t.Context(), "alice"))
		}
		create(t, s, newKey(p, "alice"), nil)
		noErr(t, "CreateLLMConfig", s.CreateLLMConfig(t.Context(), limitConfig(store.UserOwner("alice"), "c")))
	}
}

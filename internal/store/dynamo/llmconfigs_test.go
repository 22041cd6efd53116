package dynamo

import (
	"encoding/json"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/uuid"

	"agentchat/internal/store"
)

// skOf returns the sort key of a PutItem or DeleteItem input ("" for other
// operations).
func skOf(in any) string {
	switch in := in.(type) {
	case *dynamodb.PutItemInput:
		return getS(in.Item, attrSK)
	case *dynamodb.DeleteItemInput:
		return getS(in.Key, attrSK)
	}
	return ""
}

func TestLLMConfigItems(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	tests := []struct {
		name   string
		owner  store.Owner
		id     string
		pk, sk string
	}{
		{"user", store.UserOwner("alice"), "cfg-1", "U#alice", "LLMCFG#cfg-1"},
		{"group", store.GroupOwner("admins"), "cfg-1", "G#admins", "LLMCFG#cfg-1"},
		{"escaped", store.UserOwner("a#b"), "x#LLMCFG_DEFAULT%", "U#a%23b", "LLMCFG#x%23LLMCFG_DEFAULT%25"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &store.LLMConfig{ID: tc.id, Owner: tc.owner, Name: "n", ModelType: "text", IsDefault: true,
				Config: map[string]any{"temperature": 0.5, "extra": map[string]any{"k": "v"}}, APIKeyCipher: "v1.x.y", APIKeyHint: "…yz"}
			if err := s.CreateLLMConfig(ctx, c); err != nil {
				t.Fatal(err)
			}
			it, err := s.getItem(ctx, tc.pk, tc.sk)
			if err != nil || it == nil {
				t.Fatalf("item %s %s: %v, %v", tc.pk, tc.sk, it, err)
			}
			var cfg map[string]any
			if err := json.Unmarshal([]byte(getS(it, lcConfig)), &cfg); err != nil || !reflect.DeepEqual(cfg, c.Config) {
				t.Errorf("config attribute %q, want the JSON of %v (%v)", getS(it, lcConfig), c.Config, err)
			}
			if v, _ := getN(it, lcVersion); v != 1 || getS(it, lcID) != tc.id || getS(it, lcIncarnation) == "" {
				t.Errorf("item %v", it)
			}
			p, err := s.getItem(ctx, tc.pk, llmDefaultSK)
			if err != nil || p == nil {
				t.Fatalf("default pointer %s %s: %v, %v", tc.pk, llmDefaultSK, p, err)
			}
			if getS(p, lcID) != tc.id || getS(p, lcIncarnation) != getS(it, lcIncarnation) {
				t.Errorf("pointer %v does not name item %v", p, it)
			}
		})
	}
	// One pointer per owner, whatever the number of defaults set.
	owner := store.UserOwner("many")
	for range 5 {
		c := &store.LLMConfig{ID: uuid.NewString(), Owner: owner, IsDefault: true}
		if err := s.CreateLLMConfig(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	pointers := 0
	for _, it := range scan(t, s) {
		if getS(it, attrPK) == userPK("many") && getS(it, attrSK) == llmDefaultSK {
			pointers++
		}
	}
	if pointers != 1 {
		t.Errorf("%d default pointers for one owner, want 1", pointers)
	}
}

// A pointer that a failed (or raced) deletion left behind names a
// configuration that is gone: it is no default, and it does not make a
// configuration created again with the same id the default.
func TestLLMConfigPointerLeftBehind(t *testing.T) {
	var failPointerDelete atomic.Bool
	s := newObservedStore(t, "", func(op string, in any) error {
		if op == "DeleteItem" && skOf(in) == llmDefaultSK && failPointerDelete.Load() {
			return errors.New("injected failure")
		}
		return nil
	}, nil)
	ctx := t.Context()
	owner := store.UserOwner("alice")
	a := &store.LLMConfig{ID: "a", Owner: owner, Name: "a", IsDefault: true}
	b := &store.LLMConfig{ID: "b", Owner: owner, Name: "b"}
	for _, c := range []*store.LLMConfig{a, b} {
		if err := s.CreateLLMConfig(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	failPointerDelete.Store(true)
	if err := s.DeleteLLMConfig(ctx, owner, "a"); err != nil {
		t.Fatalf("DeleteLLMConfig with the pointer delete failing: %v", err)
	}
	failPointerDelete.Store(false)
	if p, err := s.readDefault(ctx, userPK("alice")); err != nil || p.id != "a" {
		t.Fatalf("pointer %+v, %v: want it left behind, naming a", p, err)
	}
	noDefault := func(what string) {
		t.Helper()
		if _, err := s.DefaultLLMConfig(ctx, owner); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: DefaultLLMConfig = %v, want ErrNotFound", what, err)
		}
		list, err := s.ListLLMConfigs(ctx, owner)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range list {
			if c.IsDefault {
				t.Errorf("%s: %s is marked default", what, c.ID)
			}
		}
	}
	noDefault("after the deletion")

	again := &store.LLMConfig{ID: "a", Owner: owner, Name: "a again"}
	if err := s.CreateLLMConfig(ctx, again); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetLLMConfig(ctx, owner, "a"); err != nil || got.IsDefault {
		t.Fatalf("re-created a: %+v, %v; want it not default", got, err)
	}
	noDefault("after re-creating the id")

	if _, err := s.SetDefaultLLMConfig(ctx, owner, "b"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.DefaultLLMConfig(ctx, owner); err != nil || got.ID != "b" {
		t.Fatalf("DefaultLLMConfig = %+v, %v; want b", got, err)
	}
}

// A creation with IsDefault whose pointer write fails leaves nothing
// behind, and the previous default stays.
func TestLLMConfigCreateDefaultFails(t *testing.T) {
	var failPointer atomic.Bool
	s := newObservedStore(t, "", func(op string, in any) error {
		if op == "PutItem" && skOf(in) == llmDefaultSK && failPointer.Load() {
			return errors.New("injected failure")
		}
		return nil
	}, nil)
	ctx := t.Context()
	owner := store.GroupOwner("admins")
	first := &store.LLMConfig{ID: "first", Owner: owner, IsDefault: true}
	if err := s.CreateLLMConfig(ctx, first); err != nil {
		t.Fatal(err)
	}
	failPointer.Store(true)
	second := &store.LLMConfig{ID: "second", Owner: owner, IsDefault: true}
	if err := s.CreateLLMConfig(ctx, second); err == nil {
		t.Fatal("CreateLLMConfig succeeded although its default could not be set")
	}
	failPointer.Store(false)
	if _, err := s.GetLLMConfig(ctx, owner, "second"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetLLMConfig(second) = %v, want ErrNotFound: the failed creation was not undone", err)
	}
	if got, err := s.DefaultLLMConfig(ctx, owner); err != nil || got.ID != "first" {
		t.Errorf("DefaultLLMConfig = %+v, %v; want first", got, err)
	}
	if err := s.CreateLLMConfig(ctx, second); err != nil {
		t.Errorf("CreateLLMConfig(second) again: %v", err)
	}
}

// UnsetDefaultLLMConfig reads the configuration, then deletes the pointer
// under a condition on its config_id: a SetDefaultLLMConfig of another
// configuration landing between the two keeps its default.
func TestLLMConfigUnsetRacesSetDefault(t *testing.T) {
	var (
		s     *Store
		race  atomic.Bool
		raced error
	)
	owner := store.UserOwner("alice")
	s = newObservedStore(t, "", func(op string, in any) error {
		if op == "DeleteItem" && skOf(in) == llmDefaultSK && race.CompareAndSwap(true, false) {
			_, raced = s.SetDefaultLLMConfig(t.Context(), owner, "other")
		}
		return nil
	}, nil)
	ctx := t.Context()
	for _, c := range []*store.LLMConfig{{ID: "a", Owner: owner, IsDefault: true}, {ID: "other", Owner: owner}} {
		if err := s.CreateLLMConfig(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	race.Store(true)
	if err := s.UnsetDefaultLLMConfig(ctx, owner, "a"); err != nil {
		t.Fatalf("UnsetDefaultLLMConfig(a) raced by SetDefaultLLMConfig(other): %v", err)
	}
	if race.Load() || raced != nil {
		t.Fatalf("the racing SetDefaultLLMConfig did not run before the pointer delete (pending %v, error %v)", race.Load(), raced)
	}
	if got, err := s.DefaultLLMConfig(ctx, owner); err != nil || got.ID != "other" {
		t.Fatalf("DefaultLLMConfig = %+v, %v; want other (the unset of a must not remove it)", got, err)
	}

	// Without a race the pointer goes; unsetting with no pointer is no
	// error.
	if err := s.UnsetDefaultLLMConfig(ctx, owner, "other"); err != nil {
		t.Fatal(err)
	}
	if p, err := s.readDefault(ctx, userPK("alice")); err != nil || p != (pointer{}) {
		t.Fatalf("pointer after unsetting %+v, %v; want none", p, err)
	}
	if err := s.UnsetDefaultLLMConfig(ctx, owner, "other"); err != nil {
		t.Errorf("UnsetDefaultLLMConfig with no pointer: %v, want nil", err)
	}
}

// TestDefaultLLMConfigTellsNoReference: a user's DefaultLLMConfig that
// read no default pointer says there is no default by reference either
// (store.ErrNoDefaultRef), so that a turn skips that read; with a pointer
// (own, to a deleted configuration, or a reference) it does not. A
// group's never does.
func TestDefaultLLMConfigTellsNoReference(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	alice, staff := store.UserOwner("alice"), store.GroupOwner("staff")
	claims := func(owner store.Owner) bool {
		t.Helper()
		_, err := s.DefaultLLMConfig(ctx, owner)
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("DefaultLLMConfig(%+v) = %v, want ErrNotFound", owner, err)
		}
		return errors.Is(err, store.ErrNoDefaultRef)
	}
	if !claims(alice) {
		t.Error("no configuration at all: no ErrNoDefaultRef")
	}
	if claims(staff) {
		t.Error("a group's DefaultLLMConfig says ErrNoDefaultRef")
	}
	own := &store.LLMConfig{ID: "own", Owner: alice, Name: "own"}
	g := &store.LLMConfig{ID: "g", Owner: staff, Name: "g"}
	for _, c := range []*store.LLMConfig{own, g} {
		if err := s.CreateLLMConfig(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if !claims(alice) {
		t.Error("configurations without a default: no ErrNoDefaultRef")
	}
	if _, err := s.SetDefaultLLMConfigRef(ctx, "alice", "staff", "g"); err != nil {
		t.Fatal(err)
	}
	if claims(alice) {
		t.Error("a default by reference, and DefaultLLMConfig says there is none")
	}
	if err := s.UnsetDefaultLLMConfigRef(ctx, "alice", "staff", "g"); err != nil {
		t.Fatal(err)
	}
	if !claims(alice) {
		t.Error("the reference unset: no ErrNoDefaultRef")
	}
}

// TestDefaultLLMConfigRefReadsTheGroupAtOnce: after the user's pointer,
// the group's configuration and the group's pointer are read at once
// (one round trip): each read waits here until the other has started,
// which reads in sequence would never do (a hang detector, not a timing
// assertion).
func TestDefaultLLMConfigRefReadsTheGroupAtOnce(t *testing.T) {
	var (
		armed                  atomic.Bool
		configRead, groupPoint = make(chan struct{}), make(chan struct{})
	)
	wait := func(ch <-chan struct{}) error {
		select {
		case <-ch:
			return nil
		case <-time.After(20 * time.Second):
			return errors.New("the other read of the group did not start: the reads ran in sequence")
		}
	}
	s := newObservedStore(t, "", func(op string, in any) error {
		g, ok := in.(*dynamodb.GetItemInput)
		if op != "GetItem" || !ok || !armed.Load() || getS(g.Key, attrPK) != groupPK("staff") {
			return nil
		}
		if getS(g.Key, attrSK) == llmDefaultSK {
			close(groupPoint)
			return wait(configRead)
		}
		close(configRead)
		return wait(groupPoint)
	}, nil)
	ctx := t.Context()
	g := &store.LLMConfig{ID: "g", Owner: store.GroupOwner("staff"), Name: "g", IsDefault: true}
	if err := s.CreateLLMConfig(ctx, g); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetDefaultLLMConfigRef(ctx, "alice", "staff", "g"); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	got, err := s.DefaultLLMConfigRef(ctx, "alice")
	if err != nil || got.ID != "g" || !got.IsDefault {
		t.Fatalf("DefaultLLMConfigRef = %+v, %v; want g, the group's default", got, err)
	}
}

package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/store"
)

// ---- LLM configurations ----

// llmTests are the LLM configuration tests of the suite, run by Run.
var llmTests = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"LLMConfigCreateGet", testLLMConfigCreateGet},
	{"LLMConfigCreateDuplicate", testLLMConfigCreateDuplicate},
	{"LLMConfigOwnership", testLLMConfigOwnership},
	{"LLMConfigListOrder", testLLMConfigListOrder},
	{"LLMConfigUpdate", testLLMConfigUpdate},
	{"LLMConfigVersionConflict", testLLMConfigVersionConflict},
	{"LLMConfigConcurrentUpdates", testLLMConfigConcurrentUpdates},
	{"LLMConfigDefault", testLLMConfigDefault},
	{"LLMConfigCreateDefault", testLLMConfigCreateDefault},
	{"LLMConfigConcurrentDefault", testLLMConfigConcurrentDefault},
	{"LLMConfigUnsetDefault", testLLMConfigUnsetDefault},
	{"LLMConfigConcurrentUnsetDefault", testLLMConfigConcurrentUnsetDefault},
	{"LLMConfigDelete", testLLMConfigDelete},
	{"LLMConfigRoundTrip", testLLMConfigRoundTrip},
	{"LLMConfigDefaultRef", testLLMConfigDefaultRef},
	{"LLMConfigDefaultRefDelete", testLLMConfigDefaultRefDelete},
	{"LLMConfigConcurrentDefaultRef", testLLMConfigConcurrentDefaultRef},
}

// sampleConfig is a typical Config, with the float64 numbers that
// encoding/json decodes.
func sampleConfig() map[string]any {
	return map[string]any{
		"provider": "openai", "base_url": "https://api.example.com/v1", "model": "gpt-4o-mini",
		"temperature": 0.7, "context_limit": 128.0, "max_tokens": 4096.0,
		"context_strategy": "balanced", "copilot_mode": "teaching_assistant",
	}
}

// newLLMConfig returns an unsaved configuration of owner with a fresh id.
func newLLMConfig(owner store.Owner, name string) *store.LLMConfig {
	return &store.LLMConfig{
		ID: uuid.NewString(), Owner: owner, Name: name, ModelType: "text",
		Config:       sampleConfig(),
		APIKeyCipher: "v1.0123abcd." + strings.Repeat("QUJD", 20), APIKeyHint: "sk-…abcd",
	}
}

// createLLM stores c and returns it as read back.
func createLLM(t *testing.T, s store.Store, c *store.LLMConfig) *store.LLMConfig {
	t.Helper()
	if err := s.CreateLLMConfig(t.Context(), c); err != nil {
		t.Fatalf("CreateLLMConfig(%s %+v): %v", c.ID, c.Owner, err)
	}
	return getLLM(t, s, c.Owner, c.ID)
}

func getLLM(t *testing.T, s store.Store, owner store.Owner, id string) *store.LLMConfig {
	t.Helper()
	got, err := s.GetLLMConfig(t.Context(), owner, id)
	if err != nil {
		t.Fatalf("GetLLMConfig(%+v, %s): %v", owner, id, err)
	}
	if got == nil {
		t.Fatalf("GetLLMConfig(%+v, %s) returned nil and no error", owner, id)
	}
	return got
}

func listLLM(t *testing.T, s store.Store, owner store.Owner) []store.LLMConfig {
	t.Helper()
	got, err := s.ListLLMConfigs(t.Context(), owner)
	if err != nil {
		t.Fatalf("ListLLMConfigs(%+v): %v", owner, err)
	}
	return got
}

func llmIDs(cs []store.LLMConfig) []string {
	ids := make([]string, len(cs))
	for i := range cs {
		ids[i] = cs[i].ID
	}
	return ids
}

// defaultsIn returns the ids marked IsDefault in cs.
func defaultsIn(cs []store.LLMConfig) []string {
	var ids []string
	for _, c := range cs {
		if c.IsDefault {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// checkDefault checks that the owner's default is want ("" for none) in
// DefaultLLMConfig, in the list and in GetLLMConfig of every listed config.
func checkDefault(t *testing.T, s store.Store, owner store.Owner, want string) {
	t.Helper()
	list := listLLM(t, s, owner)
	marked := defaultsIn(list)
	got, err := s.DefaultLLMConfig(t.Context(), owner)
	if want == "" {
		wantErr(t, fmt.Sprintf("DefaultLLMConfig(%+v) with no default", owner), err, store.ErrNotFound)
		if len(marked) != 0 {
			t.Errorf("ListLLMConfigs(%+v) marks %v as default, want none", owner, marked)
		}
	} else {
		if err != nil {
			t.Fatalf("DefaultLLMConfig(%+v): %v", owner, err)
		}
		if got.ID != want || !got.IsDefault || got.Owner != owner {
			t.Errorf("DefaultLLMConfig(%+v) = %s (IsDefault %v, owner %+v), want %s", owner, got.ID, got.IsDefault, got.Owner, want)
		}
		if len(marked) != 1 || marked[0] != want {
			t.Errorf("ListLLMConfigs(%+v) marks %v as default, want exactly [%s]", owner, marked, want)
		}
	}
	for _, c := range list {
		if g := getLLM(t, s, owner, c.ID); g.IsDefault != (c.ID == want) {
			t.Errorf("GetLLMConfig(%s).IsDefault = %v, want %v", c.ID, g.IsDefault, c.ID == want)
		}
	}
}

// diffLLMConfig describes how got differs from want ("" when equal), with
// timestamps compared to the millisecond and Config compared as decoded
// JSON values.
func diffLLMConfig(want, got *store.LLMConfig) string {
	var d []string
	add := func(field string, w, g any) { d = append(d, fmt.Sprintf("%s: got %v, want %v", field, g, w)) }
	if want.ID != got.ID {
		add("ID", want.ID, got.ID)
	}
	if want.Owner != got.Owner {
		add("Owner", want.Owner, got.Owner)
	}
	if want.Name != got.Name {
		add("Name", want.Name, got.Name)
	}
	if want.ModelType != got.ModelType {
		add("ModelType", want.ModelType, got.ModelType)
	}
	if !reflect.DeepEqual(normMap(want.Config), normMap(got.Config)) {
		add("Config", want.Config, got.Config)
	}
	if want.APIKeyCipher != got.APIKeyCipher {
		add("APIKeyCipher", want.APIKeyCipher, got.APIKeyCipher)
	}
	if want.APIKeyHint != got.APIKeyHint {
		add("APIKeyHint", want.APIKeyHint, got.APIKeyHint)
	}
	if want.IsDefault != got.IsDefault {
		add("IsDefault", want.IsDefault, got.IsDefault)
	}
	if want.Version != got.Version {
		add("Version", want.Version, got.Version)
	}
	for _, c := range []struct {
		name string
		w, g time.Time
	}{{"CreatedAt", want.CreatedAt, got.CreatedAt}, {"UpdatedAt", want.UpdatedAt, got.UpdatedAt}} {
		if !timeEq(c.w, c.g) {
			add(c.name, c.w, c.g)
		}
		if !c.g.IsZero() && c.g.Location() != time.UTC {
			add(c.name+" location", time.UTC, c.g.Location())
		}
	}
	return strings.Join(d, "; ")
}

func testLLMConfigCreateGet(t *testing.T, s store.Store) {
	ctx := t.Context()
	before := time.Now()
	created := time.Date(2025, 5, 6, 7, 8, 9, 123456789, time.FixedZone("X", 2*3600))
	tests := []struct {
		name string
		c    *store.LLMConfig
	}{
		{"user, zero timestamps", newLLMConfig(store.UserOwner("alice"), "mine")},
		{"group", newLLMConfig(store.GroupOwner("admins"), "shared")},
		{"given timestamps in another zone", func() *store.LLMConfig {
			c := newLLMConfig(store.UserOwner("alice"), "dated")
			c.CreatedAt, c.UpdatedAt = created, created.Add(time.Hour)
			return c
		}()},
		{"no API key, nil config", &store.LLMConfig{ID: uuid.NewString(), Owner: store.UserOwner("alice"), Name: "bare", ModelType: "embedding"}},
		{"odd ids and names", &store.LLMConfig{ID: "a#b%c/d?e " + uuid.NewString(), Owner: store.UserOwner("u#1%2"),
			Name: "名前 #%", ModelType: "other", Config: map[string]any{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			want := *c
			want.Version = 1
			given := !c.CreatedAt.IsZero()
			if err := s.CreateLLMConfig(ctx, c); err != nil {
				t.Fatalf("CreateLLMConfig: %v", err)
			}
			if c.Version != 1 || c.CreatedAt.IsZero() || c.UpdatedAt.IsZero() || c.ID != want.ID {
				t.Errorf("CreateLLMConfig filled id %s version %d, created %v, updated %v; want version 1 and timestamps",
					c.ID, c.Version, c.CreatedAt, c.UpdatedAt)
			}
			if want.CreatedAt.IsZero() {
				if c.CreatedAt.Before(before.Add(-time.Minute)) || c.CreatedAt.After(time.Now().Add(time.Minute)) {
					t.Errorf("CreatedAt = %v, want about now", c.CreatedAt)
				}
				want.CreatedAt, want.UpdatedAt = c.CreatedAt, c.UpdatedAt
			}
			got := getLLM(t, s, c.Owner, c.ID)
			if d := diffLLMConfig(&want, got); d != "" {
				t.Errorf("GetLLMConfig: %s", d)
			}
			if got.Config == nil {
				t.Error("GetLLMConfig: nil Config, want an empty map at least")
			}
			if given && !got.CreatedAt.Equal(created) {
				t.Errorf("CreatedAt = %v, want exactly %v", got.CreatedAt, created)
			}
		})
	}

	t.Run("empty id is filled", func(t *testing.T) {
		c := newLLMConfig(store.UserOwner("alice"), "no id")
		c.ID = ""
		if err := s.CreateLLMConfig(ctx, c); err != nil {
			t.Fatalf("CreateLLMConfig: %v", err)
		}
		if c.ID == "" {
			t.Fatal("CreateLLMConfig left the id empty")
		}
		getLLM(t, s, c.Owner, c.ID)
	})
	t.Run("invalid owner", func(t *testing.T) {
		for _, o := range []store.Owner{{}, {UserID: "alice", GroupID: "admins"}} {
			c := newLLMConfig(o, "x")
			if err := s.CreateLLMConfig(ctx, c); err == nil {
				t.Errorf("CreateLLMConfig(owner %+v) succeeded", o)
			}
			_, err := s.GetLLMConfig(ctx, o, c.ID)
			wantErr(t, fmt.Sprintf("GetLLMConfig(owner %+v)", o), err, store.ErrNotFound)
			if list := listLLM(t, s, o); len(list) != 0 {
				t.Errorf("ListLLMConfigs(owner %+v) = %v", o, llmIDs(list))
			}
		}
	})
	_, err := s.GetLLMConfig(ctx, store.UserOwner("alice"), uuid.NewString())
	wantErr(t, "GetLLMConfig(unknown)", err, store.ErrNotFound)
	_, err = s.GetLLMConfig(ctx, store.UserOwner("alice"), "")
	wantErr(t, "GetLLMConfig(empty id)", err, store.ErrNotFound)
}

func testLLMConfigCreateDuplicate(t *testing.T, s store.Store) {
	ctx := t.Context()
	alice := store.UserOwner("alice")
	orig := createLLM(t, s, newLLMConfig(alice, "first"))

	dup := newLLMConfig(alice, "second")
	dup.ID = orig.ID
	dup.IsDefault = true
	wantErr(t, "CreateLLMConfig(duplicate id)", s.CreateLLMConfig(ctx, dup), store.ErrExists)
	if d := diffLLMConfig(orig, getLLM(t, s, alice, orig.ID)); d != "" {
		t.Errorf("original after a refused duplicate: %s", d)
	}
	checkDefault(t, s, alice, "")

	// Ids are per owner: the same id is free for other owners, and each
	// owner's configuration stays its own.
	others := []store.Owner{store.UserOwner("bob"), store.GroupOwner("alice"), store.GroupOwner("admins")}
	for _, o := range others {
		c := newLLMConfig(o, "same id of "+o.UserID+o.GroupID)
		c.ID = orig.ID
		createLLM(t, s, c)
	}
	if d := diffLLMConfig(orig, getLLM(t, s, alice, orig.ID)); d != "" {
		t.Errorf("alice's config after others used its id: %s", d)
	}
	for _, o := range others {
		if got := getLLM(t, s, o, orig.ID); got.Name != "same id of "+o.UserID+o.GroupID || got.Owner != o {
			t.Errorf("GetLLMConfig(%+v) = %q of %+v", o, got.Name, got.Owner)
		}
	}
}

func testLLMConfigOwnership(t *testing.T, s store.Store) {
	ctx := t.Context()
	alice, bob, admins := store.UserOwner("alice"), store.UserOwner("bob"), store.GroupOwner("admins")
	// A user and a group with the same id are different owners.
	aliceGroup := store.GroupOwner("alice")
	owners := []store.Owner{alice, bob, admins, aliceGroup}
	configs := map[store.Owner]*store.LLMConfig{}
	for _, o := range owners {
		configs[o] = createLLM(t, s, newLLMConfig(o, "of "+o.UserID+"/"+o.GroupID))
		if _, err := s.SetDefaultLLMConfig(ctx, o, configs[o].ID); err != nil {
			t.Fatalf("SetDefaultLLMConfig(%+v): %v", o, err)
		}
		configs[o] = getLLM(t, s, o, configs[o].ID)
	}
	for _, owner := range owners {
		for _, other := range owners {
			if owner == other {
				continue
			}
			c := configs[other]
			t.Run(ownerName(owner)+" on "+ownerName(other)+"'s", func(t *testing.T) {
				_, err := s.GetLLMConfig(ctx, owner, c.ID)
				wantErr(t, "GetLLMConfig", err, store.ErrNotFound)
				upd := *c
				upd.Owner, upd.Name = owner, "stolen"
				_, err = s.UpdateLLMConfig(ctx, &upd, 0)
				wantErr(t, "UpdateLLMConfig", err, store.ErrNotFound)
				_, err = s.SetDefaultLLMConfig(ctx, owner, c.ID)
				wantErr(t, "SetDefaultLLMConfig", err, store.ErrNotFound)
				wantErr(t, "DeleteLLMConfig", s.DeleteLLMConfig(ctx, owner, c.ID), store.ErrNotFound)
			})
		}
	}
	for _, o := range owners {
		list := listLLM(t, s, o)
		if len(list) != 1 || list[0].ID != configs[o].ID {
			t.Errorf("ListLLMConfigs(%+v) = %v, want only [%s]", o, llmIDs(list), configs[o].ID)
		}
		if d := diffLLMConfig(configs[o], getLLM(t, s, o, configs[o].ID)); d != "" {
			t.Errorf("%+v's config after the others' attempts: %s", o, d)
		}
		checkDefault(t, s, o, configs[o].ID)
	}
	if list := listLLM(t, s, store.UserOwner("nobody")); len(list) != 0 {
		t.Errorf("ListLLMConfigs(nobody) = %v", llmIDs(list))
	}
	checkDefault(t, s, store.UserOwner("nobody"), "")
}

// ownerName is "user alice" or "group admins".
func ownerName(o store.Owner) string {
	if o.GroupID != "" {
		return "group " + o.GroupID
	}
	return "user " + o.UserID
}

func testLLMConfigListOrder(t *testing.T, s store.Store) {
	owner := store.UserOwner("alice")
	base := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	mk := func(id string, created time.Time) *store.LLMConfig {
		c := newLLMConfig(owner, id)
		c.ID, c.CreatedAt = id, created
		return c
	}
	// Created out of order, ids sorting against time; d1 and d2 tie on
	// CreatedAt and sort by id.
	for _, c := range []*store.LLMConfig{
		mk("b", base.Add(2*time.Hour)),
		mk("d2", base.Add(time.Hour)),
		mk("e", base),
		mk("d1", base.Add(time.Hour)),
		mk("a", base.Add(2*time.Hour+time.Nanosecond)),
	} {
		createLLM(t, s, c)
	}
	createLLM(t, s, newLLMConfig(store.UserOwner("bob"), "bob's"))
	want := []string{"e", "d1", "d2", "b", "a"}
	if got := llmIDs(listLLM(t, s, owner)); !reflect.DeepEqual(got, want) {
		t.Errorf("ListLLMConfigs order = %v, want %v", got, want)
	}
}

func testLLMConfigUpdate(t *testing.T, s store.Store) {
	ctx := t.Context()
	owner := store.UserOwner("alice")
	c := newLLMConfig(owner, "orig")
	c.CreatedAt = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	c.UpdatedAt = c.CreatedAt
	cur := createLLM(t, s, c)
	if _, err := s.SetDefaultLLMConfig(ctx, owner, cur.ID); err != nil {
		t.Fatal(err)
	}
	cur = getLLM(t, s, owner, cur.ID)
	other := createLLM(t, s, newLLMConfig(owner, "untouched"))

	// Each step changes some fields of what was read and passes the rest
	// back as read: the store writes exactly what it is given.
	steps := []struct {
		name   string
		change func(c *store.LLMConfig)
	}{
		{"name only", func(c *store.LLMConfig) { c.Name = "renamed" }},
		{"model type only", func(c *store.LLMConfig) { c.ModelType = "vision" }},
		{"one config key", func(c *store.LLMConfig) {
			m := map[string]any{}
			for k, v := range c.Config {
				m[k] = v
			}
			m["temperature"] = 0.2
			m["extra"] = map[string]any{"k": []any{1.0, "two"}}
			c.Config = m
		}},
		{"new API key", func(c *store.LLMConfig) { c.APIKeyCipher, c.APIKeyHint = "v1.ffffffff.bmV3", "sk-…9999" }},
		{"API key removed", func(c *store.LLMConfig) { c.APIKeyCipher, c.APIKeyHint = "", "" }},
		{"nothing", func(*store.LLMConfig) {}},
		{"everything", func(c *store.LLMConfig) {
			c.Name, c.ModelType, c.Config = "all", "multimodal", map[string]any{"provider": "ollama"}
			c.APIKeyCipher, c.APIKeyHint = "v1.00000000.YWxs", "…ll"
		}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			upd := *cur
			st.change(&upd)
			// Fields that are not mutable are ignored.
			upd.IsDefault, upd.Version, upd.CreatedAt = false, 99, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
			arg := upd
			got, err := s.UpdateLLMConfig(ctx, &arg, cur.Version)
			if err != nil {
				t.Fatalf("UpdateLLMConfig: %v", err)
			}
			if !reflect.DeepEqual(arg, upd) {
				t.Error("UpdateLLMConfig modified its argument")
			}
			want := upd
			want.IsDefault, want.Version, want.CreatedAt, want.UpdatedAt = true, cur.Version+1, cur.CreatedAt, got.UpdatedAt
			if d := diffLLMConfig(&want, got); d != "" {
				t.Errorf("UpdateLLMConfig returned: %s", d)
			}
			if got.UpdatedAt.Before(cur.UpdatedAt) || !got.UpdatedAt.After(c.CreatedAt) {
				t.Errorf("UpdatedAt %v not bumped (was %v)", got.UpdatedAt, cur.UpdatedAt)
			}
			read := getLLM(t, s, owner, cur.ID)
			if d := diffLLMConfig(got, read); d != "" {
				t.Errorf("GetLLMConfig after update: %s", d)
			}
			cur = read
		})
	}
	if cur.Version != int64(len(steps))+1 {
		t.Errorf("Version after %d updates = %d", len(steps), cur.Version)
	}
	if d := diffLLMConfig(other, getLLM(t, s, owner, other.ID)); d != "" {
		t.Errorf("another config changed: %s", d)
	}
	checkDefault(t, s, owner, cur.ID)

	missing := newLLMConfig(owner, "missing")
	_, err := s.UpdateLLMConfig(ctx, missing, 0)
	wantErr(t, "UpdateLLMConfig(unknown, 0)", err, store.ErrNotFound)
	_, err = s.UpdateLLMConfig(ctx, missing, 3)
	wantErr(t, "UpdateLLMConfig(unknown, 3)", err, store.ErrNotFound)
	if _, err := s.GetLLMConfig(ctx, owner, missing.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an update of an unknown config created it: %v", err)
	}
}

func testLLMConfigVersionConflict(t *testing.T, s store.Store) {
	ctx := t.Context()
	owner := store.GroupOwner("admins")
	c := createLLM(t, s, newLLMConfig(owner, "v1"))
	// Bring it to version 3.
	for i := range 2 {
		upd := *c
		upd.Name = fmt.Sprintf("v%d", i+2)
		var err error
		if c, err = s.UpdateLLMConfig(ctx, &upd, c.Version); err != nil {
			t.Fatalf("UpdateLLMConfig: %v", err)
		}
	}
	if c.Version != 3 {
		t.Fatalf("version %d after two updates, want 3", c.Version)
	}
	tests := []struct {
		name     string
		expected int64
		conflict bool
	}{
		{"stale version", 1, true},
		{"previous version", 2, true},
		{"future version", 4, true},
		{"negative version", -1, true},
		{"current version", 3, false},
		{"unconditional", 0, false},
		{"unconditional again", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := getLLM(t, s, owner, c.ID)
			upd := *before
			upd.Name = "by " + tc.name
			got, err := s.UpdateLLMConfig(ctx, &upd, tc.expected)
			if !tc.conflict {
				if err != nil {
					t.Fatalf("UpdateLLMConfig(expected %d at version %d): %v", tc.expected, before.Version, err)
				}
				if got.Version != before.Version+1 || got.Name != upd.Name {
					t.Errorf("UpdateLLMConfig = version %d name %q, want %d %q", got.Version, got.Name, before.Version+1, upd.Name)
				}
				if tc.expected == 3 && got.Version != 4 {
					t.Errorf("version %d, want 4", got.Version)
				}
				return
			}
			if !errors.Is(err, store.ErrVersionConflict) {
				t.Fatalf("UpdateLLMConfig(expected %d at version %d) = %v, %v; want ErrVersionConflict", tc.expected, before.Version, got, err)
			}
			var vc *store.VersionConflictError
			if !errors.As(err, &vc) {
				t.Fatalf("error %v is not a *VersionConflictError", err)
			}
			if vc.Expected != tc.expected || vc.Current != before.Version {
				t.Errorf("conflict = expected %d current %d, want %d and %d", vc.Expected, vc.Current, tc.expected, before.Version)
			}
			if errors.Is(err, store.ErrNotFound) {
				t.Errorf("a conflict is also ErrNotFound: %v", err)
			}
			if d := diffLLMConfig(before, getLLM(t, s, owner, c.ID)); d != "" {
				t.Errorf("a refused update changed the config: %s", d)
			}
		})
	}
}

func testLLMConfigConcurrentUpdates(t *testing.T, s store.Store) {
	ctx := t.Context()
	owner := store.UserOwner("alice")
	c := createLLM(t, s, newLLMConfig(owner, "contended"))
	const n = 8
	results := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			upd := *c
			upd.Name = fmt.Sprintf("writer %d", i)
			_, results[i] = s.UpdateLLMConfig(ctx, &upd, c.Version)
		})
	}
	wg.Wait()
	won := -1
	for i, err := range results {
		var vc *store.VersionConflictError
		switch {
		case err == nil:
			if won >= 0 {
				t.Errorf("writers %d and %d both updated version %d", won, i, c.Version)
			}
			won = i
		case errors.As(err, &vc):
			if vc.Expected != c.Version || vc.Current != c.Version+1 {
				t.Errorf("writer %d: conflict expected %d current %d, want %d and %d", i, vc.Expected, vc.Current, c.Version, c.Version+1)
			}
		default:
			t.Errorf("writer %d: %v", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no writer won")
	}
	got := getLLM(t, s, owner, c.ID)
	if got.Version != c.Version+1 || got.Name != fmt.Sprintf("writer %d", won) {
		t.Errorf("after the race: version %d name %q, want %d %q", got.Version, got.Name, c.Version+1, fmt.Sprintf("writer %d", won))
	}

	// Unconditional updates all apply.
	for i := range n {
		wg.Go(func() {
			upd := *got
			upd.Name = fmt.Sprintf("blind %d", i)
			_, results[i] = s.UpdateLLMConfig(ctx, &upd, 0)
		})
	}
	wg.Wait()
	for i, err := range results {
		noErr(t, fmt.Sprintf("unconditional writer %d", i), err)
	}
	if v := getLLM(t, s, owner, c.ID).Version; v != got.Version+n {
		t.Errorf("version after %d unconditional updates = %d, want %d", n, v, got.Version+n)
	}
}

func testLLMConfigDefault(t *testing.T, s store.Store) {
	ctx := t.Context()
	alice, admins := store.UserOwner("alice"), store.GroupOwner("admins")
	a := createLLM(t, s, newLLMConfig(alice, "a"))
	b := createLLM(t, s, newLLMConfig(alice, "b"))
	g := createLLM(t, s, newLLMConfig(admins, "g"))
	checkDefault(t, s, alice, "")
	if a.IsDefault || b.IsDefault {
		t.Error("a new config is default without IsDefault")
	}

	steps := []struct {
		owner store.Owner
		id    string
		want  error
		// defaults expected afterwards
		alice, admins string
	}{
		{alice, a.ID, nil, a.ID, ""},
		{alice, b.ID, nil, b.ID, ""},
		{alice, b.ID, nil, b.ID, ""}, // again: no change
		{alice, uuid.NewString(), store.ErrNotFound, b.ID, ""},
		{alice, g.ID, store.ErrNotFound, b.ID, ""}, // the group's config is not alice's
		{admins, g.ID, nil, b.ID, g.ID},
		{alice, a.ID, nil, a.ID, g.ID},
	}
	for i, st := range steps {
		got, err := s.SetDefaultLLMConfig(ctx, st.owner, st.id)
		what := fmt.Sprintf("step %d: SetDefaultLLMConfig(%+v, %s)", i, st.owner, st.id)
		if st.want != nil {
			wantErr(t, what, err, st.want)
		} else {
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			want := getLLM(t, s, st.owner, st.id)
			if d := diffLLMConfig(want, got); d != "" || !got.IsDefault {
				t.Errorf("%s returned IsDefault %v: %s", what, got.IsDefault, d)
			}
		}
		checkDefault(t, s, alice, st.alice)
		checkDefault(t, s, admins, st.admins)
	}
	// Setting a default is not an update.
	if got := getLLM(t, s, alice, a.ID); got.Version != 1 {
		t.Errorf("version after SetDefaultLLMConfig = %d, want 1", got.Version)
	}
	_, err := s.SetDefaultLLMConfig(ctx, store.Owner{}, a.ID)
	wantErr(t, "SetDefaultLLMConfig(no owner)", err, store.ErrNotFound)
	_, err = s.DefaultLLMConfig(ctx, store.Owner{})
	wantErr(t, "DefaultLLMConfig(no owner)", err, store.ErrNotFound)
}

func testLLMConfigCreateDefault(t *testing.T, s store.Store) {
	ctx := t.Context()
	owner := store.UserOwner("alice")
	a := newLLMConfig(owner, "a")
	a.IsDefault = true
	createLLM(t, s, a)
	checkDefault(t, s, owner, a.ID)

	plain := createLLM(t, s, newLLMConfig(owner, "plain"))
	if plain.IsDefault {
		t.Error("config created without IsDefault is the default")
	}
	checkDefault(t, s, owner, a.ID)

	b := newLLMConfig(owner, "b")
	b.IsDefault = true
	if got := createLLM(t, s, b); !got.IsDefault {
		t.Error("config created with IsDefault is not the default")
	}
	checkDefault(t, s, owner, b.ID)

	// Concurrent creations with IsDefault leave exactly one default.
	const n = 10
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		c := newLLMConfig(owner, fmt.Sprint("concurrent ", i))
		c.IsDefault = true
		ids[i] = c.ID
		wg.Go(func() { errs[i] = s.CreateLLMConfig(ctx, c) })
	}
	wg.Wait()
	for i, err := range errs {
		noErr(t, fmt.Sprintf("concurrent CreateLLMConfig %d", i), err)
	}
	d, err := s.DefaultLLMConfig(ctx, owner)
	noErr(t, "DefaultLLMConfig", err)
	found := false
	for _, id := range ids {
		found = found || id == d.ID
	}
	if !found {
		t.Errorf("default %s is not one of the concurrently created configs", d.ID)
	}
	checkDefault(t, s, owner, d.ID)
}

func testLLMConfigConcurrentDefault(t *testing.T, s store.Store) {
	ctx := t.Context()
	owner := store.UserOwner("alice")
	const n = 20
	ids := make([]string, n)
	for i := range n {
		ids[i] = createLLM(t, s, newLLMConfig(owner, fmt.Sprint("c", i))).ID
	}
	other := store.GroupOwner("admins")
	g := createLLM(t, s, newLLMConfig(other, "group default"))
	if _, err := s.SetDefaultLLMConfig(ctx, other, g.ID); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				var got *store.LLMConfig
				got, errs[i] = s.SetDefaultLLMConfig(ctx, owner, ids[i])
				if errs[i] == nil && (got.ID != ids[i] || !got.IsDefault) {
					errs[i] = fmt.Errorf("returned %s IsDefault %v", got.ID, got.IsDefault)
				}
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			noErr(t, fmt.Sprintf("round %d: SetDefaultLLMConfig %d", round, i), err)
		}
		d, err := s.DefaultLLMConfig(ctx, owner)
		noErr(t, "DefaultLLMConfig", err)
		checkDefault(t, s, owner, d.ID)
		checkDefault(t, s, other, g.ID)
	}
}

func testLLMConfigUnsetDefault(t *testing.T, s store.Store) {
	ctx := t.Context()
	alice, admins := store.UserOwner("alice"), store.GroupOwner("admins")
	a := createLLM(t, s, newLLMConfig(alice, "a"))
	b := createLLM(t, s, newLLMConfig(alice, "b"))
	g := createLLM(t, s, newLLMConfig(admins, "g"))
	if _, err := s.SetDefaultLLMConfig(ctx, admins, g.ID); err != nil {
		t.Fatal(err)
	}

	// No default at all: nothing to unset.
	noErr(t, "UnsetDefaultLLMConfig(a) with no default", s.UnsetDefaultLLMConfig(ctx, alice, a.ID))
	checkDefault(t, s, alice, "")

	if _, err := s.SetDefaultLLMConfig(ctx, alice, a.ID); err != nil {
		t.Fatal(err)
	}
	// A configuration that is not the default: the default stays.
	noErr(t, "UnsetDefaultLLMConfig(non-default)", s.UnsetDefaultLLMConfig(ctx, alice, b.ID))
	checkDefault(t, s, alice, a.ID)

	// Unknown ids, another owner's configuration and invalid owners are
	// not found, and change nothing.
	wantErr(t, "UnsetDefaultLLMConfig(unknown)", s.UnsetDefaultLLMConfig(ctx, alice, uuid.NewString()), store.ErrNotFound)
	wantErr(t, "UnsetDefaultLLMConfig(empty id)", s.UnsetDefaultLLMConfig(ctx, alice, ""), store.ErrNotFound)
	wantErr(t, "UnsetDefaultLLMConfig(the group's config as alice)", s.UnsetDefaultLLMConfig(ctx, alice, g.ID), store.ErrNotFound)
	wantErr(t, "UnsetDefaultLLMConfig(alice's config as the group)", s.UnsetDefaultLLMConfig(ctx, admins, a.ID), store.ErrNotFound)
	wantErr(t, "UnsetDefaultLLMConfig(alice's default as alice's group namesake)",
		s.UnsetDefaultLLMConfig(ctx, store.GroupOwner("alice"), a.ID), store.ErrNotFound)
	for _, o := range []store.Owner{{}, {UserID: "alice", GroupID: "admins"}} {
		wantErr(t, fmt.Sprintf("UnsetDefaultLLMConfig(owner %+v)", o), s.UnsetDefaultLLMConfig(ctx, o, a.ID), store.ErrNotFound)
	}
	checkDefault(t, s, alice, a.ID)
	checkDefault(t, s, admins, g.ID)

	// The default: no default is left, the other owner's stays.
	noErr(t, "UnsetDefaultLLMConfig(default)", s.UnsetDefaultLLMConfig(ctx, alice, a.ID))
	checkDefault(t, s, alice, "")
	checkDefault(t, s, admins, g.ID)
	// Again: nothing to do.
	noErr(t, "UnsetDefaultLLMConfig(default) again", s.UnsetDefaultLLMConfig(ctx, alice, a.ID))
	checkDefault(t, s, alice, "")
	// Unsetting a default is not an update.
	for _, c := range []*store.LLMConfig{a, b} {
		want := *c
		want.IsDefault = false
		if d := diffLLMConfig(&want, getLLM(t, s, alice, c.ID)); d != "" {
			t.Errorf("%s after unsetting defaults: %s", c.Name, d)
		}
	}

	// A default can be set again afterwards, and unset by the group too.
	if _, err := s.SetDefaultLLMConfig(ctx, alice, b.ID); err != nil {
		t.Fatal(err)
	}
	checkDefault(t, s, alice, b.ID)
	noErr(t, "UnsetDefaultLLMConfig(group default)", s.UnsetDefaultLLMConfig(ctx, admins, g.ID))
	checkDefault(t, s, admins, "")
	checkDefault(t, s, alice, b.ID)

	// A deleted configuration is not found, also when it was the default.
	noErr(t, "DeleteLLMConfig(b)", s.DeleteLLMConfig(ctx, alice, b.ID))
	wantErr(t, "UnsetDefaultLLMConfig(deleted)", s.UnsetDefaultLLMConfig(ctx, alice, b.ID), store.ErrNotFound)
	checkDefault(t, s, alice, "")
}

func testLLMConfigConcurrentUnsetDefault(t *testing.T, s store.Store) {
	ctx := t.Context()
	owner := store.UserOwner("alice")
	id := createLLM(t, s, newLLMConfig(owner, "unset")).ID
	other := createLLM(t, s, newLLMConfig(owner, "other")).ID
	// race runs f and g at the same time and returns their errors.
	race := func(f, g func() error) (ef, eg error) {
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() { <-start; ef = f() })
		wg.Go(func() { <-start; eg = g() })
		close(start)
		wg.Wait()
		return ef, eg
	}
	const rounds = 10
	for round := range rounds {
		// SetDefault(other) against Unset(id) while id is the default: in
		// either order the end state is other. An unset after the set finds
		// another default and leaves it; an unset before it is overwritten.
		if _, err := s.SetDefaultLLMConfig(ctx, owner, id); err != nil {
			t.Fatal(err)
		}
		errSet, errUnset := race(
			func() error { _, err := s.SetDefaultLLMConfig(ctx, owner, other); return err },
			func() error { return s.UnsetDefaultLLMConfig(ctx, owner, id) })
		noErr(t, fmt.Sprintf("round %d: SetDefaultLLMConfig(other)", round), errSet)
		noErr(t, fmt.Sprintf("round %d: UnsetDefaultLLMConfig(id)", round), errUnset)
		checkDefault(t, s, owner, other)

		// SetDefault(id) against Unset(id): either order is allowed, the
		// end state is id or no default, never other.
		errSet, errUnset = race(
			func() error { _, err := s.SetDefaultLLMConfig(ctx, owner, id); return err },
			func() error { return s.UnsetDefaultLLMConfig(ctx, owner, id) })
		noErr(t, fmt.Sprintf("round %d: SetDefaultLLMConfig(id)", round), errSet)
		noErr(t, fmt.Sprintf("round %d: UnsetDefaultLLMConfig(id) against setting it", round), errUnset)
		d, err := s.DefaultLLMConfig(ctx, owner)
		switch {
		case errors.Is(err, store.ErrNotFound):
			checkDefault(t, s, owner, "")
		case err != nil:
			t.Fatalf("round %d: DefaultLLMConfig: %v", round, err)
		case d.ID != id:
			t.Fatalf("round %d: default %s after SetDefault(id) raced Unset(id), want id or none", round, d.ID)
		default:
			checkDefault(t, s, owner, id)
		}
	}

	// Unset(id) against Delete(id) while id is the default: no default is
	// left and the unset sees the configuration or not.
	for round := range rounds {
		c := createLLM(t, s, newLLMConfig(owner, fmt.Sprint("doomed ", round)))
		if _, err := s.SetDefaultLLMConfig(ctx, owner, c.ID); err != nil {
			t.Fatal(err)
		}
		errDel, errUnset := race(
			func() error { return s.DeleteLLMConfig(ctx, owner, c.ID) },
			func() error { return s.UnsetDefaultLLMConfig(ctx, owner, c.ID) })
		noErr(t, fmt.Sprintf("round %d: DeleteLLMConfig", round), errDel)
		if errUnset != nil && !errors.Is(errUnset, store.ErrNotFound) {
			t.Fatalf("round %d: UnsetDefaultLLMConfig against a deletion: %v, want nil or ErrNotFound", round, errUnset)
		}
		checkDefault(t, s, owner, "")
	}
}

func testLLMConfigDelete(t *testing.T, s store.Store) {
	ctx := t.Context()
	owner := store.UserOwner("alice")
	a := createLLM(t, s, newLLMConfig(owner, "a"))
	b := createLLM(t, s, newLLMConfig(owner, "b"))
	c := createLLM(t, s, newLLMConfig(owner, "c"))
	bob := createLLM(t, s, newLLMConfig(store.UserOwner("bob"), "bob's"))
	if _, err := s.SetDefaultLLMConfig(ctx, owner, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetDefaultLLMConfig(ctx, bob.Owner, bob.ID); err != nil {
		t.Fatal(err)
	}

	// A config that is not the default: the default stays.
	noErr(t, "DeleteLLMConfig(a)", s.DeleteLLMConfig(ctx, owner, a.ID))
	_, err := s.GetLLMConfig(ctx, owner, a.ID)
	wantErr(t, "GetLLMConfig(deleted)", err, store.ErrNotFound)
	wantErr(t, "DeleteLLMConfig(deleted)", s.DeleteLLMConfig(ctx, owner, a.ID), store.ErrNotFound)
	_, err = s.UpdateLLMConfig(ctx, a, 0)
	wantErr(t, "UpdateLLMConfig(deleted)", err, store.ErrNotFound)
	_, err = s.SetDefaultLLMConfig(ctx, owner, a.ID)
	wantErr(t, "SetDefaultLLMConfig(deleted)", err, store.ErrNotFound)
	checkDefault(t, s, owner, b.ID)

	// The default: no default is left.
	noErr(t, "DeleteLLMConfig(default)", s.DeleteLLMConfig(ctx, owner, b.ID))
	checkDefault(t, s, owner, "")
	if got := llmIDs(listLLM(t, s, owner)); !reflect.DeepEqual(got, []string{c.ID}) {
		t.Errorf("ListLLMConfigs after deletes = %v, want [%s]", got, c.ID)
	}

	// The deleted default's id, created again, is not the default.
	again := newLLMConfig(owner, "b again")
	again.ID = b.ID
	if got := createLLM(t, s, again); got.IsDefault || got.Version != 1 || got.Name != "b again" {
		t.Errorf("re-created config: IsDefault %v version %d name %q", got.IsDefault, got.Version, got.Name)
	}
	checkDefault(t, s, owner, "")
	if _, err := s.SetDefaultLLMConfig(ctx, owner, c.ID); err != nil {
		t.Fatal(err)
	}
	checkDefault(t, s, owner, c.ID)

	wantErr(t, "DeleteLLMConfig(unknown)", s.DeleteLLMConfig(ctx, owner, uuid.NewString()), store.ErrNotFound)
	wantErr(t, "DeleteLLMConfig(empty id)", s.DeleteLLMConfig(ctx, owner, ""), store.ErrNotFound)
	wantErr(t, "DeleteLLMConfig(no owner)", s.DeleteLLMConfig(ctx, store.Owner{}, c.ID), store.ErrNotFound)
	checkDefault(t, s, bob.Owner, bob.ID)
}

func testLLMConfigRoundTrip(t *testing.T, s store.Store) {
	ctx := t.Context()
	owner := store.UserOwner("alice")
	tests := []struct {
		name   string
		config map[string]any
		cipher string
		hint   string
		// asJSON compares Config by its JSON encoding instead of as Go
		// values: Go integers read back as float64.
		asJSON bool
	}{
		{name: "typical", config: sampleConfig(), cipher: "v1.0a1b2c3d.AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", hint: "sk-…wxyz"},
		{name: "nested and extra keys", config: map[string]any{
			"provider": "azure", "model": "gpt-4o",
			"extra_headers": map[string]any{"X-Org": "lab", "nested": map[string]any{"deep": []any{1.5, "x", nil, true, map[string]any{}}}},
			"stop":          []any{"\n\n", "</s>"},
			"api_version":   "2024-02-01", "null_value": nil, "empty_list": []any{}, "empty_object": map[string]any{},
			"unicode": "名前 – ünïcødé 🔑", "html": "<a href='x'>&amp;</a>",
		}},
		{name: "float values", config: map[string]any{
			"temperature": 0.1, "top_p": 0.95, "penalty": -1.25, "zero": 0.0, "tiny": 1e-10, "huge": 1e300,
			"third": 1.0 / 3, "max_float": math.MaxFloat64, "smallest": math.SmallestNonzeroFloat64,
		}},
		{name: "integer values", config: map[string]any{
			"context_limit": 128, "max_tokens": int64(4096), "seed": uint32(42), "big": int64(1) << 53, "negative": -7,
			"list": []any{1, 2, 3}, "nested": map[string]any{"n": int8(5)},
		}, asJSON: true},
		{name: "json numbers", config: map[string]any{"n": json.Number("12.50"), "i": json.Number("7")}, asJSON: true},
		{name: "nil config", config: nil},
		{name: "long cipher, unicode hint", config: map[string]any{}, cipher: "v1.deadbeef." + strings.Repeat("A-_z", 300), hint: "…é🔑"},
	}
	jsonOf := func(m map[string]any) string {
		if len(m) == 0 {
			return "{}"
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("marshal %v: %v", m, err)
		}
		// Decode and encode again, so that a number's text is as
		// encoding/json writes a float64.
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		b, _ = json.Marshal(v)
		return string(b)
	}
	check := func(t *testing.T, what string, want map[string]any, asJSON bool, got *store.LLMConfig) {
		t.Helper()
		if got.Config == nil {
			t.Errorf("%s: nil Config", what)
		}
		if asJSON {
			if g, w := jsonOf(got.Config), jsonOf(want); g != w {
				t.Errorf("%s: Config = %s, want %s", what, g, w)
			}
			for k, v := range got.Config {
				if _, ok := v.(float64); !ok && k != "list" && k != "nested" {
					t.Errorf("%s: Config[%q] is %T, want float64", what, k, v)
				}
			}
			return
		}
		if !reflect.DeepEqual(normMap(got.Config), normMap(want)) {
			t.Errorf("%s: Config = %#v, want %#v", what, got.Config, want)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &store.LLMConfig{ID: uuid.NewString(), Owner: owner, Name: tc.name, ModelType: "text",
				Config: tc.config, APIKeyCipher: tc.cipher, APIKeyHint: tc.hint}
			got := createLLM(t, s, c)
			check(t, "GetLLMConfig", tc.config, tc.asJSON, got)
			if got.APIKeyCipher != tc.cipher || got.APIKeyHint != tc.hint {
				t.Errorf("APIKeyCipher/Hint = %q / %q, want %q / %q", got.APIKeyCipher, got.APIKeyHint, tc.cipher, tc.hint)
			}
			var listed *store.LLMConfig
			for _, l := range listLLM(t, s, owner) {
				if l.ID == c.ID {
					listed = &l
				}
			}
			if listed == nil {
				t.Fatal("not listed")
			}
			check(t, "ListLLMConfigs", tc.config, tc.asJSON, listed)

			// The same values through an update.
			upd := *got
			upd.Config, upd.APIKeyCipher, upd.APIKeyHint = tc.config, tc.cipher+"2", tc.hint+"2"
			res, err := s.UpdateLLMConfig(ctx, &upd, got.Version)
			noErr(t, "UpdateLLMConfig", err)
			check(t, "UpdateLLMConfig", tc.config, tc.asJSON, res)
			after := getLLM(t, s, owner, c.ID)
			check(t, "GetLLMConfig after update", tc.config, tc.asJSON, after)
			if after.APIKeyCipher != tc.cipher+"2" || after.APIKeyHint != tc.hint+"2" {
				t.Errorf("after update: APIKeyCipher/Hint = %q / %q", after.APIKeyCipher, after.APIKeyHint)
			}
		})
	}
	t.Run("unencodable config", func(t *testing.T) {
		c := newLLMConfig(owner, "bad")
		c.Config = map[string]any{"f": func() {}}
		if err := s.CreateLLMConfig(ctx, c); err == nil {
			t.Fatal("CreateLLMConfig with a func value succeeded")
		}
		_, err := s.GetLLMConfig(ctx, owner, c.ID)
		wantErr(t, "GetLLMConfig(refused)", err, store.ErrNotFound)
	})
}

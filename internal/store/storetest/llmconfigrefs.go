package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"

	"agentchat/internal/store"
)

// checkRef checks that the user's default is the reference to the group
// configuration want ("" for none), and that the user's own
// configurations then have no default when want is set.
func checkRef(t *testing.T, s store.Store, user string, want *store.LLMConfig) {
	t.Helper()
	// A store may spare the read of the reference (store.ErrNoDefaultRef),
	// never when there is one.
	if _, err := s.DefaultLLMConfig(t.Context(), store.UserOwner(user)); want != nil && errors.Is(err, store.ErrNoDefaultRef) {
		t.Errorf("DefaultLLMConfig(%s) says there is no default by reference (%v), but there is %s", user, err, want.ID)
	}
	got, err := s.DefaultLLMConfigRef(t.Context(), user)
	if want == nil {
		wantErr(t, fmt.Sprintf("DefaultLLMConfigRef(%s) with no reference", user), err, store.ErrNotFound)
		return
	}
	if err != nil {
		t.Fatalf("DefaultLLMConfigRef(%s): %v", user, err)
	}
	if got.ID != want.ID || got.Owner != want.Owner || got.Name != want.Name {
		t.Errorf("DefaultLLMConfigRef(%s) = %s of %+v (%q), want %s of %+v", user, got.ID, got.Owner, got.Name, want.ID, want.Owner)
	}
	checkDefault(t, s, store.UserOwner(user), "")
}

// testLLMConfigDefaultRef: a user's default by reference to a group's
// configuration replaces their own default and is replaced by it; the
// user's own configurations are not marked; unset is conditional.
func testLLMConfigDefaultRef(t *testing.T, s store.Store) {
	ctx := t.Context()
	alice, staff, labs := store.UserOwner("alice"), store.GroupOwner("staff"), store.GroupOwner("labs")
	a := createLLM(t, s, newLLMConfig(alice, "a"))
	g1 := createLLM(t, s, newLLMConfig(staff, "g1"))
	g2 := createLLM(t, s, newLLMConfig(staff, "g2"))
	l := createLLM(t, s, newLLMConfig(labs, "l"))
	checkRef(t, s, "alice", nil)

	got, err := s.SetDefaultLLMConfigRef(ctx, "alice", "staff", g1.ID)
	noErr(t, "SetDefaultLLMConfigRef(g1)", err)
	if got.ID != g1.ID || got.Owner != staff || got.IsDefault {
		t.Errorf("SetDefaultLLMConfigRef returned %s of %+v (IsDefault %v), want g1 of staff, not the group's default", got.ID, got.Owner, got.IsDefault)
	}
	checkRef(t, s, "alice", g1)
	checkDefault(t, s, staff, "") // the group's own default is untouched

	// Unknown configurations, or one of another group: ErrNotFound, no change.
	for _, tc := range []struct{ group, id string }{{"staff", uuid.NewString()}, {"labs", g1.ID}, {"staff", l.ID}, {"", g1.ID}, {"staff", ""}} {
		_, err := s.SetDefaultLLMConfigRef(ctx, "alice", tc.group, tc.id)
		wantErr(t, fmt.Sprintf("SetDefaultLLMConfigRef(%q, %q)", tc.group, tc.id), err, store.ErrNotFound)
	}
	_, err = s.SetDefaultLLMConfigRef(ctx, "", "staff", g1.ID)
	wantErr(t, "SetDefaultLLMConfigRef(no user)", err, store.ErrNotFound)
	checkRef(t, s, "alice", g1)

	// The group's mark shows on the reference.
	_, err = s.SetDefaultLLMConfig(ctx, staff, g1.ID)
	noErr(t, "SetDefaultLLMConfig(staff, g1)", err)
	if got, err := s.DefaultLLMConfigRef(ctx, "alice"); err != nil || !got.IsDefault {
		t.Errorf("DefaultLLMConfigRef after the group's default = %+v, %v; want IsDefault", got, err)
	}
	// A group edit reaches the user (a reference, not a copy).
	g1.Name = "g1 edited"
	_, err = s.UpdateLLMConfig(ctx, g1, 0)
	noErr(t, "UpdateLLMConfig(g1)", err)
	checkRef(t, s, "alice", g1)

	// Her own default replaces the reference, and the other way round.
	_, err = s.SetDefaultLLMConfig(ctx, alice, a.ID)
	noErr(t, "SetDefaultLLMConfig(alice, a)", err)
	checkDefault(t, s, alice, a.ID)
	_, err = s.DefaultLLMConfigRef(ctx, "alice")
	wantErr(t, "DefaultLLMConfigRef after her own default", err, store.ErrNotFound)
	_, err = s.SetDefaultLLMConfigRef(ctx, "alice", "staff", g2.ID)
	noErr(t, "SetDefaultLLMConfigRef(g2)", err)
	checkRef(t, s, "alice", g2)
	created := newLLMConfig(alice, "created default")
	created.IsDefault = true
	createLLM(t, s, created)
	checkDefault(t, s, alice, created.ID)
	_, err = s.DefaultLLMConfigRef(ctx, "alice")
	wantErr(t, "DefaultLLMConfigRef after a creation with IsDefault", err, store.ErrNotFound)

	// Unset is conditional on the reference.
	_, err = s.SetDefaultLLMConfigRef(ctx, "alice", "staff", g2.ID)
	noErr(t, "SetDefaultLLMConfigRef(g2)", err)
	noErr(t, "UnsetDefaultLLMConfig(alice, a)", s.UnsetDefaultLLMConfig(ctx, alice, a.ID))
	noErr(t, "UnsetDefaultLLMConfigRef(g1)", s.UnsetDefaultLLMConfigRef(ctx, "alice", "staff", g1.ID))
	noErr(t, "UnsetDefaultLLMConfigRef(labs, g2)", s.UnsetDefaultLLMConfigRef(ctx, "alice", "labs", g2.ID))
	noErr(t, "UnsetDefaultLLMConfigRef(bob)", s.UnsetDefaultLLMConfigRef(ctx, "bob", "staff", g2.ID))
	checkRef(t, s, "alice", g2)
	noErr(t, "UnsetDefaultLLMConfigRef(g2)", s.UnsetDefaultLLMConfigRef(ctx, "alice", "staff", g2.ID))
	checkRef(t, s, "alice", nil)
	checkDefault(t, s, alice, "")
	noErr(t, "UnsetDefaultLLMConfigRef again", s.UnsetDefaultLLMConfigRef(ctx, "alice", "staff", g2.ID))

	// Users are apart.
	_, err = s.SetDefaultLLMConfigRef(ctx, "alice", "staff", g2.ID)
	noErr(t, "SetDefaultLLMConfigRef(alice, g2)", err)
	_, err = s.SetDefaultLLMConfigRef(ctx, "bob", "labs", l.ID)
	noErr(t, "SetDefaultLLMConfigRef(bob, l)", err)
	checkRef(t, s, "alice", g2)
	checkRef(t, s, "bob", l)
	_, err = s.DefaultLLMConfigRef(ctx, "")
	wantErr(t, "DefaultLLMConfigRef(no user)", err, store.ErrNotFound)
}

// testLLMConfigDefaultRefDelete: deleting the group's configuration drops
// the reference, also when its id is created again; deleting a user's own
// configuration of the same id does not.
func testLLMConfigDefaultRefDelete(t *testing.T, s store.Store) {
	ctx := t.Context()
	alice, staff := store.UserOwner("alice"), store.GroupOwner("staff")
	g := createLLM(t, s, newLLMConfig(staff, "g"))
	h := createLLM(t, s, newLLMConfig(staff, "h"))
	_, err := s.SetDefaultLLMConfigRef(ctx, "alice", "staff", g.ID)
	noErr(t, "SetDefaultLLMConfigRef(g)", err)
	_, err = s.SetDefaultLLMConfigRef(ctx, "bob", "staff", h.ID)
	noErr(t, "SetDefaultLLMConfigRef(bob, h)", err)

	// Alice's own configuration with the id of the referenced one.
	same := newLLMConfig(alice, "same id")
	same.ID = g.ID
	createLLM(t, s, same)
	noErr(t, "DeleteLLMConfig(alice's same id)", s.DeleteLLMConfig(ctx, alice, g.ID))
	checkRef(t, s, "alice", g)

	noErr(t, "DeleteLLMConfig(staff, g)", s.DeleteLLMConfig(ctx, staff, g.ID))
	checkRef(t, s, "alice", nil)
	checkDefault(t, s, alice, "")
	again := newLLMConfig(staff, "g again")
	again.ID = g.ID
	createLLM(t, s, again)
	checkRef(t, s, "alice", nil)
	checkRef(t, s, "bob", h)
	_, err = s.SetDefaultLLMConfigRef(ctx, "alice", "staff", g.ID)
	noErr(t, "SetDefaultLLMConfigRef(g again)", err)
	checkRef(t, s, "alice", again)
}

// testLLMConfigConcurrentDefaultRef: concurrent defaults of both kinds
// leave exactly one default.
func testLLMConfigConcurrentDefaultRef(t *testing.T, s store.Store) {
	ctx := t.Context()
	alice, staff := store.UserOwner("alice"), store.GroupOwner("staff")
	const n = 6
	own := make([]string, n)
	refs := make([]string, n)
	for i := range n {
		own[i] = createLLM(t, s, newLLMConfig(alice, fmt.Sprint("own ", i))).ID
		refs[i] = createLLM(t, s, newLLMConfig(staff, fmt.Sprint("group ", i))).ID
	}
	for round := range 3 {
		var wg sync.WaitGroup
		errs := make([]error, 2*n)
		for i := range n {
			wg.Go(func() { _, errs[2*i] = s.SetDefaultLLMConfig(ctx, alice, own[i]) })
			wg.Go(func() { _, errs[2*i+1] = s.SetDefaultLLMConfigRef(ctx, "alice", "staff", refs[i]) })
		}
		wg.Wait()
		for i, err := range errs {
			noErr(t, fmt.Sprintf("round %d: write %d", round, i), err)
		}
		d, derr := s.DefaultLLMConfig(ctx, alice)
		r, rerr := s.DefaultLLMConfigRef(ctx, "alice")
		switch {
		case derr == nil && rerr == nil:
			t.Fatalf("round %d: both her own default %s and the reference %s", round, d.ID, r.ID)
		case derr != nil && rerr != nil:
			t.Fatalf("round %d: no default at all: %v / %v", round, derr, rerr)
		case derr == nil:
			checkDefault(t, s, alice, d.ID)
		default:
			checkDefault(t, s, alice, "")
		}
	}
}

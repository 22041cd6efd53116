package llmconfig

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"agentchat/internal/auth"
	"agentchat/internal/store"
)

// defaultsStore answers the two reads of Effective and counts the read of
// the default by reference; any other call panics (the embedded nil).
type defaultsStore struct {
	store.LLMConfigs
	own     error // DefaultLLMConfig's error
	ref     *store.LLMConfig
	refRead int
}

func (d *defaultsStore) DefaultLLMConfig(_ context.Context, owner store.Owner) (*store.LLMConfig, error) {
	if owner.GroupID != "" {
		return nil, store.ErrNotFound
	}
	return nil, d.own
}

func (d *defaultsStore) DefaultLLMConfigRef(context.Context, string) (*store.LLMConfig, error) {
	d.refRead++
	if d.ref == nil {
		return nil, store.ErrNotFound
	}
	return d.ref, nil
}

// TestEffectiveSparesTheReference: a user without a default of their own
// is asked for their default by reference unless the first read said
// there is none (store.ErrNoDefaultRef).
func TestEffectiveSparesTheReference(t *testing.T) {
	staff := &store.LLMConfig{ID: "g1", Owner: store.GroupOwner("staff")}
	groups := staticGroups{{ID: "staff"}}
	for _, tc := range []struct {
		name     string
		own      error
		ref      *store.LLMConfig
		wantRead int
		want     *store.LLMConfig
	}{
		{"no pointer at all", fmt.Errorf("default: %w (%w)", store.ErrNotFound, store.ErrNoDefaultRef), nil, 0, nil},
		{"not found, nothing said", fmt.Errorf("default: %w", store.ErrNotFound), nil, 1, nil},
		{"a reference", fmt.Errorf("default: %w", store.ErrNotFound), staff, 1, staff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &defaultsStore{own: tc.own, ref: tc.ref}
			got, _, err := Effective(context.Background(), st, groups, auth.Identity{UserID: "alice"})
			if st.refRead != tc.wantRead {
				t.Errorf("the reference was read %d times, want %d", st.refRead, tc.wantRead)
			}
			switch {
			case tc.want == nil && !errors.Is(err, store.ErrNotFound):
				t.Errorf("Effective = %+v, %v; want ErrNotFound", got, err)
			case tc.want != nil && (err != nil || got.ID != tc.want.ID):
				t.Errorf("Effective = %+v, %v; want %s", got, err, tc.want.ID)
			}
		})
	}
}

// staticGroups is a GroupSource of fixed groups.
type staticGroups []Group

func (g staticGroups) Groups(context.Context, auth.Identity) ([]Group, error) { return g, nil }

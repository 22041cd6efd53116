// Package llmconfig is the domain of the users' and groups' LLM model
// configurations: the effective configuration of a user (own default,
// else a group's), the groups a user inherits configurations from, the
// providers' default base URLs and the binding of a sealed API key to its
// record. The per-user llm.Resolver built on them is package userllm
// below, apart so that the functions that only manage configurations
// link no LLM client; the HTTP routes that manage the configurations are
// in internal/httpapi/llmconfigs.
package llmconfig

import (
	"context"
	"errors"
	"fmt"

	"agentchat/internal/auth"
	"agentchat/internal/store"
)

// Effective returns the configuration a turn of id uses: the user's own
// default, else the group configuration the user has made their default
// by reference (store.LLMConfigs.SetDefaultLLMConfigRef) while they are
// in that group, else the default of the first of the user's groups (in
// the GroupSource's order) that has one. The group is the one whose
// configuration it is, nil for the user's own.
// It returns an error matching store.ErrNotFound when there is none, and
// the GroupSource's error (wrapped) when the groups cannot be known. The
// user's own default costs one store read and no GNS3 call; so does the
// absence of any default of the user's when the store says so with
// store.ErrNoDefaultRef (the reference is then not read). groups nil
// means NoGroups. The API key stays sealed: open APIKeyCipher (when not
// empty) with the secrets.Box and KeyAAD(c.Owner, c.ID).
func Effective(ctx context.Context, st store.LLMConfigs, groups GroupSource, id auth.Identity) (*store.LLMConfig, *Group, error) {
	c, err := st.DefaultLLMConfig(ctx, store.UserOwner(id.UserID))
	if err == nil {
		return c, nil, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, nil, fmt.Errorf("default llm config of %s: %w", id.UserID, err)
	}
	if groups == nil {
		return nil, nil, fmt.Errorf("no default llm config for %s: %w", id.UserID, store.ErrNotFound)
	}
	var ref *store.LLMConfig
	if !errors.Is(err, store.ErrNoDefaultRef) {
		if ref, err = DefaultRef(ctx, st, id.UserID); err != nil {
			return nil, nil, err
		}
	}
	gs, err := groups.Groups(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if g := MemberOf(gs, ref); g != nil {
		ref.IsDefault = true // the user's default
		return ref, g, nil
	}
	for i := range gs {
		c, err := st.DefaultLLMConfig(ctx, store.GroupOwner(gs[i].ID))
		if err == nil {
			return c, &gs[i], nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return nil, nil, fmt.Errorf("default llm config of group %s: %w", gs[i].ID, err)
		}
	}
	return nil, nil, fmt.Errorf("no default llm config for %s: %w", id.UserID, store.ErrNotFound)
}

// DefaultRef returns the group configuration the user's default names by
// reference, nil when none.
func DefaultRef(ctx context.Context, st store.LLMConfigs, userID string) (*store.LLMConfig, error) {
	c, err := st.DefaultLLMConfigRef(ctx, userID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("default llm config of %s by reference: %w", userID, err)
	}
	return c, nil
}

// MemberOf returns the group of gs that owns c, nil when c is nil or its
// group is not among gs (the user left it).
func MemberOf(gs []Group, c *store.LLMConfig) *Group {
	if c == nil {
		return nil
	}
	for i := range gs {
		if gs[i].ID == c.Owner.GroupID {
			return &gs[i]
		}
	}
	return nil
}

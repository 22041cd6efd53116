package llmconfigs

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/httpapi/userpath"
	"agentchat/internal/store"
)

// Sources of a configuration in the user's effective list (the "source"
// field, as the GNS3 web UI reads it).
const (
	SourceUser  = "user"
	SourceGroup = "group"
)

// KeyAAD is the associated data the API key of configuration id of owner
// is sealed with (secrets.Box.Seal): "llmcfg:U#<user>:<id>" or
// "llmcfg:G#<group>:<id>". A sealed key only opens for its own record.
func KeyAAD(owner store.Owner, id string) string {
	return "llmcfg:" + ownerKey(owner) + ":" + id
}

func ownerKey(o store.Owner) string {
	if o.GroupID != "" {
		return "G#" + o.GroupID
	}
	return "U#" + o.UserID
}

// Group is a user group whose configurations its members inherit.
type Group struct {
	// ID is the GNS3 user_group_id (the {group_id} of the group routes).
	ID   string
	Name string
}

// GroupSource lists the groups of a user.
type GroupSource interface {
	// Groups returns the caller's groups in a stable order (by name,
	// then id). A controller that refuses to tell (the user lacks the
	// privilege, or it does not accept the token) gives no groups and no
	// error; an unreachable controller is an error.
	Groups(ctx context.Context, id auth.Identity) ([]Group, error)
}

// NoGroups is the GroupSource without a GNS3 controller: nobody is in a
// group, so only a user's own configurations apply.
type NoGroups struct{}

// Groups returns no groups.
func (NoGroups) Groups(context.Context, auth.Identity) ([]Group, error) { return nil, nil }

// DefaultGroupsTTL is how long NewGroupSource remembers a user's groups.
const DefaultGroupsTTL = 60 * time.Second

// maxGroupEntries bounds the cache of NewGroupSource.
const maxGroupEntries = 10000

// NewGroupSource returns the groups of users as the GNS3 controller of
// client tells them, with the user's own token: GET /v3/access/users/me
// for the caller's GNS3 user_id (through users, which caches it; nil: a
// resolver of its own), then GET /v3/access/users/{user_id}/groups, which
// GNS3 answers only to holders of the Group.Audit privilege (superadmins);
// others get no groups. Answers are remembered for ttl (<= 0:
// DefaultGroupsTTL) per user and token hash. A nil client gives NoGroups.
func NewGroupSource(client *gns3.Client, users *userpath.Resolver, ttl time.Duration) GroupSource {
	if client == nil {
		return NoGroups{}
	}
	if users == nil || !users.GNS3Configured() {
		users = userpath.New(client)
	}
	if ttl <= 0 {
		ttl = DefaultGroupsTTL
	}
	return &gns3Groups{client: client, users: users, ttl: ttl, now: time.Now, cache: map[[sha256.Size]byte]groupEntry{}}
}

type gns3Groups struct {
	client *gns3.Client
	users  *userpath.Resolver
	ttl    time.Duration
	now    func() time.Time

	mu    sync.Mutex
	cache map[[sha256.Size]byte]groupEntry
}

type groupEntry struct {
	groups  []Group
	expires time.Time
}

func groupKey(id auth.Identity) [sha256.Size]byte {
	return sha256.Sum256([]byte(id.UserID + "\x00" + id.Token))
}

// Groups implements GroupSource.
func (g *gns3Groups) Groups(ctx context.Context, id auth.Identity) ([]Group, error) {
	k := groupKey(id)
	if gs, ok := g.cached(k); ok {
		return gs, nil
	}
	u, err := g.users.GNS3User(ctx, id)
	if errors.Is(err, gns3.ErrUnauthorized) {
		g.remember(k, nil)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("groups of %s: %w", id.UserID, err)
	}
	list, err := g.client.UserGroups(ctx, id.Token, u.UserID)
	if errors.Is(err, gns3.ErrUnauthorized) || errors.Is(err, gns3.ErrNotFound) {
		g.remember(k, nil)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("groups of %s: %w", id.UserID, err)
	}
	out := sortedGroups(list)
	g.remember(k, out)
	return slices.Clone(out), nil
}

// sortedGroups returns the groups of list by name, then id, ids
// lower-cased, without duplicates or empty ids.
func sortedGroups(list []gns3.UserGroup) []Group {
	out := make([]Group, 0, len(list))
	for _, x := range list {
		gid := strings.ToLower(strings.TrimSpace(x.UserGroupID))
		if gid == "" || slices.ContainsFunc(out, func(o Group) bool { return o.ID == gid }) {
			continue
		}
		out = append(out, Group{ID: gid, Name: x.Name})
	}
	slices.SortFunc(out, func(a, b Group) int { return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID)) })
	return out
}

func (g *gns3Groups) cached(k [sha256.Size]byte) ([]Group, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e, ok := g.cache[k]
	if !ok {
		return nil, false
	}
	if !g.now().Before(e.expires) {
		delete(g.cache, k)
		return nil, false
	}
	return slices.Clone(e.groups), true
}

func (g *gns3Groups) remember(k [sha256.Size]byte, gs []Group) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if len(g.cache) >= maxGroupEntries {
		for key, e := range g.cache {
			if !now.Before(e.expires) {
				delete(g.cache, key)
			}
		}
		if len(g.cache) >= maxGroupEntries {
			clear(g.cache)
		}
	}
	g.cache[k] = groupEntry{groups: slices.Clone(gs), expires: now.Add(g.ttl)}
}

// Effective returns the configuration a turn of id uses: the user's own
// default, else the group configuration the user has made their default
// by reference (store.LLMConfigs.SetDefaultLLMConfigRef) while they are
// in that group, else the default of the first of the user's groups (in
// the GroupSource's order) that has one. source is SourceUser or
// SourceGroup.
// It returns an error matching store.ErrNotFound when there is none, and
// the GroupSource's error (wrapped) when the groups cannot be known. The
// user's own default costs one store read and no GNS3 call. groups nil
// means NoGroups. The API key stays sealed: open APIKeyCipher (when not
// empty) with the secrets.Box and KeyAAD(c.Owner, c.ID).
func Effective(ctx context.Context, st store.LLMConfigs, groups GroupSource, id auth.Identity) (*store.LLMConfig, string, error) {
	c, _, source, err := effective(ctx, st, groups, id)
	return c, source, err
}

// effective is Effective, also giving the group of a group default.
func effective(ctx context.Context, st store.LLMConfigs, groups GroupSource, id auth.Identity) (*store.LLMConfig, *Group, string, error) {
	c, err := st.DefaultLLMConfig(ctx, store.UserOwner(id.UserID))
	if err == nil {
		return c, nil, SourceUser, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, nil, "", fmt.Errorf("default llm config of %s: %w", id.UserID, err)
	}
	if groups == nil {
		return nil, nil, "", fmt.Errorf("no default llm config for %s: %w", id.UserID, store.ErrNotFound)
	}
	ref, err := defaultRef(ctx, st, id.UserID)
	if err != nil {
		return nil, nil, "", err
	}
	gs, err := groups.Groups(ctx, id)
	if err != nil {
		return nil, nil, "", err
	}
	if g := memberOf(gs, ref); g != nil {
		ref.IsDefault = true // the user's default
		return ref, g, SourceGroup, nil
	}
	for i := range gs {
		c, err := st.DefaultLLMConfig(ctx, store.GroupOwner(gs[i].ID))
		if err == nil {
			return c, &gs[i], SourceGroup, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return nil, nil, "", fmt.Errorf("default llm config of group %s: %w", gs[i].ID, err)
		}
	}
	return nil, nil, "", fmt.Errorf("no default llm config for %s: %w", id.UserID, store.ErrNotFound)
}

// defaultRef returns the group configuration the user's default names by
// reference, nil when none.
func defaultRef(ctx context.Context, st store.LLMConfigs, userID string) (*store.LLMConfig, error) {
	c, err := st.DefaultLLMConfigRef(ctx, userID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("default llm config of %s by reference: %w", userID, err)
	}
	return c, nil
}

// memberOf returns the group of gs that owns c, nil when c is nil or its
// group is not among gs (the user left it).
func memberOf(gs []Group, c *store.LLMConfig) *Group {
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

package llmconfig

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
)

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

// GNS3Users tells the GNS3 user of a caller (userpath.Resolver does,
// remembering the answers).
type GNS3Users interface {
	// GNS3Configured reports whether a GNS3 controller can be asked.
	GNS3Configured() bool
	// GNS3User returns the caller's GNS3 user (GET /v3/access/users/me
	// with the caller's token); an error matching gns3.ErrUnauthorized
	// when the controller does not accept the token.
	GNS3User(ctx context.Context, id auth.Identity) (*gns3.User, error)
}

// NewGroupSource returns the groups of users as the GNS3 controller of
// client tells them, with the user's own token: the caller's GNS3
// user_id from users (GET /v3/access/users/me on the same controller),
// then GET /v3/access/users/{user_id}/groups, which GNS3 answers only to
// holders of the Group.Audit privilege (superadmins); others get no
// groups. Answers are remembered for ttl (<= 0: DefaultGroupsTTL) per
// user and token hash. A nil client, or users nil or without a
// controller, gives NoGroups.
func NewGroupSource(client *gns3.Client, users GNS3Users, ttl time.Duration) GroupSource {
	if client == nil || users == nil || !users.GNS3Configured() {
		return NoGroups{}
	}
	if ttl <= 0 {
		ttl = DefaultGroupsTTL
	}
	return &gns3Groups{client: client, users: users, ttl: ttl, now: time.Now, cache: map[[sha256.Size]byte]groupEntry{}}
}

type gns3Groups struct {
	client *gns3.Client
	users  GNS3Users
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

// UserGroups returns the GroupSource of the GNS3 user userID as a caller
// other than that user sees them: GET /v3/access/users/{user_id}/groups
// with the caller's token, which GNS3 answers only to holders of
// Group.Audit; others get no groups. Nothing is remembered.
func UserGroups(client *gns3.Client, userID string) GroupSource {
	return userGroups{client: client, userID: userID}
}

// userGroups is the GroupSource of UserGroups.
type userGroups struct {
	client *gns3.Client
	userID string
}

// Groups implements GroupSource.
func (u userGroups) Groups(ctx context.Context, id auth.Identity) ([]Group, error) {
	list, err := u.client.UserGroups(ctx, id.Token, u.userID)
	if errors.Is(err, gns3.ErrUnauthorized) || errors.Is(err, gns3.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("groups of user %s: %w", u.userID, err)
	}
	return sortedGroups(list), nil
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

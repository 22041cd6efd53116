package llmconfigs

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"agentchat/internal/gns3"
	"agentchat/internal/httpapi"
)

// GNS3 privileges the routes check, as the GNS3 controller's own LLM
// configuration routes do: reading a group's configurations needs
// Group.Audit on the group, changing them Group.Modify; another user's,
// User.Audit and User.Modify on that user. GNS3 (3.0) defines no
// LLMConfig.* privilege, so none is asked for.
const (
	privGroupAudit  = "Group.Audit"
	privGroupModify = "Group.Modify"
	privUserAudit   = "User.Audit"
	privUserModify  = "User.Modify"
)

// DefaultPrivilegeTTL is how long the GNS3 controller's answer about a
// caller's privilege is remembered (per token, privilege and resource).
const DefaultPrivilegeTTL = 30 * time.Second

// maxPrivilegeEntries bounds the cache of privileges.
const maxPrivilegeEntries = 10000

// privileges asks the GNS3 controller, with the caller's own token,
// whether the caller holds a privilege on a group or a user, and
// remembers the answers for ttl. GNS3 v3 has no route that tests a
// privilege; it is read from routes that require it: GET
// /v3/access/groups/{id} (Group.Audit), GET /v3/access/users/{id}
// (User.Audit), and a PUT of the same paths that changes nothing
// (gns3.Client.CanModifyGroup, CanModifyUser). GNS3 decides them on the
// group's or the user's path, of which its LLM configuration routes are
// children: ACEs on /access/groups/{id}, /access/groups, /access or /,
// held by the user or their groups, superadmins holding everything.
type privileges struct {
	client *gns3.Client
	ttl    time.Duration
	now    func() time.Time

	mu    sync.Mutex
	cache map[[sha256.Size]byte]privilegeEntry
}

// privilegeEntry is a remembered answer: granted or not, and for
// User.Audit the user's username.
type privilegeEntry struct {
	granted  bool
	missing  bool // the group or user does not exist on GNS3
	username string
	expires  time.Time
}

func newPrivileges(client *gns3.Client, ttl time.Duration, now func() time.Time) *privileges {
	if client == nil {
		return nil
	}
	if ttl <= 0 {
		ttl = DefaultPrivilegeTTL
	}
	if now == nil {
		now = time.Now
	}
	return &privileges{client: client, ttl: ttl, now: now, cache: map[[sha256.Size]byte]privilegeEntry{}}
}

// privilegeKey keys the cache by a hash of the token (never the token
// itself), the privilege and the resource.
func privilegeKey(token, privilege, resource string) [sha256.Size]byte {
	return sha256.Sum256([]byte(token + "\x00" + privilege + "\x00" + resource))
}

// ask returns the remembered answer, or asks fn and remembers its answer
// (not its failures).
func (p *privileges) ask(ctx context.Context, token, privilege, resource string, fn func(context.Context) (privilegeEntry, error)) (privilegeEntry, error) {
	k := privilegeKey(token, privilege, resource)
	p.mu.Lock()
	e, ok := p.cache[k]
	now := p.now()
	if ok && now.Before(e.expires) {
		p.mu.Unlock()
		return e, nil
	}
	delete(p.cache, k)
	p.mu.Unlock()
	e, err := fn(ctx)
	if err != nil {
		return privilegeEntry{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now = p.now()
	if len(p.cache) >= maxPrivilegeEntries {
		for key, old := range p.cache {
			if !now.Before(old.expires) {
				delete(p.cache, key)
			}
		}
		if len(p.cache) >= maxPrivilegeEntries {
			clear(p.cache)
		}
	}
	e.expires = now.Add(p.ttl)
	p.cache[k] = e
	return e, nil
}

// group checks that the token's user holds Group.Audit (modify false) or
// Group.Modify on the group groupID (a UUID). It returns nil when so, or a
// *httpapi.StatusError: 403 naming the privilege, 404 for a group GNS3
// does not have (known only from Group.Audit), 401 when GNS3 refuses the
// token, 502 when it cannot be asked.
func (p *privileges) group(ctx context.Context, token, groupID string, modify bool) error {
	priv, what := privGroupAudit, "see"
	if modify {
		priv, what = privGroupModify, "change"
	}
	e, err := p.ask(ctx, token, priv, "group:"+groupID, func(ctx context.Context) (privilegeEntry, error) {
		if modify {
			ok, err := p.client.CanModifyGroup(ctx, token, groupID)
			return privilegeEntry{granted: ok}, err
		}
		_, err := p.client.Group(ctx, token, groupID)
		return auditEntry(err, "")
	})
	if err != nil {
		return privilegeFailure(ctx, err)
	}
	switch {
	case e.missing:
		return httpapi.Errorf(http.StatusNotFound, "Group '%s' not found on the GNS3 controller", groupID)
	case !e.granted:
		return httpapi.Errorf(http.StatusForbidden,
			"You need the GNS3 privilege %s on group '%s' to %s its LLM model configurations (ask a GNS3 administrator, or use the administrator token)", priv, groupID, what)
	}
	return nil
}

// user checks that the token's user holds User.Audit on the user userID
// (a UUID), and User.Modify as well when modify, and returns that user's
// username (the owner of their configurations: the sub of their GNS3
// tokens). Errors as for group; a refusal says forbidden.
func (p *privileges) user(ctx context.Context, token, userID string, modify bool, forbidden string) (string, error) {
	e, err := p.ask(ctx, token, privUserAudit, "user:"+userID, func(ctx context.Context) (privilegeEntry, error) {
		u, err := p.client.User(ctx, token, userID)
		name := ""
		if err == nil {
			name = u.Username
		}
		return auditEntry(err, name)
	})
	if err != nil {
		return "", privilegeFailure(ctx, err)
	}
	switch {
	case e.missing:
		return "", httpapi.Errorf(http.StatusNotFound, "User '%s' not found on the GNS3 controller", userID)
	case !e.granted || e.username == "":
		return "", httpapi.Errorf(http.StatusForbidden, "%s; another user's need the GNS3 privilege %s on that user", forbidden, privUserAudit)
	}
	if !modify {
		return e.username, nil
	}
	m, err := p.ask(ctx, token, privUserModify, "user:"+userID, func(ctx context.Context) (privilegeEntry, error) {
		ok, err := p.client.CanModifyUser(ctx, token, userID)
		return privilegeEntry{granted: ok}, err
	})
	if err != nil {
		return "", privilegeFailure(ctx, err)
	}
	if !m.granted {
		return "", httpapi.Errorf(http.StatusForbidden, "You need the GNS3 privilege %s on user '%s' to change their LLM model configurations", privUserModify, userID)
	}
	return e.username, nil
}

// auditEntry turns the answer of an Audit route into an entry: granted,
// refused (403) or missing (404, GNS3 checks the privilege first).
func auditEntry(err error, username string) (privilegeEntry, error) {
	switch {
	case err == nil:
		return privilegeEntry{granted: true, username: username}, nil
	case errors.Is(err, gns3.ErrForbidden):
		return privilegeEntry{}, nil
	case errors.Is(err, gns3.ErrNotFound):
		return privilegeEntry{granted: true, missing: true}, nil
	}
	return privilegeEntry{}, err
}

// privilegeFailure is the answer when GNS3 could not tell: 403 for a
// token it refuses (the caller is authenticated here, but holds nothing
// there), 502 otherwise (the context's error as it is).
func privilegeFailure(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, gns3.ErrUnauthorized) {
		return httpapi.Errorf(http.StatusForbidden, "The GNS3 controller did not accept your token, so you hold no privilege there (log in to GNS3 again)")
	}
	httpapi.Logger(ctx).WarnContext(ctx, "could not check a privilege on the GNS3 controller", "err", err.Error())
	return httpapi.Errorf(http.StatusBadGateway, "Could not check your privileges on the GNS3 controller: %s", describe(err))
}

// lowerUUID returns s lower-cased when it is a UUID, and ok.
func lowerUUID(s string) (string, bool) {
	l := strings.ToLower(s)
	return l, gns3.ValidID(l)
}

// Package llmconfigs serves the LLM model configurations of users and
// groups, the contract of the GNS3 web UI:
//
//	GET    /v3/access/users/{user_id}/llm-model-configs                       own + inherited → InheritedList
//	GET    /v3/access/users/{user_id}/llm-model-configs/own                   own → List
//	GET    /v3/access/users/{user_id}/llm-model-configs/default               effective default → ConfigWithSource (404 when none)
//	POST   /v3/access/users/{user_id}/llm-model-configs                       create → 201 Config
//	PUT    /v3/access/users/{user_id}/llm-model-configs/{config_id}           partial update → Config
//	DELETE /v3/access/users/{user_id}/llm-model-configs/{config_id}           → 204
//	PUT    /v3/access/users/{user_id}/llm-model-configs/default/{config_id}   make it the only default → Config
//
// and the same under /v3/access/groups/{group_id}/llm-model-configs (but
// /own), for the holder of ADMIN_TOKEN, and, with a GNS3 controller, for
// a caller whose GNS3 token holds the privilege on that group that the
// controller's own routes require: Group.Audit to read, Group.Modify to
// change (see privileges.go). {user_id} names the caller (package
// userpath): "me", the token's sub, or the caller's GNS3 user_id; with a
// GNS3 controller it may also be another user's GNS3 user_id when the
// caller holds User.Audit on that user (to read; User.Modify as well to
// change).
//
// A user's default may be one of the configurations of their groups, by
// reference (PUT .../default/{config_id} with a group configuration's id,
// or PUT .../{config_id} with {"is_default": true}; {"is_default": false}
// drops it): the group's later edits reach the user, and it goes when the
// group's configuration is deleted or the user leaves the group.
//
// A configuration is {config_id, name, model_type, config: {provider,
// base_url, model, temperature, context_limit, max_tokens?,
// context_strategy, copilot_mode?, api_key: null, ...extra}, user_id,
// group_id, is_default, version, created_at, updated_at, api_key_set,
// api_key_hint?}. The API key is write-only: it is sealed with the
// secrets.Box (aad llmconfig.KeyAAD) before the store sees it, and never appears in
// an answer, a log record or an error.
//
// Requests come in two forms (see parsePatch): nested ({name, model_type,
// config: {...}}) and the GNS3 web UI's flat one (config keys at the top
// level). An update changes only what it names: config is merged key by
// key (a key given replaces the stored one, a key given as null is
// removed — temperature and context_strategy then return to their
// defaults, base_url to the provider's —, an omitted key is kept);
// api_key omitted or null keeps the stored key, "" removes it — except
// that an update changing the provider or the base URL (compared
// normalised: scheme and host case, default port, trailing slash) without
// a new api_key clears the stored key (api_key_set false in the answer),
// so that a stolen session or API key cannot send the user's provider key
// to another server (see keymove.go). With
// expected_version, an update of another version is refused with 409.
// Every update increments version. is_default true makes the configuration
// the owner's only default; false unsets it when it is the default (the
// owner then has none, unless another request has meanwhile made another
// configuration the default, which stays) and changes nothing otherwise.
package llmconfigs

import (
	"cmp"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/userpath"
	"agentchat/internal/idsyntax"
	"agentchat/internal/llmconfig"
	"agentchat/internal/secrets"
	"agentchat/internal/store"
)

// Route paths.
const (
	PathUser           = "/v3/access/users/{user_id}/llm-model-configs"
	PathUserOwn        = PathUser + "/own"
	PathUserDefault    = PathUser + "/default"
	PathUserConfig     = PathUser + "/{config_id}"
	PathUserSetDefault = PathUser + "/default/{config_id}"

	PathGroup           = "/v3/access/groups/{group_id}/llm-model-configs"
	PathGroupDefault    = PathGroup + "/default"
	PathGroupConfig     = PathGroup + "/{config_id}"
	PathGroupSetDefault = PathGroup + "/default/{config_id}"
)

// Messages.
const (
	msgOthers = "You can only manage your own LLM model configurations (use 'me' as the user id)"
	// MsgNoEncryptionKey answers a request that would store an API key on
	// a server without an encryption key.
	MsgNoEncryptionKey = "Storing an API key needs an encryption key, which this server does not have: set ENCRYPTION_KEY (base64 of 32 bytes)"
	msgAdminOnly       = "Group LLM model configurations are managed with the administrator token (Authorization: Bearer <ADMIN_TOKEN>)"
	msgNoAdminToken    = "Group LLM model configurations are managed with ADMIN_TOKEN, which this server does not have"
	msgNoGNS3Token     = "Group LLM model configurations are managed with your GNS3 token (to check your privileges on the group) or with the administrator token"
)

// Options tune the handlers.
type Options struct {
	// Secrets seals API keys; nil: a request that stores a key answers
	// 503 (everything else works).
	Secrets *secrets.Box
	// Users resolves {user_id} (nil: "me" and the caller's id only).
	Users *userpath.Resolver
	// Groups lists a user's groups (nil: llmconfig.NoGroups).
	Groups llmconfig.GroupSource
	// AdminToken is accepted on the group routes (empty: only GNS3
	// privileges are, see GNS3).
	AdminToken string
	// Auth authenticates the callers of the group routes who do not
	// present AdminToken (a GNS3 token, an API key); nil: AdminToken only.
	Auth httpapi.Authenticator
	// GNS3 is asked for the caller's privileges on a group or on another
	// user (nil: the group routes take AdminToken only, and another
	// user's configurations are refused).
	GNS3 *gns3.Client
	// PrivilegeTTL is how long GNS3's answer about a privilege is
	// remembered per token (<= 0: DefaultPrivilegeTTL).
	PrivilegeTTL time.Duration
	// Now is the clock of that memory (nil: time.Now).
	Now func() time.Time
	// NewID returns a configuration id (nil: a random UUID).
	NewID func() string
}

// Handlers serves the LLM configuration routes.
type Handlers struct {
	st   store.LLMConfigs
	o    Options
	priv *privileges // nil without GNS3
}

// New returns the handlers over st.
func New(st store.LLMConfigs, o Options) *Handlers {
	if o.Groups == nil {
		o.Groups = llmconfig.NoGroups{}
	}
	if o.NewID == nil {
		o.NewID = uuid.NewString
	}
	return &Handlers{st: st, o: o, priv: newPrivileges(o.GNS3, o.PrivilegeTTL, o.Now)}
}

// Routes returns one route per endpoint: the local server mounts them
// all, each Lambda function the ones it serves. A GET of a single
// configuration (.../{config_id} other than own and default) is 405 with
// Allow, as ServeMux answers any unserved method.
func (h *Handlers) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: http.MethodGet, Path: PathUser, Handler: httpapi.HandlerFunc(h.listUser).ServeHTTP},
		{Method: http.MethodGet, Path: PathUserOwn, Handler: httpapi.HandlerFunc(h.listOwn).ServeHTTP},
		{Method: http.MethodGet, Path: PathUserDefault, Handler: httpapi.HandlerFunc(h.defaultUser).ServeHTTP},
		{Method: http.MethodPost, Path: PathUser, Handler: httpapi.HandlerFunc(h.createUser).ServeHTTP},
		{Method: http.MethodPut, Path: PathUserConfig, Handler: httpapi.HandlerFunc(h.updateUser).ServeHTTP},
		{Method: http.MethodDelete, Path: PathUserConfig, Handler: httpapi.HandlerFunc(h.deleteUser).ServeHTTP},
		{Method: http.MethodPut, Path: PathUserSetDefault, Handler: httpapi.HandlerFunc(h.setDefaultUser).ServeHTTP},

		{Method: http.MethodGet, Path: PathGroup, Handler: httpapi.HandlerFunc(h.listGroup).ServeHTTP, Public: true},
		{Method: http.MethodGet, Path: PathGroupDefault, Handler: httpapi.HandlerFunc(h.defaultGroup).ServeHTTP, Public: true},
		{Method: http.MethodPost, Path: PathGroup, Handler: httpapi.HandlerFunc(h.createGroup).ServeHTTP, Public: true},
		{Method: http.MethodPut, Path: PathGroupConfig, Handler: httpapi.HandlerFunc(h.updateGroup).ServeHTTP, Public: true},
		{Method: http.MethodDelete, Path: PathGroupConfig, Handler: httpapi.HandlerFunc(h.deleteGroup).ServeHTTP, Public: true},
		{Method: http.MethodPut, Path: PathGroupSetDefault, Handler: httpapi.HandlerFunc(h.setDefaultGroup).ServeHTTP, Public: true},
	}
}

// subject is the user whose configurations a user route serves.
type subject struct {
	// id is the caller, or for another user (an administrator's request)
	// that user's username with the caller's token.
	id    auth.Identity
	owner store.Owner
	// groups lists the user's groups (failures as 502).
	groups llmconfig.GroupSource
}

// user returns the subject of a user route: the caller, or (with a GNS3
// controller) the other user {user_id} names when the caller's GNS3
// token holds User.Audit on that user, and User.Modify as well when
// modify.
func (h *Handlers) user(r *http.Request, modify bool) (subject, error) {
	id, err := h.o.Users.Caller(r, msgOthers)
	if err == nil {
		return subject{id: id, owner: store.UserOwner(id.UserID), groups: statusGroups{h.o.Groups}}, nil
	}
	var se *httpapi.StatusError
	if h.priv == nil || !errors.As(err, &se) || se.Status != http.StatusForbidden {
		return subject{}, err
	}
	ctx := r.Context()
	caller, _ := auth.FromContext(ctx)
	target, ok := lowerUUID(r.PathValue("user_id"))
	if !ok || caller.Token == "" {
		return subject{}, err
	}
	name, err := h.priv.user(ctx, caller.Token, target, modify, msgOthers)
	if err != nil {
		return subject{}, err
	}
	httpapi.Logger(ctx).InfoContext(ctx, "another user's llm configs, by GNS3 privilege", "target_user_id", target, "modify", modify)
	other := auth.Identity{UserID: name, Token: caller.Token, Via: caller.Via}
	return subject{id: other, owner: store.UserOwner(name), groups: statusGroups{llmconfig.UserGroups(h.o.GNS3, target)}}, nil
}

// groupIDChars are the bytes of a group id after its first (a letter or
// digit).
var groupIDChars = idsyntax.NewSet(true, "_.-")

// group authorises a group route and returns the owner {group_id} names
// (a GNS3 user_group_id; UUIDs are lower-cased): the holder of
// AdminToken may do anything; with a GNS3 controller, another caller
// needs Group.Audit on the group (Group.Modify when modify), as GNS3
// tells it for the caller's token.
func (h *Handlers) group(r *http.Request, modify bool) (store.Owner, error) {
	header := strings.TrimSpace(r.Header.Get("Authorization"))
	scheme, tok, ok := strings.Cut(header, " ")
	tok = strings.TrimSpace(tok)
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return store.Owner{}, httpapi.Errorf(http.StatusUnauthorized, "Not authenticated")
	}
	gid := r.PathValue("group_id")
	if h.o.AdminToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(h.o.AdminToken)) == 1 {
		if !idsyntax.Plain(gid, groupIDChars, 128) {
			return store.Owner{}, httpapi.Errorf(http.StatusUnprocessableEntity, "Invalid group_id: %q", truncate(gid, 64))
		}
		if l, ok := lowerUUID(gid); ok {
			gid = l
		}
		return store.GroupOwner(gid), nil
	}
	if h.priv == nil || h.o.Auth == nil {
		if h.o.AdminToken == "" {
			return store.Owner{}, httpapi.Errorf(http.StatusForbidden, msgNoAdminToken)
		}
		return store.Owner{}, httpapi.Errorf(http.StatusForbidden, msgAdminOnly)
	}
	ctx := r.Context()
	id, err := h.o.Auth.Authenticate(ctx, header)
	if err != nil {
		var ce auth.CredentialError
		if errors.As(err, &ce) {
			return store.Owner{}, httpapi.Errorf(http.StatusUnauthorized, "Could not validate credentials")
		}
		return store.Owner{}, fmt.Errorf("authenticate: %w", err)
	}
	l, ok := lowerUUID(gid)
	if !ok {
		return store.Owner{}, httpapi.Errorf(http.StatusUnprocessableEntity, "Invalid group_id: %q (a GNS3 user group id, a UUID)", truncate(gid, 64))
	}
	if id.Token == "" {
		return store.Owner{}, httpapi.Errorf(http.StatusForbidden, msgNoGNS3Token)
	}
	if err := h.priv.group(ctx, id.Token, l, modify); err != nil {
		return store.Owner{}, err
	}
	httpapi.Logger(ctx).InfoContext(ctx, "group llm configs, by GNS3 privilege", "user", id.UserID, "group_id", l, "modify", modify)
	return store.GroupOwner(l), nil
}

// configID returns the {config_id} of the request, a UUID.
func configID(r *http.Request) (string, error) {
	id := r.PathValue("config_id")
	if err := httpapi.ValidateUUID("config_id", id); err != nil {
		return "", err
	}
	return httpapi.NormalizeUUID(id), nil
}

func notFound(id string) error {
	return httpapi.Errorf(http.StatusNotFound, "LLM model configuration '%s' not found", id)
}

func write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Cache-Control", "no-store")
	httpapi.WriteJSON(w, status, v)
}

// groupsOf returns the groups of src for id, or a 502 when the
// controller cannot tell.
func groupsOf(ctx context.Context, src llmconfig.GroupSource, id auth.Identity) ([]llmconfig.Group, error) {
	gs, err := src.Groups(ctx, id)
	if err == nil {
		return gs, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	httpapi.Logger(ctx).WarnContext(ctx, "could not list the user's groups", "err", err.Error())
	return nil, httpapi.Errorf(http.StatusBadGateway, "Could not list your groups on the GNS3 controller: %s", describe(err))
}

// describe is a short, secret-free reason for a GNS3 failure.
func describe(err error) string { return gns3.Describe(err) }

// statusGroups is a GroupSource of the handlers: failures of src become
// the 502 of groupsOf.
type statusGroups struct{ src llmconfig.GroupSource }

func (s statusGroups) Groups(ctx context.Context, id auth.Identity) ([]llmconfig.Group, error) {
	return groupsOf(ctx, s.src, id)
}

func (h *Handlers) listUser(w http.ResponseWriter, r *http.Request) error {
	sub, err := h.user(r, false)
	if err != nil {
		return err
	}
	ctx := r.Context()
	own, err := h.st.ListLLMConfigs(ctx, sub.owner)
	if err != nil {
		return fmt.Errorf("list llm configs: %w", err)
	}
	groups, err := sub.groups.Groups(ctx, sub.id)
	if err != nil {
		return err
	}
	ref, err := llmconfig.DefaultRef(ctx, h.st, sub.owner.UserID)
	if err != nil {
		return err
	}
	if llmconfig.MemberOf(groups, ref) == nil {
		ref = nil // a group the user has left: its configuration is not theirs
	}
	out := InheritedList{Configs: make([]ConfigWithSource, 0, len(own))}
	var ownDefault, refDefault, groupDefault *ConfigWithSource
	for i := range own {
		v := userView(&own[i])
		out.Configs = append(out.Configs, v)
		if own[i].IsDefault && ownDefault == nil {
			ownDefault = &v
		}
	}
	for _, g := range groups {
		cs, err := h.st.ListLLMConfigs(r.Context(), store.GroupOwner(g.ID))
		if err != nil {
			return fmt.Errorf("list llm configs of group %s: %w", g.ID, err)
		}
		for i := range cs {
			v := groupView(&cs[i], g)
			if ref != nil {
				// The user's default by reference is the one group
				// configuration marked default in their view.
				v.IsDefault = g.ID == ref.Owner.GroupID && cs[i].ID == ref.ID
				if v.IsDefault {
					refDefault = &v
				}
			}
			out.Configs = append(out.Configs, v)
			if cs[i].IsDefault && groupDefault == nil {
				groupDefault = &v
			}
		}
	}
	out.DefaultConfig = cmp.Or(ownDefault, refDefault, groupDefault)
	out.Total = len(out.Configs)
	write(w, http.StatusOK, out)
	return nil
}

func (h *Handlers) listOwn(w http.ResponseWriter, r *http.Request) error {
	sub, err := h.user(r, false)
	if err != nil {
		return err
	}
	return h.list(w, r, sub.owner)
}

func (h *Handlers) list(w http.ResponseWriter, r *http.Request, owner store.Owner) error {
	cs, err := h.st.ListLLMConfigs(r.Context(), owner)
	if err != nil {
		return fmt.Errorf("list llm configs: %w", err)
	}
	write(w, http.StatusOK, listView(cs))
	return nil
}

func (h *Handlers) defaultUser(w http.ResponseWriter, r *http.Request) error {
	sub, err := h.user(r, false)
	if err != nil {
		return err
	}
	c, g, err := llmconfig.Effective(r.Context(), h.st, sub.groups, sub.id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return httpapi.Errorf(http.StatusNotFound, "No default LLM model configuration found for user '%s'", sub.id.UserID)
	case err != nil:
		return err
	}
	if g != nil {
		write(w, http.StatusOK, groupView(c, *g))
		return nil
	}
	write(w, http.StatusOK, userView(c))
	return nil
}

func (h *Handlers) defaultGroup(w http.ResponseWriter, r *http.Request) error {
	owner, err := h.group(r, false)
	if err != nil {
		return err
	}
	c, err := h.st.DefaultLLMConfig(r.Context(), owner)
	switch {
	case errors.Is(err, store.ErrNotFound):
		httpapi.Error(w, r, http.StatusNotFound, fmt.Sprintf("No default LLM model configuration found for group '%s'", owner.GroupID))
	case err != nil:
		return fmt.Errorf("default llm config: %w", err)
	default:
		write(w, http.StatusOK, View(c))
	}
	return nil
}

func (h *Handlers) createUser(w http.ResponseWriter, r *http.Request) error {
	sub, err := h.user(r, true)
	if err != nil {
		return err
	}
	owner := sub.owner
	return h.create(w, r, owner)
}

func (h *Handlers) createGroup(w http.ResponseWriter, r *http.Request) error {
	owner, err := h.group(r, true)
	if err != nil {
		return err
	}
	return h.create(w, r, owner)
}

func (h *Handlers) create(w http.ResponseWriter, r *http.Request, owner store.Owner) error {
	raw, err := decodeObject(w, r, false)
	if err != nil {
		return err
	}
	p, err := parsePatch(raw)
	if err != nil {
		return err
	}
	if p.expectedVersion != 0 {
		return httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'expected_version' is for updates only")
	}
	if p.name == nil {
		return httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'name' is required")
	}
	if p.key == keySet && h.o.Secrets == nil {
		return httpapi.Errorf(http.StatusServiceUnavailable, MsgNoEncryptionKey)
	}
	c := &store.LLMConfig{ID: h.o.NewID(), Owner: owner, Name: *p.name, ModelType: DefaultModelType, Config: maps.Clone(p.set)}
	if p.modelType != nil {
		c.ModelType = *p.modelType
	}
	if err := finalize(c.Config, p.prefix); err != nil {
		return err
	}
	if err := h.seal(c, p); err != nil {
		return err
	}
	c.IsDefault = p.isDefault != nil && *p.isDefault
	if err := h.st.CreateLLMConfig(r.Context(), c); err != nil {
		if se := httpapi.LimitFailure(err); se != nil {
			return se
		}
		return fmt.Errorf("create llm config: %w", err)
	}
	stored, err := h.st.GetLLMConfig(r.Context(), owner, c.ID)
	if err != nil {
		return fmt.Errorf("read created llm config: %w", err)
	}
	httpapi.Logger(r.Context()).InfoContext(r.Context(), "llm config created", "config_id", c.ID, "owner", ownerKind(owner), "api_key_set", c.APIKeyCipher != "", "default", stored.IsDefault)
	write(w, http.StatusCreated, View(stored))
	return nil
}

// seal applies the request's API key to c: sealed with the Box (set),
// cleared (remove) or left as it is (keep).
func (h *Handlers) seal(c *store.LLMConfig, p *patch) error {
	switch p.key {
	case keyRemove:
		c.APIKeyCipher, c.APIKeyHint = "", ""
	case keySet:
		if h.o.Secrets == nil {
			return httpapi.Errorf(http.StatusServiceUnavailable, MsgNoEncryptionKey)
		}
		sealed, err := h.o.Secrets.Seal(p.apiKey, llmconfig.KeyAAD(c.Owner, c.ID))
		if err != nil {
			return errors.New("seal the api key failed") // the cause could hold no secret, but stay terse
		}
		c.APIKeyCipher, c.APIKeyHint = sealed, secrets.Hint(p.apiKey)
	}
	return nil
}

func ownerKind(o store.Owner) string {
	if o.GroupID != "" {
		return "group"
	}
	return "user"
}

func (h *Handlers) listGroup(w http.ResponseWriter, r *http.Request) error {
	owner, err := h.group(r, false)
	if err != nil {
		return err
	}
	return h.list(w, r, owner)
}

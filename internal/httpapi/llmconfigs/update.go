package llmconfigs

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"agentchat/internal/httpapi"
	"agentchat/internal/llmconfig"
	"agentchat/internal/store"
)

// The updates of a configuration: PUT .../{config_id} (a partial update
// with optimistic versions, retried on a concurrent write) and the default
// flag it may carry.

func (h *Handlers) updateUser(w http.ResponseWriter, r *http.Request) error {
	sub, err := h.user(r, true)
	if err != nil {
		return err
	}
	return h.update(w, r, sub.owner, func(id string, p *patch) (bool, error) { return h.updateGroupRef(w, r, sub, id, p) })
}

func (h *Handlers) updateGroup(w http.ResponseWriter, r *http.Request) error {
	owner, err := h.group(r, true)
	if err != nil {
		return err
	}
	return h.update(w, r, owner, nil)
}

// maxUpdateAttempts bounds the attempts of an update without
// expected_version that races with other writes (each round of racing
// writers lets at least one through).
const maxUpdateAttempts = 16

// backoff waits a little (growing, jittered) before attempt n again.
func backoff(ctx context.Context, n int) error {
	d := time.Duration(n)*time.Millisecond + time.Duration(rand.Int64N(int64(2*time.Millisecond)))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// update serves an update of the owner's configuration. missing, when not
// nil, is offered a configuration the owner does not have before it is
// answered 404: it reports whether it answered the request itself (or
// returns the error to answer).
func (h *Handlers) update(w http.ResponseWriter, r *http.Request, owner store.Owner, missing func(id string, p *patch) (bool, error)) error {
	id, err := configID(r)
	if err != nil {
		return err
	}
	raw, err := decodeObject(w, r, false)
	if err != nil {
		return err
	}
	p, err := parsePatch(raw)
	if err != nil {
		return err
	}
	if p.key == keySet && h.o.Secrets == nil {
		return httpapi.Errorf(http.StatusServiceUnavailable, MsgNoEncryptionKey)
	}
	ctx := r.Context()
	var (
		out        *store.LLMConfig
		keyCleared bool
	)
	for attempt := 1; ; attempt++ {
		cur, err := h.st.GetLLMConfig(ctx, owner, id)
		if errors.Is(err, store.ErrNotFound) && attempt == 1 && missing != nil {
			done, err := missing(id, p)
			if err != nil {
				return err
			}
			if done {
				return nil
			}
		}
		if errors.Is(err, store.ErrNotFound) {
			return notFound(id)
		}
		if err != nil {
			return fmt.Errorf("read llm config: %w", err)
		}
		if p.expectedVersion != 0 && p.expectedVersion != cur.Version {
			return conflict(p.expectedVersion, cur.Version)
		}
		next, err := p.apply(cur)
		if err != nil {
			return err
		}
		keyCleared = dropMovedKey(cur, next, p)
		if err := h.seal(next, p); err != nil {
			return err
		}
		// Without expected_version the merge is still made on the version
		// read: a write in between is merged again, not overwritten.
		out, err = h.st.UpdateLLMConfig(ctx, next, cur.Version)
		var vc *store.VersionConflictError
		switch {
		case err == nil:
		case errors.Is(err, store.ErrNotFound):
			return notFound(id)
		case errors.As(err, &vc) && p.expectedVersion == 0 && attempt < maxUpdateAttempts:
			if err := backoff(ctx, attempt); err != nil {
				return err
			}
			continue
		case errors.As(err, &vc):
			return conflict(cur.Version, vc.Current)
		default:
			return fmt.Errorf("update llm config: %w", err)
		}
		break
	}
	if p.isDefault != nil {
		d, err := h.applyDefault(ctx, out, *p.isDefault)
		if err != nil {
			return err
		}
		out = d
	}
	httpapi.Logger(ctx).InfoContext(ctx, "llm config updated", "config_id", id, "owner", ownerKind(owner), "version", out.Version,
		"api_key_set", out.APIKeyCipher != "", "api_key_cleared_by_move", keyCleared)
	write(w, http.StatusOK, View(out))
	return nil
}

// conflict is the 409 of a version mismatch.
func conflict(expected, current int64) error {
	return httpapi.Errorf(http.StatusConflict, "Concurrent modification detected. Expected version %d, but current version is %d. Please retry.", expected, current)
}

// apply returns cur with the patch applied (the key is sealed apart).
func (p *patch) apply(cur *store.LLMConfig) (*store.LLMConfig, error) {
	next := *cur
	next.Config = maps.Clone(cur.Config)
	if next.Config == nil {
		next.Config = map[string]any{}
	}
	if p.name != nil {
		next.Name = *p.name
	}
	if p.modelType != nil {
		next.ModelType = *p.modelType
	}
	oldProvider, _ := cur.Config[fieldProvider].(string)
	oldURL, _ := cur.Config[fieldBaseURL].(string)
	for _, k := range p.unset {
		delete(next.Config, k)
	}
	maps.Copy(next.Config, p.set)
	// A base URL that was the old provider's default follows a change of
	// provider, unless the request names one.
	_, urlGiven := p.set[fieldBaseURL]
	if newProvider, ok := p.set[fieldProvider].(string); ok && !urlGiven && !strings.EqualFold(newProvider, oldProvider) {
		if def, ok := llmconfig.DefaultBaseURL(oldProvider); ok && def == oldURL {
			next.Config[fieldBaseURL] = ""
		}
	}
	if err := finalize(next.Config, p.prefix); err != nil {
		return nil, err
	}
	return &next, nil
}

// applyDefault makes c the owner's default (on) or not (off). Off is a
// no-op when c is not the default; when it is, the owner is left with no
// default, unless another request has meanwhile made another configuration
// the default (the store's unset is conditional on c).
func (h *Handlers) applyDefault(ctx context.Context, c *store.LLMConfig, on bool) (*store.LLMConfig, error) {
	if on {
		if c.IsDefault {
			return c, nil
		}
		d, err := h.st.SetDefaultLLMConfig(ctx, c.Owner, c.ID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, notFound(c.ID)
		}
		if err != nil {
			return nil, fmt.Errorf("set default llm config: %w", err)
		}
		return d, nil
	}
	if !c.IsDefault {
		return c, nil
	}
	err := h.st.UnsetDefaultLLMConfig(ctx, c.Owner, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound(c.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("unset default llm config: %w", err)
	}
	d, err := h.st.GetLLMConfig(ctx, c.Owner, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound(c.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("read llm config: %w", err)
	}
	return d, nil
}

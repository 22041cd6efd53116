package llmconfigs

import (
	"errors"
	"fmt"
	"net/http"

	"agentchat/internal/httpapi"
	"agentchat/internal/store"
)

// DELETE .../{config_id} and PUT .../default/{config_id}.

func (h *Handlers) deleteUser(w http.ResponseWriter, r *http.Request) error {
	sub, err := h.user(r, true)
	if err != nil {
		return err
	}
	owner := sub.owner
	return h.delete(w, r, owner)
}

func (h *Handlers) deleteGroup(w http.ResponseWriter, r *http.Request) error {
	owner, err := h.group(r, true)
	if err != nil {
		return err
	}
	return h.delete(w, r, owner)
}

func (h *Handlers) delete(w http.ResponseWriter, r *http.Request, owner store.Owner) error {
	id, err := configID(r)
	if err != nil {
		return err
	}
	err = h.st.DeleteLLMConfig(r.Context(), owner, id)
	if errors.Is(err, store.ErrNotFound) {
		return notFound(id)
	}
	if err != nil {
		return fmt.Errorf("delete llm config: %w", err)
	}
	httpapi.Logger(r.Context()).InfoContext(r.Context(), "llm config deleted", "config_id", id, "owner", ownerKind(owner))
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *Handlers) setDefaultUser(w http.ResponseWriter, r *http.Request) error {
	sub, err := h.user(r, true)
	if err != nil {
		return err
	}
	id, err := setDefaultRequest(w, r)
	if err != nil {
		return err
	}
	c, err := h.st.SetDefaultLLMConfig(r.Context(), sub.owner, id)
	if errors.Is(err, store.ErrNotFound) {
		// One of the user's groups' configurations: by reference.
		v, err := h.setGroupRef(r.Context(), sub, id)
		if err != nil {
			return err
		}
		write(w, http.StatusOK, v)
		return nil
	}
	if err != nil {
		return fmt.Errorf("set default llm config: %w", err)
	}
	httpapi.Logger(r.Context()).InfoContext(r.Context(), "llm config made default", "config_id", id, "owner", "user")
	write(w, http.StatusOK, View(c))
	return nil
}

func (h *Handlers) setDefaultGroup(w http.ResponseWriter, r *http.Request) error {
	owner, err := h.group(r, true)
	if err != nil {
		return err
	}
	id, err := setDefaultRequest(w, r)
	if err != nil {
		return err
	}
	c, err := h.st.SetDefaultLLMConfig(r.Context(), owner, id)
	if errors.Is(err, store.ErrNotFound) {
		return notFound(id)
	}
	if err != nil {
		return fmt.Errorf("set default llm config: %w", err)
	}
	httpapi.Logger(r.Context()).InfoContext(r.Context(), "llm config made default", "config_id", id, "owner", "group")
	write(w, http.StatusOK, View(c))
	return nil
}

// setDefaultRequest returns the {config_id} of PUT .../default/{config_id},
// whose body is {} or empty.
func setDefaultRequest(w http.ResponseWriter, r *http.Request) (string, error) {
	id, err := configID(r)
	if err != nil {
		return "", err
	}
	raw, err := decodeObject(w, r, true)
	if err != nil {
		return "", err
	}
	for _, k := range orderedKeys(raw, nil) {
		return "", unprocessable("Unknown field '%s' (the body of this route is {})", truncate(k, 64))
	}
	return id, nil
}

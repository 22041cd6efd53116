package llmconfigs

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"agentchat/internal/httpapi"
	"agentchat/internal/llmconfig"
	"agentchat/internal/store"
)

// A user's default may be one of their groups' configurations, by
// reference (store.LLMConfigs.SetDefaultLLMConfigRef): made so by the user
// routes PUT .../default/{config_id} and PUT .../{config_id} with
// {"is_default": true} given a group configuration's id, and dropped by
// PUT .../{config_id} with {"is_default": false}. Only a group the user
// is in (as the GroupSource tells) may be named.

// groupConfig returns the configuration id of one of the subject's
// groups, with its group; 404 when none of them has it.
func (h *Handlers) groupConfig(ctx context.Context, sub subject, id string) (*store.LLMConfig, llmconfig.Group, error) {
	groups, err := sub.groups.Groups(ctx, sub.id)
	if err != nil {
		return nil, llmconfig.Group{}, err
	}
	for _, g := range groups {
		c, err := h.st.GetLLMConfig(ctx, store.GroupOwner(g.ID), id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, llmconfig.Group{}, fmt.Errorf("read llm config of group %s: %w", g.ID, err)
		}
		return c, g, nil
	}
	return nil, llmconfig.Group{}, notFound(id)
}

// setGroupRef makes the group configuration id the subject's default by
// reference, and returns it as the subject's list shows it.
func (h *Handlers) setGroupRef(ctx context.Context, sub subject, id string) (ConfigWithSource, error) {
	_, g, err := h.groupConfig(ctx, sub, id)
	if err != nil {
		return ConfigWithSource{}, err
	}
	c, err := h.st.SetDefaultLLMConfigRef(ctx, sub.owner.UserID, g.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return ConfigWithSource{}, notFound(id)
	}
	if err != nil {
		return ConfigWithSource{}, fmt.Errorf("set default llm config by reference: %w", err)
	}
	httpapi.Logger(ctx).InfoContext(ctx, "group llm config made the user's default", "config_id", id, "group_id", g.ID)
	v := groupView(c, g)
	v.IsDefault = true
	return v, nil
}

// updateGroupRef serves PUT .../{config_id} of the user routes for one of
// the subject's groups' configurations: {"is_default": true} makes it the
// user's default by reference, false drops that reference (the user then
// has no default of their own: the first group default, else the
// server's, applies). Anything else is the group's to change: 403. It
// reports false (the 404 of the caller) when id is none of the groups'.
func (h *Handlers) updateGroupRef(w http.ResponseWriter, r *http.Request, sub subject, id string, p *patch) (bool, error) {
	ctx := r.Context()
	c, g, err := h.groupConfig(ctx, sub, id)
	var se *httpapi.StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if p.name != nil || p.modelType != nil || len(p.set) > 0 || len(p.unset) > 0 || p.key != keyKeep || p.isDefault == nil {
		return false, httpapi.Errorf(http.StatusForbidden,
			"LLM model configuration '%s' belongs to group '%s': it is changed on the group's page (with the GNS3 privilege Group.Modify on the group); here only is_default may be given", id, g.Name)
	}
	if *p.isDefault {
		v, err := h.setGroupRef(ctx, sub, id)
		if err != nil {
			return false, err
		}
		write(w, http.StatusOK, v)
		return true, nil
	}
	if err := h.st.UnsetDefaultLLMConfigRef(ctx, sub.owner.UserID, g.ID, id); err != nil {
		return false, fmt.Errorf("unset default llm config by reference: %w", err)
	}
	httpapi.Logger(ctx).InfoContext(ctx, "group llm config no longer the user's default", "config_id", id, "group_id", g.ID)
	v := groupView(c, g)
	// Another request may have made it the default again meanwhile.
	ref, err := llmconfig.DefaultRef(ctx, h.st, sub.owner.UserID)
	if err != nil {
		return false, err
	}
	v.IsDefault = ref != nil && ref.ID == id && ref.Owner == c.Owner
	write(w, http.StatusOK, v)
	return true, nil
}

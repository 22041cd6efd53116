package llmconfigs

import (
	"maps"

	"agentchat/internal/httpapi/views"
	"agentchat/internal/llmconfig"
	"agentchat/internal/store"
)

// Config is a configuration as the API shows it. Config.config always has
// "api_key": null (the key is write-only); whether a key is stored, and a
// masked form of it, are api_key_set and api_key_hint, beside config and
// not inside it: the GNS3 web UI shows every unknown key of config as a
// custom field of the form, and sends it back.
type Config struct {
	ConfigID  string         `json:"config_id"`
	Name      string         `json:"name"`
	ModelType string         `json:"model_type"`
	Config    map[string]any `json:"config"`
	UserID    *string        `json:"user_id"`
	GroupID   *string        `json:"group_id"`
	IsDefault bool           `json:"is_default"`
	Version   int64          `json:"version"`
	CreatedAt string         `json:"created_at"`
	UpdatedAt string         `json:"updated_at"`
	// APIKeySet tells whether a key is stored.
	APIKeySet bool `json:"api_key_set"`
	// APIKeyHint is the masked key ("sk-…abcd"), omitted when there is
	// none and in configurations inherited from a group.
	APIKeyHint string `json:"api_key_hint,omitempty"`
}

// Sources of a configuration in the user's effective list (the "source"
// field, as the GNS3 web UI reads it).
const (
	SourceUser  = "user"
	SourceGroup = "group"
)

// ConfigWithSource is a configuration of the user's effective list:
// source "user" (the user's own) or "group" (inherited from group_name).
type ConfigWithSource struct {
	Config
	Source    string  `json:"source"`
	GroupName *string `json:"group_name"`
}

// InheritedList is the answer to GET /v3/access/users/{user_id}/llm-model-configs:
// the user's own configurations, then those of the user's groups;
// default_config is the effective default (the user's own default, else
// the first group default), null when there is none.
type InheritedList struct {
	Configs       []ConfigWithSource `json:"configs"`
	DefaultConfig *ConfigWithSource  `json:"default_config"`
	Total         int                `json:"total"`
}

// List is the answer of the /own route and of a group's list:
// default_config is the owner's default, null when there is none.
type List struct {
	Configs       []Config `json:"configs"`
	DefaultConfig *Config  `json:"default_config"`
	Total         int      `json:"total"`
}

// View returns the API form of a stored configuration.
func View(c *store.LLMConfig) Config {
	cfg := maps.Clone(c.Config)
	if cfg == nil {
		cfg = map[string]any{}
	}
	cfg[fieldAPIKey] = nil
	v := Config{
		ConfigID: c.ID, Name: c.Name, ModelType: c.ModelType, Config: cfg,
		IsDefault: c.IsDefault, Version: c.Version,
		CreatedAt: views.Timestamp(c.CreatedAt), UpdatedAt: views.Timestamp(c.UpdatedAt),
		APIKeySet: c.APIKeyCipher != "", APIKeyHint: c.APIKeyHint,
	}
	if !v.APIKeySet {
		v.APIKeyHint = ""
	}
	if c.Owner.GroupID != "" {
		g := c.Owner.GroupID
		v.GroupID = &g
	} else {
		u := c.Owner.UserID
		v.UserID = &u
	}
	return v
}

func userView(c *store.LLMConfig) ConfigWithSource {
	return ConfigWithSource{Config: View(c), Source: SourceUser}
}

func groupView(c *store.LLMConfig, g llmconfig.Group) ConfigWithSource {
	v := ConfigWithSource{Config: View(c), Source: SourceGroup}
	v.APIKeyHint = "" // a member sees that the group has a key, not its tail
	name := g.Name
	v.GroupName = &name
	return v
}

func listView(cs []store.LLMConfig) List {
	out := List{Configs: make([]Config, 0, len(cs))}
	for i := range cs {
		v := View(&cs[i])
		out.Configs = append(out.Configs, v)
		if cs[i].IsDefault && out.DefaultConfig == nil {
			d := v
			out.DefaultConfig = &d
		}
	}
	out.Total = len(out.Configs)
	return out
}

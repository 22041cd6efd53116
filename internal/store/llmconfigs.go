package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrVersionConflict means an update named an expected version that is not
// the stored one; errors.As with *VersionConflictError gives both.
var ErrVersionConflict = errors.New("version conflict")

// VersionConflictError is an update refused because the stored version is
// not the expected one.
type VersionConflictError struct {
	Expected, Current int64
}

// Error says both versions.
func (e *VersionConflictError) Error() string {
	return fmt.Sprintf("version conflict: expected version %d, current version is %d", e.Expected, e.Current)
}

// Is makes a *VersionConflictError match ErrVersionConflict.
func (e *VersionConflictError) Is(target error) bool { return target == ErrVersionConflict }

// Owner is who an LLM configuration belongs to: exactly one of UserID and
// GroupID is set.
type Owner struct {
	UserID  string
	GroupID string
}

// UserOwner is the owner of a user's own configurations.
func UserOwner(userID string) Owner { return Owner{UserID: userID} }

// GroupOwner is the owner of a group's configurations.
func GroupOwner(groupID string) Owner { return Owner{GroupID: groupID} }

// Valid reports whether exactly one of the owner's ids is set.
func (o Owner) Valid() bool { return (o.UserID == "") != (o.GroupID == "") }

// LLMConfig is a stored LLM model configuration of a user or a group. The
// API key is stored only sealed (package secrets): APIKeyCipher never holds
// the plaintext.
type LLMConfig struct {
	ID    string
	Owner Owner
	Name  string
	// ModelType is text, vision, stt, tts, multimodal, embedding,
	// reranking or other.
	ModelType string
	// Config is the nested config object without its api_key: provider,
	// base_url, model, temperature, context_limit, max_tokens,
	// context_strategy, copilot_mode and any extra keys, as JSON values.
	// It is stored as JSON text and read back as encoding/json decodes it:
	// every key kept, numbers as float64 (exact for float64 values and for
	// integers up to 2^53), never nil (a nil Config reads back empty).
	Config map[string]any
	// APIKeyCipher is the sealed API key, empty when the config has none.
	APIKeyCipher string
	// APIKeyHint is a masked form of the key for display ("sk-…abcd"),
	// empty when there is none.
	APIKeyHint string
	// IsDefault is true for the owner's one default configuration; it is
	// set by the store on reads (see SetDefaultLLMConfig).
	IsDefault bool
	// Version starts at 1 and grows by one with every update.
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// LLMConfigs stores LLM model configurations. An owner has at most one
// default: making a configuration the default unsets the previous one in
// the same atomic write, also under concurrency.
type LLMConfigs interface {
	// CreateLLMConfig stores a new configuration with Version 1 (zero
	// timestamps set to now). With c.IsDefault it becomes the owner's
	// default atomically with its creation. ErrExists when the id is taken:
	// ids are per owner, another owner may use the same id. An empty c.ID
	// is filled with a new UUID; c.ID, c.Version and the timestamps are
	// filled into c. An invalid owner is an error. A *LimitError (nothing
	// written) when the owner already has Limits.LLMConfigsPerOwner
	// configurations.
	CreateLLMConfig(ctx context.Context, c *LLMConfig) error
	// GetLLMConfig returns the owner's configuration; ErrNotFound when it
	// does not exist or belongs to another owner.
	GetLLMConfig(ctx context.Context, owner Owner, id string) (*LLMConfig, error)
	// ListLLMConfigs returns the owner's configurations, oldest first
	// (CreatedAt, then ID).
	ListLLMConfigs(ctx context.Context, owner Owner) ([]LLMConfig, error)
	// UpdateLLMConfig writes the mutable fields of c (Name, ModelType,
	// Config, APIKeyCipher, APIKeyHint) to the owner's configuration c.ID
	// when its version is expectedVersion (0: whatever it is), increments
	// Version, bumps UpdatedAt and returns the stored configuration.
	// ErrNotFound; a *VersionConflictError on a version mismatch. c.Owner
	// and c.ID select the configuration; c itself is not modified.
	UpdateLLMConfig(ctx context.Context, c *LLMConfig, expectedVersion int64) (*LLMConfig, error)
	// SetDefaultLLMConfig makes id the owner's only default and returns it;
	// ErrNotFound when the owner has no such configuration.
	SetDefaultLLMConfig(ctx context.Context, owner Owner, id string) (*LLMConfig, error)
	// UnsetDefaultLLMConfig removes the owner's default mark if it is on
	// id, leaving the owner with no default. It is conditional: when the
	// default is another configuration (or there is none) nothing changes,
	// so it never unsets a default that another request has just moved to
	// another configuration. ErrNotFound when the owner has no
	// configuration id; no error when id exists but is not the default.
	UnsetDefaultLLMConfig(ctx context.Context, owner Owner, id string) error
	// DefaultLLMConfig returns the owner's default; ErrNotFound when none
	// (also when a user's default is a reference to a group's
	// configuration: see DefaultLLMConfigRef). A store whose read showed
	// that a user has no default by reference either may say so with
	// ErrNoDefaultRef beside ErrNotFound.
	DefaultLLMConfig(ctx context.Context, owner Owner) (*LLMConfig, error)
	// SetDefaultLLMConfigRef makes the configuration id of the group
	// groupID the default of the user userID, by reference (the group's
	// configuration is not copied: its later edits reach the user). The
	// reference is stored on the user's side and replaces the user's
	// default, their own or another reference, in one atomic write; it
	// is the user's one default until SetDefaultLLMConfig (or a creation
	// with IsDefault) of their own, or UnsetDefaultLLMConfigRef, replaces
	// or removes it. The user's own configurations are then not marked
	// IsDefault. Deleting the group's configuration drops the reference:
	// it is then read as no default, also if a configuration with the
	// same id is created again. Whether the user may use the group is the
	// caller's business. It returns the group's configuration (IsDefault
	// the group's own mark); ErrNotFound when the group has no such
	// configuration (the user's default is then unchanged).
	SetDefaultLLMConfigRef(ctx context.Context, userID, groupID, id string) (*LLMConfig, error)
	// DefaultLLMConfigRef returns the group configuration the user's
	// default names by reference (IsDefault the group's own mark);
	// ErrNotFound when the user has no default, when it is one of their
	// own configurations, or when the configuration it named is gone.
	DefaultLLMConfigRef(ctx context.Context, userID string) (*LLMConfig, error)
	// UnsetDefaultLLMConfigRef removes the user's default if it is the
	// reference to the configuration id of the group groupID, leaving the
	// user with no default; it is conditional as UnsetDefaultLLMConfig
	// (another default stays), and no error when there is no such
	// reference.
	UnsetDefaultLLMConfigRef(ctx context.Context, userID, groupID, id string) error
	// DeleteLLMConfig removes the owner's configuration (and its default
	// mark); ErrNotFound when there is none.
	DeleteLLMConfig(ctx context.Context, owner Owner, id string) error
}

package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"agentchat/internal/store"
)

// LLM configurations live in llm_configs, keyed by (owner_kind, owner_id,
// config_id); the owner's default is the one row of llm_config_defaults
// keyed by (owner_kind, owner_id), so an owner has at most one default by
// construction. Every write is one transaction on the single writer
// connection, so concurrent SetDefaultLLMConfig calls are serialized and
// the last one wins.

// Owner kinds of the owner_kind columns.
const (
	ownerUser  = "U"
	ownerGroup = "G"
)

// ownerArgs returns the (owner_kind, owner_id) of o; ok is false when o is
// not a valid owner.
func ownerArgs(o store.Owner) (kind, id string, ok bool) {
	switch {
	case !o.Valid():
		return "", "", false
	case o.UserID != "":
		return ownerUser, o.UserID, true
	default:
		return ownerGroup, o.GroupID, true
	}
}

// llmConfigSelect selects the columns scanned by scanLLMConfig, the default
// mark included; callers append their WHERE clause (on c.*).
const llmConfigSelect = `SELECT c.owner_kind, c.owner_id, c.config_id, c.name, c.model_type, c.config,
	c.api_key_cipher, c.api_key_hint, c.version, c.created_at, c.updated_at, d.config_id IS NOT NULL
FROM llm_configs c LEFT JOIN llm_config_defaults d
	ON d.owner_kind = c.owner_kind AND d.owner_id = c.owner_id AND d.config_id = c.config_id`

// llmConfigRow is a configuration as llmConfigSelect reads it, before
// decoding (the form readCache keeps).
type llmConfigRow struct {
	kind, ownerID, id, name, modelType, config string
	cipher, hint                               string
	version                                    int64
	created, updated                           string
	isDefault                                  bool
}

func (r *llmConfigRow) scan(row scanner) error {
	return row.Scan(&r.kind, &r.ownerID, &r.id, &r.name, &r.modelType, &r.config,
		&r.cipher, &r.hint, &r.version, &r.created, &r.updated, &r.isDefault)
}

// decode returns the configuration of the row, with a Config map of its own.
func (r *llmConfigRow) decode() (*store.LLMConfig, error) {
	c := store.LLMConfig{ID: r.id, Name: r.name, ModelType: r.modelType, APIKeyCipher: r.cipher,
		APIKeyHint: r.hint, Version: r.version, IsDefault: r.isDefault}
	if r.kind == ownerGroup {
		c.Owner = store.GroupOwner(r.ownerID)
	} else {
		c.Owner = store.UserOwner(r.ownerID)
	}
	var err error
	if c.Config, err = decConfig(r.config); err != nil {
		return nil, fmt.Errorf("decode config of LLM configuration %s: %w", c.ID, err)
	}
	if c.CreatedAt, err = decTime(r.created); err != nil {
		return nil, err
	}
	if c.UpdatedAt, err = decTime(r.updated); err != nil {
		return nil, err
	}
	return &c, nil
}

func scanLLMConfig(row scanner) (*store.LLMConfig, error) {
	var r llmConfigRow
	if err := r.scan(row); err != nil {
		return nil, err
	}
	return r.decode()
}

// encConfig encodes a configuration's Config as JSON text; nil is "{}".
func encConfig(m map[string]any) (string, error) {
	if m == nil {
		return "{}", nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// decConfig decodes stored Config text into a map that is never nil.
func decConfig(s string) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// getLLMConfig reads the owner's configuration in tx; ErrNotFound.
func getLLMConfig(ctx context.Context, tx *sql.Tx, kind, ownerID, id string) (*store.LLMConfig, error) {
	c, err := scanLLMConfig(tx.QueryRowContext(ctx, llmConfigSelect+`
WHERE c.owner_kind = ? AND c.owner_id = ? AND c.config_id = ?`, kind, ownerID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	return c, err
}

// CreateLLMConfig implements store.LLMConfigs in one transaction (the
// configuration and, with c.IsDefault, the owner's default mark). An empty
// c.ID is filled with a new UUID; c.Version becomes 1 and zero timestamps
// now (all filled into c). store.ErrExists when the owner already has a
// configuration with that id.
func (s *Store) CreateLLMConfig(ctx context.Context, c *store.LLMConfig) error {
	if c == nil {
		return errors.New("create LLM configuration: nil configuration")
	}
	kind, ownerID, ok := ownerArgs(c.Owner)
	if !ok {
		return fmt.Errorf("create LLM configuration %s: the owner needs exactly one of a user id and a group id", c.ID)
	}
	cfg, err := encConfig(c.Config)
	if err != nil {
		return fmt.Errorf("create LLM configuration %s: encode config: %w", c.ID, err)
	}
	now := s.now().UTC()
	created, updated := c.CreatedAt, c.UpdatedAt
	if created.IsZero() {
		created = now
	}
	if updated.IsZero() {
		updated = now
	}
	createdText, err := encTime(created)
	if err != nil {
		return fmt.Errorf("create LLM configuration %s: CreatedAt: %w", c.ID, err)
	}
	updatedText, err := encTime(updated)
	if err != nil {
		return fmt.Errorf("create LLM configuration %s: UpdatedAt: %w", c.ID, err)
	}
	id := c.ID
	if id == "" {
		id = uuid.NewString()
	}
	err = s.writeConfigs(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO llm_configs (owner_kind, owner_id, config_id, name, model_type, config,
	api_key_cipher, api_key_hint, version, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?) ON CONFLICT DO NOTHING`,
			kind, ownerID, id, c.Name, c.ModelType, cfg, c.APIKeyCipher, c.APIKeyHint, createdText, updatedText)
		if err := oneRow(res, err, store.ErrExists); err != nil {
			return err
		}
		if err := s.llmConfigsOverLimitTx(ctx, tx, kind, ownerID); err != nil {
			return err
		}
		if c.IsDefault {
			return setDefault(ctx, tx, kind, ownerID, id)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("create LLM configuration %s: %w", id, err)
	}
	c.ID, c.Version, c.CreatedAt, c.UpdatedAt = id, 1, created.UTC(), updated.UTC()
	return nil
}

// GetLLMConfig implements store.LLMConfigs.
func (s *Store) GetLLMConfig(ctx context.Context, owner store.Owner, id string) (*store.LLMConfig, error) {
	kind, ownerID, ok := ownerArgs(owner)
	if !ok {
		return nil, fmt.Errorf("get LLM configuration %s: %w", id, store.ErrNotFound)
	}
	var c *store.LLMConfig
	err := s.read(ctx, func(tx *sql.Tx) error {
		var err error
		c, err = getLLMConfig(ctx, tx, kind, ownerID, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("get LLM configuration %s: %w", id, err)
	}
	return c, nil
}

// ListLLMConfigs implements store.LLMConfigs: oldest first, then by id.
func (s *Store) ListLLMConfigs(ctx context.Context, owner store.Owner) ([]store.LLMConfig, error) {
	out := []store.LLMConfig{}
	kind, ownerID, ok := ownerArgs(owner)
	if !ok {
		return out, nil
	}
	rows, err := s.r.QueryContext(ctx, llmConfigSelect+`
WHERE c.owner_kind = ? AND c.owner_id = ? ORDER BY c.created_at, c.config_id`, kind, ownerID)
	if err != nil {
		return nil, fmt.Errorf("list LLM configurations: %w", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		c, err := scanLLMConfig(rows)
		if err != nil {
			return nil, fmt.Errorf("list LLM configurations: %w", err)
		}
		out = append(out, *c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list LLM configurations: %w", err)
	}
	return out, nil
}

// UpdateLLMConfig implements store.LLMConfigs in one transaction: the
// version is checked and incremented by the same UPDATE.
func (s *Store) UpdateLLMConfig(ctx context.Context, c *store.LLMConfig, expectedVersion int64) (*store.LLMConfig, error) {
	if c == nil {
		return nil, errors.New("update LLM configuration: nil configuration")
	}
	kind, ownerID, ok := ownerArgs(c.Owner)
	if !ok {
		return nil, fmt.Errorf("update LLM configuration %s: %w", c.ID, store.ErrNotFound)
	}
	cfg, err := encConfig(c.Config)
	if err != nil {
		return nil, fmt.Errorf("update LLM configuration %s: encode config: %w", c.ID, err)
	}
	var out *store.LLMConfig
	err = s.writeConfigs(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE llm_configs SET name = ?, model_type = ?, config = ?,
	api_key_cipher = ?, api_key_hint = ?, version = version + 1, updated_at = ?
WHERE owner_kind = ? AND owner_id = ? AND config_id = ? AND (? = 0 OR version = ?)`,
			c.Name, c.ModelType, cfg, c.APIKeyCipher, c.APIKeyHint, s.nowText(),
			kind, ownerID, c.ID, expectedVersion, expectedVersion)
		if err := oneRow(res, err, errNoChange); errors.Is(err, errNoChange) {
			var current int64
			err := tx.QueryRowContext(ctx, `SELECT version FROM llm_configs WHERE owner_kind = ? AND owner_id = ? AND config_id = ?`,
				kind, ownerID, c.ID).Scan(&current)
			if errors.Is(err, sql.ErrNoRows) {
				return store.ErrNotFound
			}
			if err != nil {
				return err
			}
			return &store.VersionConflictError{Expected: expectedVersion, Current: current}
		} else if err != nil {
			return err
		}
		out, err = getLLMConfig(ctx, tx, kind, ownerID, c.ID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update LLM configuration %s: %w", c.ID, err)
	}
	return out, nil
}

// errNoChange is an internal marker: an UPDATE matched no row.
var errNoChange = errors.New("no row changed")

// setDefault makes id the owner's default in tx, replacing the previous
// one in the same row (and, for a user, a default by reference).
func setDefault(ctx context.Context, tx *sql.Tx, kind, ownerID, id string) error {
	if kind == ownerUser {
		if _, err := tx.ExecContext(ctx, `DELETE FROM llm_config_default_refs WHERE user_id = ?`, ownerID); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO llm_config_defaults (owner_kind, owner_id, config_id) VALUES (?, ?, ?)
ON CONFLICT (owner_kind, owner_id) DO UPDATE SET config_id = excluded.config_id`, kind, ownerID, id)
	return err
}

// SetDefaultLLMConfig implements store.LLMConfigs: one transaction checks
// the configuration and replaces the owner's default row.
func (s *Store) SetDefaultLLMConfig(ctx context.Context, owner store.Owner, id string) (*store.LLMConfig, error) {
	kind, ownerID, ok := ownerArgs(owner)
	if !ok {
		return nil, fmt.Errorf("set default LLM configuration %s: %w", id, store.ErrNotFound)
	}
	var out *store.LLMConfig
	err := s.writeConfigs(ctx, func(tx *sql.Tx) error {
		var n int
		err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM llm_configs WHERE owner_kind = ? AND owner_id = ? AND config_id = ?`,
			kind, ownerID, id).Scan(&n)
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrNotFound
		}
		if err := setDefault(ctx, tx, kind, ownerID, id); err != nil {
			return err
		}
		out, err = getLLMConfig(ctx, tx, kind, ownerID, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("set default LLM configuration %s: %w", id, err)
	}
	return out, nil
}

// UnsetDefaultLLMConfig implements store.LLMConfigs in one transaction:
// the owner's default row is deleted only where it names id (a default on
// another configuration stays), then, when nothing was deleted, the
// configuration's existence decides between no error and ErrNotFound.
func (s *Store) UnsetDefaultLLMConfig(ctx context.Context, owner store.Owner, id string) error {
	kind, ownerID, ok := ownerArgs(owner)
	if !ok {
		return fmt.Errorf("unset default LLM configuration %s: %w", id, store.ErrNotFound)
	}
	err := s.writeConfigs(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM llm_config_defaults WHERE owner_kind = ? AND owner_id = ? AND config_id = ?`,
			kind, ownerID, id)
		if err := oneRow(res, err, errNoChange); !errors.Is(err, errNoChange) {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM llm_configs WHERE owner_kind = ? AND owner_id = ? AND config_id = ?`,
			kind, ownerID, id).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return store.ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("unset default LLM configuration %s: %w", id, err)
	}
	return nil
}

// DefaultLLMConfig implements store.LLMConfigs. The read is cached (see
// readCache): writes through this Store are seen at once, another
// process's within readTTL.
func (s *Store) DefaultLLMConfig(ctx context.Context, owner store.Owner) (*store.LLMConfig, error) {
	kind, ownerID, ok := ownerArgs(owner)
	if !ok {
		return nil, fmt.Errorf("default LLM configuration: %w", store.ErrNotFound)
	}
	key := configOwnerKey{kind: kind, id: ownerID}
	now := s.now()
	e, hit := s.configs.get(key, now)
	if !hit {
		gen := s.configs.generation()
		e = cachedConfig{found: true}
		st, err := s.defaultLLMConfig.get(ctx, s.r)
		if err != nil {
			return nil, fmt.Errorf("default LLM configuration: %w", err)
		}
		err = e.row.scan(st.QueryRowContext(ctx, kind, ownerID))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			e.found = false
		case err != nil:
			return nil, fmt.Errorf("default LLM configuration: %w", err)
		}
		s.configs.put(key, e, gen, now)
	}
	if !e.found {
		return nil, fmt.Errorf("default LLM configuration: %w", store.ErrNotFound)
	}
	c, err := e.row.decode()
	if err != nil {
		return nil, fmt.Errorf("default LLM configuration: %w", err)
	}
	return c, nil
}

// writeConfigs is write for the LLM configuration tables: it invalidates
// the cached defaults (and defaults by reference) once the transaction is
// over.
func (s *Store) writeConfigs(ctx context.Context, fn func(tx *sql.Tx) error) error {
	defer s.configRefs.invalidate()
	defer s.configs.invalidate()
	return s.write(ctx, fn)
}

// DeleteLLMConfig implements store.LLMConfigs: the configuration and its
// default mark go in one transaction.
func (s *Store) DeleteLLMConfig(ctx context.Context, owner store.Owner, id string) error {
	kind, ownerID, ok := ownerArgs(owner)
	if !ok {
		return fmt.Errorf("delete LLM configuration %s: %w", id, store.ErrNotFound)
	}
	err := s.writeConfigs(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM llm_config_defaults WHERE owner_kind = ? AND owner_id = ? AND config_id = ?`,
			kind, ownerID, id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM llm_configs WHERE owner_kind = ? AND owner_id = ? AND config_id = ?`,
			kind, ownerID, id)
		return oneRow(res, err, store.ErrNotFound)
	})
	if err != nil {
		return fmt.Errorf("delete LLM configuration %s: %w", id, err)
	}
	return nil
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"agentchat/internal/store"
)

// A user's default may be a group's configuration, by reference: the one
// row of llm_config_default_refs of the user, which goes with the group's
// configuration (ON DELETE CASCADE). A user has either that row or a row
// of llm_config_defaults: setDefault deletes the reference, and
// SetDefaultLLMConfigRef the user's own default, in their transaction.

// SetDefaultLLMConfigRef implements store.LLMConfigs in one transaction:
// the group's configuration is checked, the user's own default removed
// and the reference written.
func (s *Store) SetDefaultLLMConfigRef(ctx context.Context, userID, groupID, id string) (*store.LLMConfig, error) {
	if userID == "" || groupID == "" || id == "" {
		return nil, fmt.Errorf("set default LLM configuration %q by reference: %w", id, store.ErrNotFound)
	}
	var out *store.LLMConfig
	err := s.writeConfigs(ctx, func(tx *sql.Tx) error {
		c, err := getLLMConfig(ctx, tx, ownerGroup, groupID, id)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM llm_config_defaults WHERE owner_kind = ? AND owner_id = ?`, ownerUser, userID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO llm_config_default_refs (user_id, group_id, config_id) VALUES (?, ?, ?)
ON CONFLICT (user_id) DO UPDATE SET group_id = excluded.group_id, config_id = excluded.config_id`, userID, groupID, id); err != nil {
			return err
		}
		out = c
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("set default LLM configuration %s by reference: %w", id, err)
	}
	return out, nil
}

// defaultLLMConfigRefQuery reads the group configuration a user's default
// names.
const defaultLLMConfigRefQuery = llmConfigSelect + `
JOIN llm_config_default_refs r ON r.ref_kind = c.owner_kind AND r.group_id = c.owner_id AND r.config_id = c.config_id
WHERE r.user_id = ?`

// DefaultLLMConfigRef implements store.LLMConfigs with one prepared query.
// The read is cached as DefaultLLMConfig's is (see readCache; every turn of
// a user without a default of their own makes it): writes through this
// Store are seen at once, another process's within readTTL.
func (s *Store) DefaultLLMConfigRef(ctx context.Context, userID string) (*store.LLMConfig, error) {
	if userID == "" {
		return nil, fmt.Errorf("default LLM configuration by reference: %w", store.ErrNotFound)
	}
	now := s.now()
	e, hit := s.configRefs.get(userID, now)
	if !hit {
		gen := s.configRefs.generation()
		st, err := s.defaultLLMConfigRef.get(ctx, s.r)
		if err != nil {
			return nil, fmt.Errorf("default LLM configuration by reference: %w", err)
		}
		e = cachedConfig{found: true}
		err = e.row.scan(st.QueryRowContext(ctx, userID))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			e.found = false
		case err != nil:
			return nil, fmt.Errorf("default LLM configuration by reference: %w", err)
		}
		s.configRefs.put(userID, e, gen, now)
	}
	if !e.found {
		return nil, fmt.Errorf("default LLM configuration by reference: %w", store.ErrNotFound)
	}
	c, err := e.row.decode()
	if err != nil {
		return nil, fmt.Errorf("default LLM configuration by reference: %w", err)
	}
	return c, nil
}

// UnsetDefaultLLMConfigRef implements store.LLMConfigs: one DELETE of the
// user's reference where it names the group's configuration id.
func (s *Store) UnsetDefaultLLMConfigRef(ctx context.Context, userID, groupID, id string) error {
	err := s.writeConfigs(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM llm_config_default_refs WHERE user_id = ? AND group_id = ? AND config_id = ?`,
			userID, groupID, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("unset default LLM configuration %s by reference: %w", id, err)
	}
	return nil
}

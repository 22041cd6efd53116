package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"agentchat/internal/store"
)

// UpdateSessionMetadata implements store.SessionMetadata: the metadata is
// read, merged and written back in one write transaction.
func (s *Store) UpdateSessionMetadata(ctx context.Context, k store.Key, set map[string]any) (*store.Session, error) {
	if _, ok := set[store.MetadataCopilotMode]; ok {
		return nil, fmt.Errorf("update metadata of session %s: %s cannot be changed", k.ThreadID, store.MetadataCopilotMode)
	}
	var sess *store.Session
	err := s.write(ctx, func(tx *sql.Tx) error {
		var raw string
		err := tx.QueryRowContext(ctx, `SELECT metadata FROM sessions WHERE `+keyWhere, keyArgs(k)...).Scan(&raw)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		md := map[string]any{}
		if raw != "" {
			if err := json.Unmarshal([]byte(raw), &md); err != nil {
				return fmt.Errorf("decode metadata: %w", err)
			}
		}
		for key, v := range set {
			if v == nil {
				delete(md, key)
			} else {
				md[key] = v
			}
		}
		enc, err := encJSON(md)
		if err != nil {
			return fmt.Errorf("encode metadata: %w", err)
		}
		sess, err = scanSession(tx.QueryRowContext(ctx,
			`UPDATE sessions SET metadata = ? WHERE `+keyWhere+` RETURNING `+sessionCols, append([]any{enc}, keyArgs(k)...)...))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update metadata of session %s: %w", k.ThreadID, err)
	}
	return sess, nil
}

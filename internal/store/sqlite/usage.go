package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"agentchat/internal/store"
)

// AddUsage implements store.UsageLedger with one upsert that adds.
func (s *Store) AddUsage(ctx context.Context, k store.UsageKey, d store.Usage) error {
	if err := k.Check(); err != nil {
		return fmt.Errorf("add usage: %w", err)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO usage_ledger
	(user_id, day, model, key_id, project_id, session_id,
	 llm_calls, input_tokens, cached_input_tokens, output_tokens, cost_nanos, unpriced_calls)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (user_id, day, model, key_id, project_id, session_id) DO UPDATE SET
	llm_calls = llm_calls + excluded.llm_calls,
	input_tokens = input_tokens + excluded.input_tokens,
	cached_input_tokens = cached_input_tokens + excluded.cached_input_tokens,
	output_tokens = output_tokens + excluded.output_tokens,
	cost_nanos = cost_nanos + excluded.cost_nanos,
	unpriced_calls = unpriced_calls + excluded.unpriced_calls`,
			k.UserID, k.Day, k.Model, k.KeyID, k.ProjectID, k.SessionID,
			d.LLMCalls, d.InputTokens, d.CachedInputTokens, d.OutputTokens, d.CostNanos, d.UnpricedCalls)
		return err
	})
	if err != nil {
		return fmt.Errorf("add usage of user %s: %w", k.UserID, err)
	}
	return nil
}

// ListUsage implements store.UsageLedger: a range of the primary key.
func (s *Store) ListUsage(ctx context.Context, userID, fromDay, toDay string) ([]store.UsageRow, error) {
	var rows []store.UsageRow
	err := s.read(ctx, func(tx *sql.Tx) error {
		rs, err := tx.QueryContext(ctx, `SELECT day, model, key_id, project_id, session_id,
	llm_calls, input_tokens, cached_input_tokens, output_tokens, cost_nanos, unpriced_calls
FROM usage_ledger WHERE user_id = ? AND day >= ? AND day <= ?
ORDER BY day, model, key_id, project_id, session_id`, userID, fromDay, toDay)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			r := store.UsageRow{UsageKey: store.UsageKey{UserID: userID}}
			if err := rs.Scan(&r.Day, &r.Model, &r.KeyID, &r.ProjectID, &r.SessionID,
				&r.LLMCalls, &r.InputTokens, &r.CachedInputTokens, &r.OutputTokens, &r.CostNanos, &r.UnpricedCalls); err != nil {
				return err
			}
			rows = append(rows, r)
		}
		return rs.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list usage of user %s: %w", userID, err)
	}
	return rows, nil
}

package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"agentchat/internal/store"
)

// addUsageQuery adds to a ledger row, creating it when missing.
const addUsageQuery = `INSERT INTO usage_ledger
	(user_id, day, model, key_id, project_id, session_id,
	 llm_calls, input_tokens, cached_input_tokens, output_tokens, cost_nanos, unpriced_calls)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (user_id, day, model, key_id, project_id, session_id) DO UPDATE SET
	llm_calls = llm_calls + excluded.llm_calls,
	input_tokens = input_tokens + excluded.input_tokens,
	cached_input_tokens = cached_input_tokens + excluded.cached_input_tokens,
	output_tokens = output_tokens + excluded.output_tokens,
	cost_nanos = cost_nanos + excluded.cost_nanos,
	unpriced_calls = unpriced_calls + excluded.unpriced_calls`

// usageAdd is one AddUsage waiting for its transaction.
type usageAdd struct {
	k store.UsageKey
	d store.Usage
}

// AddUsage implements store.UsageLedger: the add joins the ledger
// writer's next transaction (see groupWriter) and returns once it is
// committed.
func (s *Store) AddUsage(ctx context.Context, k store.UsageKey, d store.Usage) error {
	if err := k.Check(); err != nil {
		return fmt.Errorf("add usage: %w", err)
	}
	if err := s.ledger.add(ctx, usageAdd{k: k, d: d}); err != nil {
		return fmt.Errorf("add usage of user %s: %w", k.UserID, err)
	}
	return nil
}

// commitUsage adds batch to the ledger in one transaction (no add fails
// alone), one upsert per row: the adds of one row (a user's /v1 calls of
// a day and model, the turns of a session) are summed first.
func (s *Store) commitUsage(batch []usageAdd, _ []error) error {
	ctx, cancel := context.WithTimeout(context.Background(), groupCommitTimeout)
	defer cancel()
	st, err := s.addUsage.get(ctx, s.w)
	if err != nil {
		return err
	}
	batch = mergeUsage(batch)
	return s.write(ctx, func(tx *sql.Tx) error {
		stmt := tx.StmtContext(ctx, st)
		for _, a := range batch {
			k, d := a.k, a.d
			if _, err := stmt.ExecContext(ctx, k.UserID, k.Day, k.Model, k.KeyID, k.ProjectID, k.SessionID,
				d.LLMCalls, d.InputTokens, d.CachedInputTokens, d.OutputTokens, d.CostNanos, d.UnpricedCalls); err != nil {
				return err
			}
		}
		return nil
	})
}

// mergeUsage returns batch with the adds of one key summed into the first
// of them, in the batch's order (batch itself when no key repeats).
func mergeUsage(batch []usageAdd) []usageAdd {
	if len(batch) < 2 {
		return batch
	}
	at := make(map[store.UsageKey]int, len(batch))
	out := make([]usageAdd, 0, len(batch))
	for _, a := range batch {
		if i, ok := at[a.k]; ok {
			out[i].d = out[i].d.Add(a.d)
			continue
		}
		at[a.k] = len(out)
		out = append(out, a)
	}
	return out
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

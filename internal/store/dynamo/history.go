package dynamo

import (
	"context"
	"fmt"

	"agentchat/internal/store"
)

var _ store.HistoryPager = (*Store)(nil)

// ListHistory implements store.HistoryPager: the commit state first, then
// the message items below the page's cursor, newest first, in queries of
// a little more than the page, until the page is full (Limit, MaxBytes)
// or the history begins. Every item up to the commit marker read first is
// written, so a missing one is an error, as in ListMessages.
func (s *Store) ListHistory(ctx context.Context, k store.Key, p store.HistoryPage) ([]store.Message, bool, error) {
	if err := checkKey(k); err != nil {
		return nil, false, fmt.Errorf("list history: %w", err)
	}
	c, err := s.readCommit(ctx, k)
	if err != nil {
		return nil, false, fmt.Errorf("list history of %s: %w", k.ThreadID, err)
	}
	limit := max(p.Limit, 1)
	newCol := func() *collector {
		col := newCollector(&s.deflater, c, 0)
		page := p
		col.page = &page
		if p.Before > 0 {
			col.next = c.below(p.Before)
		}
		return col
	}
	col := newCol()
	if col.next == 0 {
		return []store.Message{}, false, nil
	}
	pk := sessionPK(k.ProjectID, k.ThreadID)
	col, err = s.collectCommitted(ctx, newCol, pk, msgPrefix, msgSK(col.next)+"#~", limit+2)
	if err != nil {
		return nil, false, fmt.Errorf("list history of %s: %w", k.ThreadID, err)
	}
	return col.result(), col.next != 0, nil
}

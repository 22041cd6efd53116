package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"agentchat/internal/store"
)

var _ store.TurnOpener = (*Store)(nil)

// OpenTurn implements store.TurnOpener in one round trip: the update that
// takes the lease (AcquireLease's) returns the whole meta item, the
// session and its commit state as the lease left them, while the first
// page of the history is queried beside it, eventually consistent. The
// history is then what ListMessages would return: read again strongly
// consistent when that page lacks a committed message (the query may
// even have run before the previous turn's last commit). ListMessages
// costs the commit state's read and a second round trip after the lease;
// this costs neither.
func (s *Store) OpenTurn(ctx context.Context, k store.Key, owner string, ttl time.Duration, historyLimit int) (*store.Session, []store.Message, error) {
	if err := checkKey(k); err != nil {
		return nil, nil, fmt.Errorf("open turn: %w", err)
	}
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type firstPage struct {
		page *dynamodb.QueryOutput
		err  error
	}
	pages := make(chan firstPage, 1)
	go func() {
		p, err := s.historyPage(qctx, sessionPK(k.ProjectID, k.ThreadID), historyLimit, nil)
		pages <- firstPage{p, err}
	}()
	it, err := s.acquireLease(ctx, k, owner, ttl, types.ReturnValueAllNew)
	if err != nil {
		cancel()
		<-pages
		return nil, nil, err
	}
	fp := <-pages
	sess, hist, err := s.openedTurn(ctx, k, historyLimit, it, fp.page, fp.err)
	if err != nil {
		// The lease is of no use without the session: free it.
		_ = s.ReleaseLease(context.WithoutCancel(ctx), k, owner)
		return nil, nil, fmt.Errorf("open turn on session %s: %w", k.ThreadID, err)
	}
	return sess, hist, nil
}

// openedTurn decodes the session and the commit state of the meta item
// it and completes the history from the first page of its query.
func (s *Store) openedTurn(ctx context.Context, k store.Key, limit int, it item, page *dynamodb.QueryOutput, qerr error) (*store.Session, []store.Message, error) {
	sess, err := sessionFromItem(it)
	if err != nil {
		return nil, nil, fmt.Errorf("decode the session: %w", err)
	}
	c, err := commitFromItem(it)
	if err != nil {
		return nil, nil, fmt.Errorf("decode the commit state: %w", err)
	}
	hist, err := s.historyOf(ctx, k, limit, c, page, qerr)
	if err != nil {
		return nil, nil, err
	}
	return sess, hist, nil
}

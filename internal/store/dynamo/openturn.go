package dynamo

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"agentchat/internal/store"
)

var _ store.TurnOpenGuesser = (*Store)(nil)

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
	return s.openTurn(ctx, k, owner, ttl, historyLimit, false)
}

// OpenTurnOrGuess implements store.TurnOpenGuesser: OpenTurn, but a lease
// refused with no item returned (DynamoDB returns the item that failed the
// condition, so none means no such item; an emulator may return none
// either way) whose query beside found no message is taken for a missing
// session, without the strongly consistent read of the meta item that
// OpenTurn makes to tell. A turn that may create its session (every chat
// request with a session id) then needs no read of the session beside the
// lease: one GetItem (1 RCU) less per turn, and one more for a new one.
func (s *Store) OpenTurnOrGuess(ctx context.Context, k store.Key, owner string, ttl time.Duration, historyLimit int) (*store.Session, []store.Message, error) {
	return s.openTurn(ctx, k, owner, ttl, historyLimit, true)
}

// openTurn is OpenTurn, or OpenTurnOrGuess when guess.
func (s *Store) openTurn(ctx context.Context, k store.Key, owner string, ttl time.Duration, historyLimit int, guess bool) (*store.Session, []store.Message, error) {
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
	// The page, received once, whoever asks first (the guess or the end).
	first := sync.OnceValue(func() firstPage { return <-pages })
	var unseen func() bool
	if guess {
		unseen = func() bool {
			p := first()
			return p.err == nil && p.page != nil && p.page.ScannedCount == 0 && p.page.LastEvaluatedKey == nil
		}
	}
	it, err := s.acquireLease(ctx, k, owner, ttl, types.ReturnValueAllNew, unseen)
	if err != nil {
		cancel()
		first()
		return nil, nil, err
	}
	p := first()
	sess, hist, err := s.openedTurn(ctx, k, historyLimit, it, p.page, p.err)
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

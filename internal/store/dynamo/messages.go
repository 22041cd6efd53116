package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"agentchat/internal/store"
)

// Message append protocol
//
// The meta item of a session holds two counters: msg_reserved, the last
// sequence number handed out, and msg_seq, the commit marker: messages with
// a seq above msg_seq are invisible. It also holds msg_gaps, the ranges of
// sequence numbers that were voided; they stay invisible. And it holds
// msg_epoch, a random id of this incarnation of the thread id: a session
// deleted and created again with the same (client-chosen) id starts its
// counters at 0 again under a new epoch.
//
//  1. Reserve: UpdateItem ADD msg_reserved :n, SET msg_epoch =
//     if_not_exists(msg_epoch, :new) (conditioned on the session's owner)
//     returns the new msg_reserved, last, and the epoch; the append owns
//     the seqs first = last-n+1 .. last. ADD is atomic, so concurrent
//     appends of one incarnation get disjoint ranges.
//  2. Write: every message item (and every part item of a large message)
//     is put with PutItem IF attribute_not_exists(SK), all of them in
//     parallel (at most putConcurrency at once), so the step costs one
//     round trip like a batch write. An item is tagged with the id of the
//     append that wrote it (wid) and with the epoch its reservation
//     returned (msg_epoch, the same attribute name as on the meta item;
//     deletion and readers tell incarnations apart by it, see "Deletion"
//     below). Within one incarnation nobody else
//     writes these keys, but an append that was in flight when its session
//     was deleted (a stale append) may still put items at seqs that the
//     re-created session hands out again. The condition keeps it from
//     overwriting anything: a put that finds an item of another wid (one of
//     our own, from a put the SDK retried after a lost answer, counts as
//     written) is a conflict (see 5).
//  3. Commit: UpdateItem SET msg_seq = :last IF msg_seq = :first-1 AND
//     msg_epoch = :epoch. Ranges commit in reservation order; while an
//     earlier range is uncommitted the condition fails and the append polls
//     (the faster the closer it is to the head) until the marker reaches
//     first-1. All of a range becomes visible at once, and a committed seq
//     holds the items its committer wrote. The epoch keeps a stale append
//     from committing (or voiding) anything in the re-created session; it
//     finds the epoch changed and reports store.ErrNotFound.
//  4. Skip a dead range: when msg_seq has not moved for the stall timeout,
//     the earlier append is presumed dead (a crashed process). The waiter
//     then sets msg_seq from the value it saw to first-1 and, in the same
//     conditional update, appends that range to msg_gaps, so that items the
//     dead (or merely very slow) append may still write stay invisible.
//     Such an append finds msg_seq at or past its range and reports an
//     error; the caller never sees a half-written append.
//  5. Conflict: an append whose put met another append's item voids its
//     range (waiting for its turn as in 3, then msg_seq = last with the
//     range added to msg_gaps), finds the highest message seq present, h,
//     and starts again from 1 with a reservation that reaches past h: it
//     adds n + max(0, h - last) and uses only the top n seqs, the skipped
//     seqs below being added to msg_gaps by its commit. So the stray items
//     of a stale append cost one retry, and they never become visible.
//     After maxAppendAttempts conflicts the append fails.
//
// An append that fails after step 1 (write error, cancelled context) voids
// its own range at once when it is the next to commit, so later appends do
// not wait for the stall timeout; a commit that was in flight when the
// context ended may have won, in which case the append reports success.
//
// Readers (ListMessages) read msg_seq, msg_gaps and msg_epoch with a
// strongly consistent GetItem and, in parallel, query the newest message
// items; items above msg_seq or in a gap are ignored, and so are items
// stamped with another epoch (strays of another incarnation: they are
// never returned as this one's; should one stand at a committed seq, whose
// own item is then gone, that seq is reported missing as when it has no
// item at all). Items without msg_epoch (written before items were
// stamped) are taken as the current incarnation's. If the query ran before the
// latest commit and so lacks a committed item, the range is read again
// (once), now that the marker is known. A session thus costs one sequential
// round trip to read in the common case.
//
// A message larger than the item limit allows (about 350 KB) is stored as
// its JSON body cut into 300 KB binary chunks: the first on the message
// item (with the number of parts), the others on part items MSG#{seq}#P{n},
// all put conditionally in step 2. Readers take only the parts whose wid is
// the message item's; since every put is conditional, a committed message
// has all its parts, and a stray part of another append (a stale one's, at
// a number the message does not use) is ignored.
//
// Counting
//
// The meta item also holds msg_committed, the number of committed
// messages: msg_seq less the voided seqs. A commit (3) adds the number of
// messages it makes visible to it in the same conditional update, with
// ADD IF attribute_exists(msg_committed); voids (4, 5 and a failed append)
// add nothing, and a rollback, which voids committed messages, subtracts
// them in its update (see "Rollback of a turn" in rollback.go). So the
// counter moves exactly with what readers see, and a commit retried after
// a lost answer finds msg_seq moved and adds nothing again. A meta item written before the counter existed fails that
// condition; the commit then reads the commit state (as it does after any
// failed condition) and starts the counter in its update, SET
// msg_committed = (visible seqs up to msg_seq) + n IF
// attribute_not_exists(msg_committed), once per session.
//
// message_count itself is written by the turns, once each, through
// AddTurnStats; a turn cut before (its process killed) leaves its messages
// committed but uncounted. AcquireLease sets message_count =
// if_not_exists(msg_committed, message_count) in the update that takes
// the lease (reconcileMessageCount), so the next turn counts them at no
// extra round trip.
//
// (An earlier version wrote the items with an unconditional BatchWriteItem
// and relied on wid for parts only, so a stale append could overwrite the
// committed messages of a re-created session with the same thread id, and
// its commit, conditioned on msg_seq alone, could even succeed there.)
//
// Deletion
//
// DeleteSession and DeleteProject remove one incarnation of a thread
// (deleteThread), never an item of a later one:
//
//	a. Epoch: the first page of the partition (strongly consistent,
//	   ascending) starts with the meta item (META sorts before MSG#); its
//	   msg_epoch E is the epoch of the incarnation being removed, fixed for
//	   as long as that meta item exists. No meta item (or, for
//	   DeleteSession, another user's): nothing to remove, store.ErrNotFound.
//	   A meta item without an epoch (no append has reserved yet) is fenced
//	   first: UpdateItem SET msg_epoch = if_not_exists(msg_epoch, :new) IF
//	   it exists (and belongs to the user) pins E, which appends that
//	   reserve later get too, and the first page is read again.
//	b. First pass (clearIncarnation), page by page. The items of the page
//	   stamped E or not stamped at all are deleted one by one (DeleteItem,
//	   at most putConcurrency at once), each IF msg_epoch = E OR
//	   attribute_not_exists(msg_epoch), never with an unconditional batch
//	   delete: a page read while the meta item held E may be deleted from
//	   after another deletion of E has emptied its keys, deleted the meta
//	   item, and a re-created session has put its own items at those keys
//	   (every item of a later incarnation carries its own epoch, so its
//	   condition fails and it stays). An item of another epoch is a stray
//	   of a stale append of an earlier incarnation, unless a concurrent
//	   deletion of this incarnation has already deleted the meta item and
//	   the id was used again; so such items are deleted only after a
//	   consistent read shows the meta item still holding E (it then held E
//	   all along since E was read, so the page was read before any later
//	   incarnation existed), one by one, each IF msg_epoch is still the one
//	   read. When the meta item no longer holds E, another deletion has
//	   removed this incarnation and this one stops.
//	c. The meta item is deleted IF msg_epoch = E: a deletion that lost such
//	   a race never deletes a later incarnation's meta item.
//	d. Clean-up pass: appends of E that were in flight may have put items
//	   after the first pass (their commits now fail: the meta item is
//	   gone). From here on the id may be re-created and committed into at
//	   any time, so each item found is deleted on its own with DeleteItem
//	   IF msg_epoch = E OR attribute_not_exists(msg_epoch); the items of a
//	   later incarnation carry its own epoch and stay. Items not stamped
//	   (written by a version before the stamp) are deleted as before.
//
// A stamped item of E that arrives after the clean-up pass stays as a
// stray; the next incarnation ignores it (readers skip other epochs,
// appends retry past it, see 5) and its own deletion removes it (b).
// A removal cut off before c leaves the meta item, so running it again
// (DeleteProject pages GSI1 by the meta items) finishes the job.
//
// Every delete of a message item is thus conditioned on its epoch, in both
// passes: no interleaving of deletions of one incarnation with the
// re-creation of the id and its appends removes an item of the later
// incarnation. A conditional delete costs the same write capacity as a
// batched one; only the round trips grow (one per putConcurrency items
// instead of one per 25).
//
// (An earlier version deleted every item of the partition in the clean-up
// pass, the meta item included, so a session re-created in the window lost
// its meta item and the messages it had committed. A later one batch-
// deleted the first pass's items unconditionally (BatchWriteItem cannot
// carry a condition), which left the window above open: two deletions of
// one incarnation racing, the first emptying a key and deleting the meta
// item and a re-created session putting an item at that key, all between
// the other's read of a page and its batch delete of it.)

// clearIncarnation is the first pass of a deletion (step b of "Deletion"):
// it deletes the items of partition pk but the meta item, page by page from
// the first page out (read when the meta item held epoch), each on its own
// and only if it is still of epoch (or of none), so that an item a later
// incarnation of the thread id put at the same key meanwhile stays. It
// reports held = false when it found the meta item gone or holding another
// epoch (another deletion removed the incarnation), and then stops.
func (s *Store) clearIncarnation(ctx context.Context, pk, epoch string, out *dynamodb.QueryOutput) (held bool, err error) {
	for {
		var ours, strays []item
		for _, it := range out.Items {
			switch ep := getS(it, mEpoch); {
			case getS(it, attrSK) == metaSK:
			case ep == "" || ep == epoch:
				ours = append(ours, it)
			default:
				strays = append(strays, it)
			}
		}
		if len(strays) > 0 {
			held, err := s.metaHoldsEpoch(ctx, pk, epoch)
			if err != nil || !held {
				return false, err
			}
			// The meta item held epoch from the fence to now, so the
			// strays are of an earlier incarnation: delete each if it is
			// still the item read.
			err = s.deleteEach(ctx, strays, func(it item, e *expr) string {
				return e.n(mEpoch) + " = " + e.v(avS(getS(it, mEpoch)))
			})
			if err != nil {
				return false, err
			}
		}
		if err := s.deleteEach(ctx, ours, ofEpoch(epoch)); err != nil {
			return false, err
		}
		if out.LastEvaluatedKey == nil {
			return true, nil
		}
		if out, err = s.queryThread(ctx, pk, out.LastEvaluatedKey); err != nil {
			return false, err
		}
	}
}

// ofEpoch is the condition of deleting an item of the incarnation epoch:
// it is stamped epoch, or not stamped at all (written before the stamp).
// An item of any other incarnation, a later one's in particular, fails it.
func ofEpoch(epoch string) func(item, *expr) string {
	return func(_ item, e *expr) string {
		ep := e.n(mEpoch)
		return "attribute_not_exists(" + ep + ") OR " + ep + " = " + e.v(avS(epoch))
	}
}

// Attributes of message items.
const (
	mWriter     = "wid"     // id of the append that wrote the item
	mEpoch      = aMsgEpoch // epoch of the incarnation the append reserved in
	mID         = "id"
	mRole       = "role"
	mContent    = "content"
	mName       = "name"
	mToolCallID = "tool_call_id"
	mToolCalls  = "tool_calls" // JSON text
	mMetadata   = "metadata"   // JSON text
	mCreatedAt  = "created_at"
	mParts      = "parts" // number of part items of a large message
	mBody       = "body"  // binary chunk of a large message's JSON body
	// mContentZ is the content compressed (deflate.go), in place of
	// mContent.
	mContentZ = "content_z"
	// mBodyDeflate marks a large message whose JSON body is compressed
	// before it is cut into chunks.
	mBodyDeflate = "body_deflate"
)

// Size limits of message items (DynamoDB's item limit is 400 KB).
const (
	inlineLimit = 350 << 10
	partSize    = 300 << 10
)

// Polling of an append waiting for earlier ones to commit: pollStep per
// pending seq ahead of it, at most maxPoll.
const (
	pollStep = time.Millisecond
	maxPoll  = 50 * time.Millisecond
)

// putConcurrency bounds the PutItem requests an append has in flight (the
// SDK's transport keeps 10 idle connections per host).
const putConcurrency = 10

// maxAppendAttempts bounds the reservations of an append whose items meet
// items of other appends (step 5).
const maxAppendAttempts = 4

// abandonTimeout bounds the cleanup of a failed append.
const abandonTimeout = 5 * time.Second

// errAppendSkipped is returned by an append whose range was voided by a
// later append after the stall timeout.
var errAppendSkipped = errors.New("append was presumed dead and skipped by a later append; its messages are not stored")

// largeBody is the JSON body of a message stored in parts.
type largeBody struct {
	Content    string           `json:"content"`
	Name       string           `json:"name,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
	ToolCalls  []store.ToolCall `json:"tool_calls,omitempty"`
	Metadata   map[string]any   `json:"metadata,omitempty"`
}

// span is a reserved range of seqs: first..last, of which the messages
// take use..last; first..use-1 were reserved only to skip stray items and
// are voided by the commit.
type span struct {
	epoch            string
	first, use, last int64
}

// AppendMessages implements store.Messages with the protocol above: three
// sequential round trips (reserve, write, commit) when no other append of
// the session is pending.
func (s *Store) AppendMessages(ctx context.Context, k store.Key, msgs []store.Message) ([]store.Message, error) {
	if err := checkKey(k); err != nil {
		return nil, fmt.Errorf("append messages: %w", err)
	}
	out, err := prepareMessages(k, msgs)
	if err != nil {
		return nil, fmt.Errorf("append messages: %w", err)
	}
	if len(msgs) == 0 {
		if _, err := s.readMeta(ctx, k); err != nil {
			return nil, fmt.Errorf("append messages: %w", err)
		}
		return out, nil
	}

	if ls, ok := s.leaseSeqs.take(leaseSeqKey(k)); ok {
		out, err := s.appendAtLeaseSeq(ctx, k, ls, out)
		if err != nil {
			return nil, fmt.Errorf("append messages to %s: %w", k.ThreadID, err)
		}
		return out, nil
	}
	return s.appendPrepared(ctx, k, out)
}

// prepareMessages checks the roles of msgs and returns them with an id
// and a creation time (in UTC) each.
func prepareMessages(k store.Key, msgs []store.Message) ([]store.Message, error) {
	t := now()
	out := make([]store.Message, len(msgs))
	for i, m := range msgs {
		if !store.ValidRole(m.Role) {
			return nil, fmt.Errorf("session %s: message %d has invalid role %q", k.ThreadID, i, m.Role)
		}
		if m.ID == "" {
			m.ID = uuid.NewString()
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = t
		} else {
			m.CreatedAt = m.CreatedAt.UTC()
		}
		out[i] = m
	}
	return out, nil
}

// appendPrepared appends out (prepared, at least one) with the protocol
// above, setting their seqs.
func (s *Store) appendPrepared(ctx context.Context, k store.Key, out []store.Message) ([]store.Message, error) {
	n := int64(len(out))
	pk := sessionPK(k.ProjectID, k.ThreadID)
	var skip int64
	for attempt := 1; ; attempt++ {
		// 1. Reserve.
		sp, _, err := s.reserve(ctx, k, n, skip, false)
		if err != nil {
			return nil, fmt.Errorf("append messages: %w", err)
		}

		// 2. Write.
		conflict, err := s.writeSpan(ctx, k, sp, out)
		if err != nil {
			return nil, fmt.Errorf("append messages to %s: %w", k.ThreadID, err)
		}

		if !conflict {
			// 3. Commit (4. skipping dead ranges on the way).
			if err := s.settle(ctx, k, sp, false); err != nil {
				return nil, fmt.Errorf("append messages to %s: %w", k.ThreadID, err)
			}
			return out, nil
		}

		// 5. Void the range and reserve past the stray items.
		if err := s.settle(ctx, k, sp, true); err != nil {
			return nil, fmt.Errorf("append messages to %s: void a range holding items of another append: %w", k.ThreadID, err)
		}
		if attempt >= maxAppendAttempts {
			return nil, fmt.Errorf("append messages to %s: %d reservations met items of other appends (of a deleted session with the same id?)", k.ThreadID, attempt)
		}
		h, err := s.highestSeq(ctx, pk)
		if err != nil {
			return nil, fmt.Errorf("append messages to %s: %w", k.ThreadID, err)
		}
		skip = max(0, h-sp.last)
		s.log.WarnContext(ctx, "dynamo: message append met items of another append; retrying past them",
			"session", k.ThreadID, "first", sp.first, "last", sp.last, "highest", h, "attempt", attempt)
	}
}

// writeSpan sets the seqs of out from sp and puts their items (step 2 of
// the protocol). On an error it voids sp (abandon); a conflict it leaves
// to the caller.
func (s *Store) writeSpan(ctx context.Context, k store.Key, sp span, out []store.Message) (conflict bool, err error) {
	pk := sessionPK(k.ProjectID, k.ThreadID)
	wid := uuid.NewString()
	var items []item
	for i := range out {
		out[i].Seq = sp.use + int64(i)
		its, err := messageItems(&s.deflater, pk, sp.epoch, wid, out[i])
		if err != nil {
			s.abandon(ctx, k, sp)
			return false, fmt.Errorf("message %d: %w", i, err)
		}
		items = append(items, its...)
	}
	conflict, err = s.putMessageItems(ctx, items, wid)
	if err != nil {
		s.abandon(ctx, k, sp)
		return false, fmt.Errorf("write: %w", err)
	}
	return conflict, nil
}

// reserve hands out n seqs, after skip more that the append will not use
// (step 1 of the protocol), and returns them with the session's epoch,
// which it sets if the session has none yet. With whole it also returns
// the meta item as the reservation left it (else only what it changed).
func (s *Store) reserve(ctx context.Context, k store.Key, n, skip int64, whole bool) (span, item, error) {
	rv := types.ReturnValueUpdatedNew
	if whole {
		rv = types.ReturnValueAllNew
	}
	e := newExpr()
	e.add(aMsgReserved, avN(n+skip))
	ep := e.n(aMsgEpoch)
	e.setRaw(ep + " = if_not_exists(" + ep + ", " + e.v(avS(uuid.NewString())) + ")")
	res, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(sessionPK(k.ProjectID, k.ThreadID), metaSK),
		UpdateExpression:          aws.String(e.update()),
		ConditionExpression:       aws.String(e.n(aUser) + " = " + e.v(avS(k.UserID))),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
		ReturnValues:              rv,
	})
	if isConditionFailed(err) {
		return span{}, nil, fmt.Errorf("session %s: %w", k.ThreadID, store.ErrNotFound)
	}
	if err != nil {
		return span{}, nil, fmt.Errorf("append messages to %s: reserve: %w", k.ThreadID, err)
	}
	last, err := getN(res.Attributes, aMsgReserved)
	if err != nil {
		return span{}, nil, fmt.Errorf("append messages to %s: reserve: %w", k.ThreadID, err)
	}
	sp := span{epoch: getS(res.Attributes, aMsgEpoch), first: last - n - skip + 1, use: last - n + 1, last: last}
	if sp.epoch == "" {
		// Not returned (an unchanged attribute): read it.
		c, err := s.readCommit(ctx, k)
		if err != nil {
			return span{}, nil, fmt.Errorf("append messages to %s: reserve: %w", k.ThreadID, err)
		}
		if c.epoch == "" {
			return span{}, nil, fmt.Errorf("append messages to %s: reserve: session has no %s", k.ThreadID, aMsgEpoch)
		}
		sp.epoch = c.epoch
	}
	return sp, res.Attributes, nil
}

// putMessageItems puts the items, each only if its key holds no item, at most
// putConcurrency at once (step 2 of the protocol). It reports a conflict
// when a key holds an item of another append (wid); after a conflict or an
// error it starts no more puts.
func (s *Store) putMessageItems(ctx context.Context, items []item, wid string) (conflict bool, err error) {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failed   bool
		firstErr error
	)
	sem := make(chan struct{}, putConcurrency)
	for _, it := range items {
		sem <- struct{}{}
		mu.Lock()
		stop := failed
		mu.Unlock()
		if stop {
			<-sem
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			c, err := s.putMessageItem(ctx, it, wid)
			if !c && err == nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			failed = true
			conflict = conflict || c
			if err != nil && firstErr == nil {
				firstErr = err
			}
		})
	}
	wg.Wait()
	return conflict, firstErr
}

// putMessageItem puts it if its key holds no item; it reports a conflict when
// the key holds an item of another append than wid (one of wid's own is
// left by a put the SDK retried after its answer was lost).
func (s *Store) putMessageItem(ctx context.Context, it item, wid string) (conflict bool, err error) {
	_, err = s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                           aws.String(s.table),
		Item:                                it,
		ConditionExpression:                 aws.String("attribute_not_exists(#sk)"),
		ExpressionAttributeNames:            map[string]string{"#sk": attrSK},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		return false, nil
	}
	sk := getS(it, attrSK)
	var cf *types.ConditionalCheckFailedException
	if !errors.As(err, &cf) {
		return false, fmt.Errorf("put %s: %w", sk, err)
	}
	old := cf.Item
	if old == nil { // not returned (DynamoDB emulators): read it
		out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName:                aws.String(s.table),
			Key:                      keyOf(getS(it, attrPK), sk),
			ConsistentRead:           aws.Bool(true),
			ProjectionExpression:     aws.String("#w"),
			ExpressionAttributeNames: map[string]string{"#w": mWriter},
		})
		if err != nil {
			return false, fmt.Errorf("put %s: read the item in the way: %w", sk, err)
		}
		old = out.Item
	}
	return getS(old, mWriter) != wid, nil
}

// highestSeq returns the seq of the last message or part item of the
// partition pk (0 if none).
func (s *Store) highestSeq(ctx context.Context, pk string) (int64, error) {
	out, err := s.client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :msg)"),
		ProjectionExpression:      aws.String("#sk"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK},
		ExpressionAttributeValues: item{":pk": avS(pk), ":msg": avS(msgPrefix)},
		ScanIndexForward:          aws.Bool(false),
		ConsistentRead:            aws.Bool(true),
		Limit:                     aws.Int32(1),
	})
	if err != nil {
		return 0, fmt.Errorf("find the last message item: %w", err)
	}
	if len(out.Items) == 0 {
		return 0, nil
	}
	seq, _, ok := parseMsgSK(getS(out.Items[0], attrSK))
	if !ok {
		return 0, fmt.Errorf("find the last message item: bad key %q", getS(out.Items[0], attrSK))
	}
	return seq, nil
}

// settle advances msg_seq from sp.first-1 to sp.last, waiting for earlier
// appends and skipping a dead one after the stall timeout. It commits sp
// (voiding only its unused prefix, and counting its messages in
// msg_committed), or with void voids all of it.
func (s *Store) settle(ctx context.Context, k store.Key, sp span, void bool) error {
	gap := seqRange{sp.first, sp.use - 1}
	var cnt msgCount
	if void {
		gap.hi = sp.last
	} else {
		cnt = msgCount{add: sp.last - sp.use + 1, base: -1}
	}
	seen, progressAt := int64(-1), time.Now()
	for {
		err := s.commitAdvance(ctx, k, sp.epoch, sp.first-1, sp.last, gap, cnt)
		if err == nil {
			return nil
		}
		if !isConditionFailed(err) {
			if s.abandon(ctx, k, sp) && !void {
				return nil
			}
			return fmt.Errorf("commit: %w", err)
		}
		c, err := s.readCommit(ctx, k)
		if err == nil && c.epoch != sp.epoch {
			err = fmt.Errorf("session %s was deleted (and created again): %w", k.ThreadID, store.ErrNotFound)
		}
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) && s.abandon(ctx, k, sp) && !void {
				return nil
			}
			return fmt.Errorf("commit: %w", err)
		}
		switch {
		case c.seq >= sp.first:
			if void || (c.seq >= sp.last && !c.voided(sp.last)) {
				// Voided by a later append, or committed or voided by an
				// earlier attempt whose answer was lost.
				return nil
			}
			return errAppendSkipped
		case c.seq == sp.first-1:
			// The earlier append committed meanwhile (our turn), or the
			// session has no msg_committed yet: start it from the
			// visible messages (see "Counting").
			if cnt.add > 0 {
				cnt.base = -1
				if !c.counted {
					cnt.base = c.visibleCount()
				}
			}
			continue
		}
		if c.seq != seen {
			seen, progressAt = c.seq, time.Now()
		} else if time.Since(progressAt) >= s.stallTimeout {
			err := s.advance(ctx, k, sp.epoch, seen, sp.first-1, seqRange{seen + 1, sp.first - 1})
			switch {
			case err == nil:
				s.log.WarnContext(ctx, "dynamo: skipped a stalled message append",
					"session", k.ThreadID, "first", seen+1, "last", sp.first-1, "stalled", s.stallTimeout)
			case !isConditionFailed(err):
				if s.abandon(ctx, k, sp) && !void {
					return nil
				}
				return fmt.Errorf("commit: skip stalled append: %w", err)
			}
			continue
		}
		// Poll the faster the closer the append is to the head of the
		// queue: the next in line reacts quickly, the others load the
		// table little.
		wait := min(time.Duration(sp.first-1-seen)*pollStep, maxPoll)
		if err := sleep(ctx, wait/2+rand.N(wait/2+1)); err != nil {
			if s.abandon(ctx, k, sp) && !void {
				return nil
			}
			return fmt.Errorf("commit: wait for earlier appends: %w", err)
		}
	}
}

// seqRange is an inclusive range of seqs; empty when lo > hi.
type seqRange struct{ lo, hi int64 }

// advance sets msg_seq from `from` to `to` if it is still `from` and the
// session's epoch is still epoch; a non-empty gap is added to msg_gaps.
// It counts no message: it voids (and skips) ranges.
func (s *Store) advance(ctx context.Context, k store.Key, epoch string, from, to int64, gap seqRange) error {
	return s.commitAdvance(ctx, k, epoch, from, to, gap, msgCount{})
}

// msgCount is what a commit adds to msg_committed: add messages, onto the
// stored counter when base < 0, else onto base for a session without the
// counter (see "Counting").
type msgCount struct{ add, base int64 }

// commitAdvance is advance that also counts cnt.add committed messages in
// msg_committed, in the same conditional update.
func (s *Store) commitAdvance(ctx context.Context, k store.Key, epoch string, from, to int64, gap seqRange, cnt msgCount) error {
	e := newExpr()
	e.set(aMsgSeq, avN(to))
	if gap.lo <= gap.hi {
		gaps := e.n(aMsgGaps)
		empty := e.v(&types.AttributeValueMemberL{Value: []types.AttributeValue{}})
		g := e.v(&types.AttributeValueMemberL{Value: []types.AttributeValue{avS(formatSeqRange(gap.lo, gap.hi))}})
		e.setRaw(gaps + " = list_append(if_not_exists(" + gaps + ", " + empty + "), " + g + ")")
	}
	cond := e.n(aUser) + " = " + e.v(avS(k.UserID)) +
		" AND " + e.n(aMsgEpoch) + " = " + e.v(avS(epoch)) +
		" AND " + e.n(aMsgSeq) + " = " + e.v(avN(from))
	if cnt.add > 0 {
		mc := e.n(aMsgCommitted)
		if cnt.base < 0 {
			e.add(aMsgCommitted, avN(cnt.add))
			cond += " AND attribute_exists(" + mc + ")"
		} else {
			e.set(aMsgCommitted, avN(cnt.base+cnt.add))
			cond += " AND attribute_not_exists(" + mc + ")"
		}
	}
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(sessionPK(k.ProjectID, k.ThreadID), metaSK),
		UpdateExpression:          aws.String(e.update()),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	})
	return err
}

// abandon voids the reserved range of a failed append when it is the next
// to commit (otherwise a later append skips it after the stall timeout). It
// reports whether the range turned out to be committed, by a commit request
// that was in flight when the failure was seen.
func (s *Store) abandon(ctx context.Context, k store.Key, sp span) (committed bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonTimeout)
	defer cancel()
	err := s.advance(ctx, k, sp.epoch, sp.first-1, sp.last, seqRange{sp.first, sp.last})
	if err == nil {
		return false
	}
	if !isConditionFailed(err) {
		s.log.WarnContext(ctx, "dynamo: could not void a failed message append",
			"session", k.ThreadID, "first", sp.first, "last", sp.last, "error", err)
		return false
	}
	c, err := s.readCommit(ctx, k)
	// A commit records at most an unused prefix of the range as a gap; a
	// void (ours or a later append's) covers sp.last.
	return err == nil && c.epoch == sp.epoch && c.seq >= sp.last && !c.voided(sp.last)
}

// formatSeqRange encodes a voided seq range as "first-last".
func formatSeqRange(first, last int64) string {
	return strconv.FormatInt(first, 10) + "-" + strconv.FormatInt(last, 10)
}

// commitState is the commit marker, the voided ranges and the epoch of a
// session, and whether it has the msg_committed counter.
type commitState struct {
	seq     int64
	gaps    [][2]int64
	epoch   string
	counted bool
}

// readCommit reads the commit state (strongly consistent).
func (s *Store) readCommit(ctx context.Context, k store.Key) (commitState, error) {
	it, err := s.readMeta(ctx, k, aMsgSeq, aMsgGaps, aMsgEpoch, aMsgCommitted)
	if err != nil {
		return commitState{}, err
	}
	return commitFromItem(it)
}

func commitFromItem(it item) (commitState, error) {
	_, counted := it[aMsgCommitted]
	c := commitState{epoch: getS(it, aMsgEpoch), counted: counted}
	var err error
	if c.seq, err = getN(it, aMsgSeq); err != nil {
		return c, err
	}
	l, _ := it[aMsgGaps].(*types.AttributeValueMemberL)
	if l == nil {
		return c, nil
	}
	for _, v := range l.Value {
		sv, ok := v.(*types.AttributeValueMemberS)
		if !ok {
			return c, fmt.Errorf("attribute %s holds a %T", aMsgGaps, v)
		}
		a, b, ok := strings.Cut(sv.Value, "-")
		lo, err1 := strconv.ParseInt(a, 10, 64)
		hi, err2 := strconv.ParseInt(b, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return c, fmt.Errorf("attribute %s: bad range %q", aMsgGaps, sv.Value)
		}
		c.gaps = append(c.gaps, [2]int64{lo, hi})
	}
	return c, nil
}

// gapOf returns the voided range holding seq, if any.
func (c commitState) gapOf(seq int64) ([2]int64, bool) {
	for _, g := range c.gaps {
		if seq >= g[0] && seq <= g[1] {
			return g, true
		}
	}
	return [2]int64{}, false
}

func (c commitState) voided(seq int64) bool {
	_, ok := c.gapOf(seq)
	return ok
}

// visibleCount is the number of visible seqs: 1..seq less the voided ones
// (gaps are disjoint: each was voided by the advance of msg_seq over it).
func (c commitState) visibleCount() int64 {
	n := c.seq
	for _, g := range c.gaps {
		if lo, hi := max(g[0], 1), min(g[1], c.seq); lo <= hi {
			n -= hi - lo + 1
		}
	}
	return max(n, 0)
}

func (c commitState) visible(seq int64) bool {
	return seq >= 1 && seq <= c.seq && !c.voided(seq)
}

// below returns the largest visible seq below x, or 0.
func (c commitState) below(x int64) int64 {
	y := min(x-1, c.seq)
	for y >= 1 {
		g, ok := c.gapOf(y)
		if !ok {
			return y
		}
		y = g[0] - 1
	}
	return 0
}

// messageItems encodes m (with its Seq set) as its item and, when large,
// its part items, each stamped with the append's wid and epoch (none when
// empty, as items written before the stamp). Its text, or a large
// message's body, is compressed with z when that makes it smaller (see
// deflate.go).
func messageItems(z *store.Deflater, pk, epoch, wid string, m store.Message) ([]item, error) {
	it := keyOf(pk, msgSK(m.Seq))
	it[mWriter] = avS(wid)
	if epoch != "" {
		it[mEpoch] = avS(epoch)
	}
	it[mID] = avS(m.ID)
	it[mRole] = avS(m.Role)
	it[mCreatedAt] = avS(fmtTime(m.CreatedAt))
	var toolCalls, metadata []byte
	var err error
	if len(m.ToolCalls) > 0 {
		if toolCalls, err = json.Marshal(m.ToolCalls); err != nil {
			return nil, fmt.Errorf("encode tool calls: %w", err)
		}
	}
	if len(m.Metadata) > 0 {
		if metadata, err = json.Marshal(m.Metadata); err != nil {
			return nil, fmt.Errorf("encode metadata: %w", err)
		}
	}
	fixed := len(m.ID) + len(m.Name) + len(m.ToolCallID) + len(toolCalls) + len(metadata) + 512
	if fixed+len(m.Content) <= inlineLimit*8 { // else a large message: the body is compressed whole
		content := m.Content
		var zc []byte
		if len(content) >= compressFrom {
			zc = compressMessage(z, []byte(content))
		}
		size := fixed + len(content)
		if zc != nil {
			size = fixed + len(zc)
		}
		if size <= inlineLimit {
			if zc != nil {
				it[mContentZ] = &types.AttributeValueMemberB{Value: zc}
				content = ""
			}
			for _, a := range []struct{ name, v string }{
				{mContent, content}, {mName, m.Name}, {mToolCallID, m.ToolCallID},
				{mToolCalls, string(toolCalls)}, {mMetadata, string(metadata)},
			} {
				if a.v != "" {
					it[a.name] = avS(a.v)
				}
			}
			return []item{it}, nil
		}
	}
	body, err := json.Marshal(largeBody{
		Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID,
		ToolCalls: m.ToolCalls, Metadata: m.Metadata,
	})
	if err != nil {
		return nil, fmt.Errorf("encode large message: %w", err)
	}
	if zb := compressMessage(z, body); zb != nil {
		body = zb
		it[mBodyDeflate] = avBool(true)
	}
	var chunks [][]byte
	for len(body) > partSize {
		chunks = append(chunks, body[:partSize])
		body = body[partSize:]
	}
	chunks = append(chunks, body)
	it[mBody] = &types.AttributeValueMemberB{Value: chunks[0]}
	it[mParts] = avN(int64(len(chunks) - 1))
	items := []item{it}
	for i := 1; i < len(chunks); i++ {
		p := keyOf(pk, partSK(m.Seq, i))
		p[mWriter] = avS(wid)
		if epoch != "" {
			p[mEpoch] = avS(epoch)
		}
		p[mBody] = &types.AttributeValueMemberB{Value: chunks[i]}
		items = append(items, p)
	}
	return items, nil
}

// parseMsgSK parses MSG#{seq:010d} and MSG#{seq:010d}#P{part:04d}.
func parseMsgSK(sk string) (seq int64, part int, ok bool) {
	rest, found := strings.CutPrefix(sk, msgPrefix)
	if !found || len(rest) < 10 {
		return 0, 0, false
	}
	seq, err := strconv.ParseInt(rest[:10], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if len(rest) == 10 {
		return seq, 0, true
	}
	p, found := strings.CutPrefix(rest[10:], "#P")
	if !found {
		return 0, 0, false
	}
	part, err = strconv.Atoi(p)
	if err != nil || part < 1 {
		return 0, 0, false
	}
	return seq, part, true
}

// decodeMessage decodes a message item; parts are the chunks of its part
// items by number (only for large messages).
func decodeMessage(z *store.Deflater, seq int64, it item, parts map[int][]byte) (store.Message, error) {
	m := store.Message{
		Seq:  seq,
		ID:   getS(it, mID),
		Role: getS(it, mRole),
	}
	var err error
	if m.CreatedAt, err = getTime(it, mCreatedAt); err != nil {
		return m, err
	}
	n, err := getN(it, mParts)
	if err != nil {
		return m, err
	}
	if body := getB(it, mBody); body != nil {
		buf := slices.Clone(body)
		for i := 1; i <= int(n); i++ {
			p, ok := parts[i]
			if !ok {
				return m, fmt.Errorf("part %d of %d missing", i, n)
			}
			buf = append(buf, p...)
		}
		if getBool(it, mBodyDeflate) {
			if buf, err = inflateMessage(z, buf); err != nil {
				return m, fmt.Errorf("decode large message: %w", err)
			}
		}
		var lb largeBody
		if err := json.Unmarshal(buf, &lb); err != nil {
			return m, fmt.Errorf("decode large message: %w", err)
		}
		m.Content, m.Name, m.ToolCallID = lb.Content, lb.Name, lb.ToolCallID
		m.ToolCalls, m.Metadata = lb.ToolCalls, lb.Metadata
		return m, nil
	}
	m.Content = getS(it, mContent)
	if zc := getB(it, mContentZ); zc != nil {
		text, err := inflateMessage(z, zc)
		if err != nil {
			return m, fmt.Errorf("decode content: %w", err)
		}
		m.Content = string(text)
	}
	m.Name = getS(it, mName)
	m.ToolCallID = getS(it, mToolCallID)
	if tc := getS(it, mToolCalls); tc != "" {
		if err := json.Unmarshal([]byte(tc), &m.ToolCalls); err != nil {
			return m, fmt.Errorf("decode tool calls: %w", err)
		}
	}
	if md := getS(it, mMetadata); md != "" {
		if err := json.Unmarshal([]byte(md), &m.Metadata); err != nil {
			return m, fmt.Errorf("decode metadata: %w", err)
		}
	}
	return m, nil
}

// collector gathers the visible messages of a descending message query.
type collector struct {
	z      *store.Deflater // decompresses the items' text
	c      commitState
	limit  int
	next   int64 // the next visible seq expected; 0 when all are gathered
	parts  map[int][]byte
	wids   map[int]string
	out    []store.Message // descending
	broken error           // a committed item was missing or incomplete
	// page, when not nil, bounds the messages gathered (HistoryPage:
	// Limit and MaxBytes; limit is then unused); full is set once the
	// next message does not fit, bytes is the MessageSize total.
	page  *store.HistoryPage
	full  bool
	bytes int
}

func newCollector(z *store.Deflater, c commitState, limit int) *collector {
	return &collector{z: z, c: c, limit: limit, next: c.below(c.seq + 1), parts: map[int][]byte{}, wids: map[int]string{}}
}

// done reports whether the collector needs no more items.
func (col *collector) done() bool {
	return col.broken != nil || col.next == 0 || col.full || (col.limit > 0 && len(col.out) >= col.limit)
}

// add takes the next item of the descending query.
func (col *collector) add(it item) {
	if col.done() {
		return
	}
	sk := getS(it, attrSK)
	seq, part, ok := parseMsgSK(sk)
	if !ok || !col.c.visible(seq) || seq > col.next {
		return // not a message item, uncommitted, voided, or already passed
	}
	if ep := getS(it, mEpoch); ep != "" && ep != col.c.epoch {
		return // a stray of another incarnation of the thread id
	}
	if seq < col.next {
		col.broken = fmt.Errorf("message %d missing", col.next)
		return
	}
	if part > 0 {
		col.parts[part] = getB(it, mBody)
		col.wids[part] = getS(it, mWriter)
		return
	}
	wid := getS(it, mWriter)
	for p, w := range col.wids {
		if w != wid {
			delete(col.parts, p) // left over from a deleted session
		}
	}
	m, err := decodeMessage(col.z, seq, it, col.parts)
	if err != nil {
		col.broken = fmt.Errorf("message %d: %w", seq, err)
		return
	}
	if col.page != nil {
		size := store.MessageSize(&m)
		if !col.page.Fits(len(col.out), col.bytes, size) {
			col.full = true // next stays at m: older messages remain
			return
		}
		col.bytes += size
	}
	col.out = append(col.out, m)
	clear(col.parts)
	clear(col.wids)
	col.next = col.c.below(seq)
}

// result returns the gathered messages in ascending order.
func (col *collector) result() []store.Message {
	out := slices.Clone(col.out)
	slices.Reverse(out)
	if out == nil {
		out = []store.Message{}
	}
	return out
}

// ListMessages implements store.Messages; see the protocol comment above.
func (s *Store) ListMessages(ctx context.Context, k store.Key, limit int) ([]store.Message, error) {
	if err := checkKey(k); err != nil {
		return nil, fmt.Errorf("list messages: %w", err)
	}
	pk := sessionPK(k.ProjectID, k.ThreadID)
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type metaResult struct {
		c   commitState
		err error
	}
	metaCh := make(chan metaResult, 1)
	go func() {
		c, err := s.readCommit(qctx, k)
		metaCh <- metaResult{c, err}
	}()
	page, qerr := s.historyPage(qctx, pk, limit, nil)
	mr := <-metaCh
	if mr.err != nil {
		return nil, fmt.Errorf("list messages: %w", mr.err)
	}
	return s.historyOf(ctx, k, limit, mr.c, page, qerr)
}

// historyPage reads one page of the session's messages, newest first from
// start (nil: the newest), eventually consistent: for a history of limit
// messages, limit items and room for a few uncommitted ones (0: as many
// as a page holds).
func (s *Store) historyPage(ctx context.Context, pk string, limit int, start item) (*dynamodb.QueryOutput, error) {
	pageLimit := 0
	if limit > 0 {
		pageLimit = limit + 2
	}
	return s.queryMessages(ctx, pk, msgPrefix, msgPrefix+"~", pageLimit, start, false)
}

// historyOf returns the last limit committed messages of the session of
// commit state c, from page (the first page of an eventually consistent
// query of its messages, newest first, or the query's error qerr) and
// the next pages, read again strongly consistent when the query missed
// a committed message (see the protocol comment above).
func (s *Store) historyOf(ctx context.Context, k store.Key, limit int, c commitState, page *dynamodb.QueryOutput, qerr error) ([]store.Message, error) {
	if qerr != nil {
		return nil, fmt.Errorf("list messages of %s: %w", k.ThreadID, qerr)
	}
	pk := sessionPK(k.ProjectID, k.ThreadID)
	col := newCollector(&s.deflater, c, limit)
	for {
		for _, it := range page.Items {
			col.add(it)
		}
		if col.done() || page.LastEvaluatedKey == nil {
			break
		}
		if page, qerr = s.historyPage(ctx, pk, limit, page.LastEvaluatedKey); qerr != nil {
			return nil, fmt.Errorf("list messages of %s: %w", k.ThreadID, qerr)
		}
	}
	if col.done() && col.broken == nil {
		return col.result(), nil
	}

	// The query ran before the latest commit, or on a replica behind:
	// read the committed range again, strongly consistent, now that every
	// item of it is known to be written.
	col = newCollector(&s.deflater, c, limit)
	lo := int64(1)
	if limit > 0 {
		lo = col.next
		for i := 1; i < limit; i++ {
			b := c.below(lo)
			if b == 0 {
				break
			}
			lo = b
		}
	}
	if err := s.collectRange(ctx, col, pk, msgSK(lo), msgSK(c.seq)+"#~", 0, true); err != nil {
		return nil, fmt.Errorf("list messages of %s: %w", k.ThreadID, err)
	}
	return col.result(), nil
}

// collectCommitted is collectRange on a collector that newCol makes, read
// eventually consistent and, when that read lacks an item (a replica
// behind), again strongly consistent; it returns the collector that read
// the range whole.
func (s *Store) collectCommitted(ctx context.Context, newCol func() *collector, pk, lo, hi string, pageLimit int) (*collector, error) {
	col := newCol()
	if s.collectRange(ctx, col, pk, lo, hi, pageLimit, false) == nil {
		return col, nil
	}
	col = newCol()
	return col, s.collectRange(ctx, col, pk, lo, hi, pageLimit, true)
}

// collectRange feeds col the session's message items with a sort key
// between lo and hi, newest first, in queries of pageLimit items (0: as
// many as a page holds), until col is done or the range ends. Every item
// of a committed range is written, so one missing is an error.
func (s *Store) collectRange(ctx context.Context, col *collector, pk, lo, hi string, pageLimit int, consistent bool) error {
	var start item
	for {
		page, err := s.queryMessages(ctx, pk, lo, hi, pageLimit, start, consistent)
		if err != nil {
			return err
		}
		for _, it := range page.Items {
			col.add(it)
		}
		start = page.LastEvaluatedKey
		if col.done() || start == nil {
			break
		}
	}
	if col.broken == nil && !col.done() {
		col.broken = fmt.Errorf("message %d missing", col.next)
	}
	return col.broken
}

// queryMessages reads one page of the session's message items with a sort
// key in [lo, hi], newest first, strongly consistent or, at half the read
// units, eventually consistent: message items are written once (a seq is
// never handed out twice in an incarnation, and items of another are told
// by their epoch), so a replica behind can only lack an item, never hold
// another version of it, and readers that find a committed item missing
// read again strongly consistent.
func (s *Store) queryMessages(ctx context.Context, pk, lo, hi string, limit int, start item, consistent bool) (*dynamodb.QueryOutput, error) {
	e := newExpr()
	cond := e.n(attrPK) + " = " + e.v(avS(pk)) + " AND " + e.n(attrSK) + " BETWEEN " + e.v(avS(lo)) + " AND " + e.v(avS(hi))
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
		ScanIndexForward:          aws.Bool(false),
		ConsistentRead:            aws.Bool(consistent),
		ExclusiveStartKey:         start,
	}
	if limit > 0 {
		in.Limit = aws.Int32(int32(limit))
	}
	return s.client.Query(ctx, in)
}

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
// sequence numbers that were voided (see step 4); they stay invisible.
//
//  1. Reserve: UpdateItem ADD msg_reserved :n (conditioned on the session
//     and its owner) returns the new value last; the append owns the seqs
//     first = last-n+1 .. last. ADD is atomic, so concurrent appends get
//     disjoint ranges and never race for an item.
//  2. Write: the message items (and the parts of large messages) are put
//     with BatchWriteItem, unprocessed items retried with backoff. Nobody
//     else writes these keys, so the puts need no condition; they are
//     invisible until committed.
//  3. Commit: UpdateItem SET msg_seq = :last IF msg_seq = :first-1. Ranges
//     commit in reservation order; while an earlier range is uncommitted
//     the condition fails and the append polls (the faster the closer it is to the head) until the
//     marker reaches first-1. All of a range becomes visible at once.
//  4. Skip a dead range: when msg_seq has not moved for the stall timeout,
//     the earlier append is presumed dead (a crashed process). The waiter
//     then sets msg_seq from the value it saw to first-1 and, in the same
//     conditional update, appends that range to msg_gaps, so that items the
//     dead (or merely very slow) append may still write stay invisible.
//     Such an append finds msg_seq at or past its range and reports an
//     error; the caller never sees a half-written append.
//
// An append that fails after step 1 (write error, cancelled context) voids
// its own range at once when it is the next to commit, so later appends do
// not wait for the stall timeout; a commit that was in flight when the
// context ended may have won, in which case the append reports success.
//
// Readers (ListMessages) read msg_seq and msg_gaps with a strongly
// consistent GetItem and, in parallel, query the newest message items;
// items above msg_seq or in a gap are ignored. If the query ran before the
// latest commit and so lacks a committed item, the range is read again
// (once), now that the marker is known. A session thus costs one sequential
// round trip to read in the common case.
//
// A message larger than the item limit allows (about 350 KB) is stored as
// its JSON body cut into 300 KB binary chunks: the first on the message
// item (with the number of parts), the others on part items MSG#{seq}#P{n},
// all written in step 2 and tagged with the id of the append (wid), so that
// parts left over from a deleted session of the same id are never mixed in.

// Attributes of message items.
const (
	mWriter     = "wid" // id of the append that wrote the item
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

// AppendMessages implements store.Messages with the protocol above: three
// sequential round trips (reserve, write, commit) when no other append of
// the session is pending.
func (s *Store) AppendMessages(ctx context.Context, k store.Key, msgs []store.Message) ([]store.Message, error) {
	if err := checkKey(k); err != nil {
		return nil, fmt.Errorf("append messages: %w", err)
	}
	t := now()
	out := make([]store.Message, len(msgs))
	for i, m := range msgs {
		if !store.ValidRole(m.Role) {
			return nil, fmt.Errorf("append messages to %s: message %d has invalid role %q", k.ThreadID, i, m.Role)
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
	if len(msgs) == 0 {
		if _, err := s.readMeta(ctx, k); err != nil {
			return nil, fmt.Errorf("append messages: %w", err)
		}
		return out, nil
	}

	// 1. Reserve.
	n := int64(len(msgs))
	e := newExpr()
	e.add(aMsgReserved, avN(n))
	res, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(sessionPK(k.ProjectID, k.ThreadID), metaSK),
		UpdateExpression:          aws.String(e.update()),
		ConditionExpression:       aws.String(e.n(aUser) + " = " + e.v(avS(k.UserID))),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if isConditionFailed(err) {
		return nil, fmt.Errorf("append messages: session %s: %w", k.ThreadID, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("append messages to %s: reserve: %w", k.ThreadID, err)
	}
	last, err := getN(res.Attributes, aMsgReserved)
	if err != nil {
		return nil, fmt.Errorf("append messages to %s: reserve: %w", k.ThreadID, err)
	}
	first := last - n + 1

	// 2. Write.
	pk := sessionPK(k.ProjectID, k.ThreadID)
	wid := uuid.NewString()
	var reqs []types.WriteRequest
	for i := range out {
		out[i].Seq = first + int64(i)
		items, err := messageItems(pk, wid, out[i])
		if err != nil {
			s.abandon(ctx, k, first, last)
			return nil, fmt.Errorf("append messages to %s: message %d: %w", k.ThreadID, i, err)
		}
		for _, it := range items {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		}
	}
	if err := s.batchWrite(ctx, reqs); err != nil {
		if s.abandon(ctx, k, first, last) {
			return out, nil
		}
		return nil, fmt.Errorf("append messages to %s: write: %w", k.ThreadID, err)
	}

	// 3. Commit (4. skipping dead ranges on the way).
	if err := s.commit(ctx, k, first, last); err != nil {
		return nil, fmt.Errorf("append messages to %s: %w", k.ThreadID, err)
	}
	return out, nil
}

// commit advances msg_seq from first-1 to last, waiting for earlier
// appends and skipping a dead one after the stall timeout.
func (s *Store) commit(ctx context.Context, k store.Key, first, last int64) error {
	seen, progressAt := int64(-1), time.Now()
	for {
		err := s.advance(ctx, k, first-1, last, false)
		if err == nil {
			return nil
		}
		if !isConditionFailed(err) {
			if s.abandon(ctx, k, first, last) {
				return nil
			}
			return fmt.Errorf("commit: %w", err)
		}
		c, err := s.readCommit(ctx, k)
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) && s.abandon(ctx, k, first, last) {
				return nil
			}
			return fmt.Errorf("commit: %w", err)
		}
		switch {
		case c.seq >= first:
			if c.seq >= last && !c.voided(first) {
				return nil // committed by an earlier attempt whose answer was lost
			}
			return errAppendSkipped
		case c.seq == first-1:
			continue // the earlier append committed meanwhile: our turn
		}
		if c.seq != seen {
			seen, progressAt = c.seq, time.Now()
		} else if time.Since(progressAt) >= s.stallTimeout {
			err := s.advance(ctx, k, seen, first-1, true)
			switch {
			case err == nil:
				s.log.WarnContext(ctx, "dynamo: skipped a stalled message append",
					"session", k.ThreadID, "first", seen+1, "last", first-1, "stalled", s.stallTimeout)
			case !isConditionFailed(err):
				if s.abandon(ctx, k, first, last) {
					return nil
				}
				return fmt.Errorf("commit: skip stalled append: %w", err)
			}
			continue
		}
		// Poll the faster the closer the append is to the head of the
		// queue: the next in line reacts quickly, the others load the
		// table little.
		wait := min(time.Duration(first-1-seen)*pollStep, maxPoll)
		if err := sleep(ctx, wait/2+rand.N(wait/2+1)); err != nil {
			if s.abandon(ctx, k, first, last) {
				return nil
			}
			return fmt.Errorf("commit: wait for earlier appends: %w", err)
		}
	}
}

// advance sets msg_seq from `from` to `to` if it is still `from`; with void
// it also records from+1..to as a gap.
func (s *Store) advance(ctx context.Context, k store.Key, from, to int64, void bool) error {
	e := newExpr()
	e.set(aMsgSeq, avN(to))
	if void {
		gaps := e.n(aMsgGaps)
		empty := e.v(&types.AttributeValueMemberL{Value: []types.AttributeValue{}})
		gap := e.v(&types.AttributeValueMemberL{Value: []types.AttributeValue{avS(formatSeqRange(from+1, to))}})
		e.setRaw(gaps + " = list_append(if_not_exists(" + gaps + ", " + empty + "), " + gap + ")")
	}
	cond := e.n(aUser) + " = " + e.v(avS(k.UserID)) + " AND " + e.n(aMsgSeq) + " = " + e.v(avN(from))
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

// abandon voids the reserved range first..last of a failed append when it
// is the next to commit (otherwise a later append skips it after the stall
// timeout). It reports whether the range turned out to be committed, by a
// commit request that was in flight when the failure was seen.
func (s *Store) abandon(ctx context.Context, k store.Key, first, last int64) (committed bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonTimeout)
	defer cancel()
	err := s.advance(ctx, k, first-1, last, true)
	if err == nil {
		return false
	}
	if !isConditionFailed(err) {
		s.log.WarnContext(ctx, "dynamo: could not void a failed message append",
			"session", k.ThreadID, "first", first, "last", last, "error", err)
		return false
	}
	c, err := s.readCommit(ctx, k)
	return err == nil && c.seq >= last && !c.voided(first)
}

// formatSeqRange encodes a voided seq range as "first-last".
func formatSeqRange(first, last int64) string {
	return strconv.FormatInt(first, 10) + "-" + strconv.FormatInt(last, 10)
}

// commitState is the commit marker and the voided ranges of a session.
type commitState struct {
	seq  int64
	gaps [][2]int64
}

// readCommit reads the commit state (strongly consistent).
func (s *Store) readCommit(ctx context.Context, k store.Key) (commitState, error) {
	it, err := s.readMeta(ctx, k, aMsgSeq, aMsgGaps)
	if err != nil {
		return commitState{}, err
	}
	return commitFromItem(it)
}

func commitFromItem(it item) (commitState, error) {
	var c commitState
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
// its part items.
func messageItems(pk, wid string, m store.Message) ([]item, error) {
	it := keyOf(pk, msgSK(m.Seq))
	it[mWriter] = avS(wid)
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
	size := len(m.ID) + len(m.Content) + len(m.Name) + len(m.ToolCallID) + len(toolCalls) + len(metadata) + 512
	if size <= inlineLimit {
		for _, a := range []struct{ name, v string }{
			{mContent, m.Content}, {mName, m.Name}, {mToolCallID, m.ToolCallID},
			{mToolCalls, string(toolCalls)}, {mMetadata, string(metadata)},
		} {
			if a.v != "" {
				it[a.name] = avS(a.v)
			}
		}
		return []item{it}, nil
	}
	body, err := json.Marshal(largeBody{
		Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID,
		ToolCalls: m.ToolCalls, Metadata: m.Metadata,
	})
	if err != nil {
		return nil, fmt.Errorf("encode large message: %w", err)
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
func decodeMessage(seq int64, it item, parts map[int][]byte) (store.Message, error) {
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
		var lb largeBody
		if err := json.Unmarshal(buf, &lb); err != nil {
			return m, fmt.Errorf("decode large message: %w", err)
		}
		m.Content, m.Name, m.ToolCallID = lb.Content, lb.Name, lb.ToolCallID
		m.ToolCalls, m.Metadata = lb.ToolCalls, lb.Metadata
		return m, nil
	}
	m.Content = getS(it, mContent)
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
	c      commitState
	limit  int
	next   int64 // the next visible seq expected; 0 when all are gathered
	parts  map[int][]byte
	wids   map[int]string
	out    []store.Message // descending
	broken error           // a committed item was missing or incomplete
}

func newCollector(c commitState, limit int) *collector {
	return &collector{c: c, limit: limit, next: c.below(c.seq + 1), parts: map[int][]byte{}, wids: map[int]string{}}
}

// done reports whether the collector needs no more items.
func (col *collector) done() bool {
	return col.broken != nil || col.next == 0 || (col.limit > 0 && len(col.out) >= col.limit)
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
	m, err := decodeMessage(seq, it, col.parts)
	if err != nil {
		col.broken = fmt.Errorf("message %d: %w", seq, err)
		return
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
	pageLimit := 0
	if limit > 0 {
		pageLimit = limit + 2 // room for a few uncommitted items
	}
	page, qerr := s.queryMessages(qctx, pk, msgPrefix, msgPrefix+"~", pageLimit, nil)
	mr := <-metaCh
	if mr.err != nil {
		return nil, fmt.Errorf("list messages: %w", mr.err)
	}
	if qerr != nil {
		return nil, fmt.Errorf("list messages of %s: %w", k.ThreadID, qerr)
	}
	col := newCollector(mr.c, limit)
	for {
		for _, it := range page.Items {
			col.add(it)
		}
		if col.done() || page.LastEvaluatedKey == nil {
			break
		}
		if page, qerr = s.queryMessages(ctx, pk, msgPrefix, msgPrefix+"~", pageLimit, page.LastEvaluatedKey); qerr != nil {
			return nil, fmt.Errorf("list messages of %s: %w", k.ThreadID, qerr)
		}
	}
	if col.done() && col.broken == nil {
		return col.result(), nil
	}

	// The query ran before the latest commit: read the committed range
	// again, now that every item of it is known to be written.
	col = newCollector(mr.c, limit)
	lo := int64(1)
	if limit > 0 {
		lo = col.next
		for i := 1; i < limit; i++ {
			b := mr.c.below(lo)
			if b == 0 {
				break
			}
			lo = b
		}
	}
	var start item
	for {
		page, err := s.queryMessages(ctx, pk, msgSK(lo), msgSK(mr.c.seq)+"#~", 0, start)
		if err != nil {
			return nil, fmt.Errorf("list messages of %s: %w", k.ThreadID, err)
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
	if col.broken != nil {
		return nil, fmt.Errorf("list messages of %s: %w", k.ThreadID, col.broken)
	}
	return col.result(), nil
}

// queryMessages reads one page of the session's message items with a sort
// key in [lo, hi], newest first (strongly consistent).
func (s *Store) queryMessages(ctx context.Context, pk, lo, hi string, limit int, start item) (*dynamodb.QueryOutput, error) {
	e := newExpr()
	cond := e.n(attrPK) + " = " + e.v(avS(pk)) + " AND " + e.n(attrSK) + " BETWEEN " + e.v(avS(lo)) + " AND " + e.v(avS(hi))
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
		ScanIndexForward:          aws.Bool(false),
		ConsistentRead:            aws.Bool(true),
		ExclusiveStartKey:         start,
	}
	if limit > 0 {
		in.Limit = aws.Int32(int32(limit))
	}
	return s.client.Query(ctx, in)
}

package dynamo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/google/uuid"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"agentchat/internal/store"
)

// Attributes of the session meta item.
const (
	aThread      = "thread_id"
	aUser        = "user_id"
	aProject     = "project_id"
	aTitle       = "title"
	aTitleByUser = "title_by_user"
	aMsgCount    = "message_count"
	aLLMCalls    = "llm_calls"
	aInTokens    = "input_tokens"
	aOutTokens   = "output_tokens"
	aTotTokens   = "total_tokens"
	aLastMsgAt   = "last_message_at"
	aCreatedAt   = "created_at"
	aUpdatedAt   = "updated_at"
	aMetadata    = "metadata" // JSON text
	// aCopilotMode is store.Session.CopilotMode, copied out of the
	// metadata blob when the session is created (absent when empty), so
	// that the listing can filter on it.
	aCopilotMode = "copilot_mode"
	aErrors      = "errors"
	aAborted     = "aborted_turns"
	aTurns       = "turns"
	aToolCalls   = "tool_calls" // map of tool name to count
	aCostNanos   = "cost_nanos"
	aUnpriced    = "unpriced_calls"
	aPinned      = "pinned"
	aMsgSeq      = "msg_seq"      // commit marker: last visible message seq
	aMsgReserved = "msg_reserved" // last reserved message seq
	aMsgGaps     = "msg_gaps"     // list of "first-last" voided seq ranges
	aMsgEpoch    = "msg_epoch"    // id of this incarnation of the thread id, set by the first append
	aLeaseOwner  = "lease_owner"
	aLeaseUntil  = "lease_until" // unix nanoseconds
	aAbort       = "abort"
	aAbortAt     = "abort_at" // unix nanoseconds of the first pending abort request
)

// aMsgCommitted is the meta attribute holding the number of committed
// (visible) messages, kept by the commits of appends (see "Counting" in
// messages.go).
const aMsgCommitted = "msg_committed"

// maxUpdateAttempts bounds the optimistic retries of a meta update that
// races with a concurrent pin or touch.
const maxUpdateAttempts = 50

// CreateSession implements store.Sessions.
func (s *Store) CreateSession(ctx context.Context, sess *store.Session) error {
	return s.createSession(ctx, sess, nil)
}

// CreateLeasedSession implements store.Sessions with one conditional
// PutItem whose meta item already carries the lease attributes.
func (s *Store) CreateLeasedSession(ctx context.Context, sess *store.Session, owner string, ttl time.Duration) error {
	if err := checkLeaseArgs(owner, ttl); err != nil {
		return fmt.Errorf("create leased session: %w", err)
	}
	until := s.clock().Add(ttl).UnixNano()
	// The incarnation's epoch, given now rather than by the first append,
	// is known to the turn's log without a read (turnEpochs).
	epoch := uuid.NewString()
	// Seq 1 is the turn's (leaseseq.go).
	err := s.createSession(ctx, sess, func(it item) {
		it[aLeaseOwner] = avS(owner)
		it[aLeaseUntil] = avN(until)
		it[aMsgEpoch] = avS(epoch)
		it[aMsgReserved] = avN(1)
	})
	if err == nil {
		pk := sessionPK(sess.ProjectID, sess.ThreadID)
		s.turnEpochs.put(turnEpochKey(pk, owner), epoch)
		s.leaseSeqs.add(pk, epoch, 1)
	}
	return err
}

// createSession puts a new meta item for sess, unless the thread exists;
// lease (if not nil) adds the lease attributes to the item. With a limit
// of sessions per user the session is counted (limits.go) as it is put.
func (s *Store) createSession(ctx context.Context, sess *store.Session, lease func(item)) error {
	if sess == nil || sess.ProjectID == "" || sess.UserID == "" || sess.ThreadID == "" {
		return errors.New("create session: project, user and thread ids are required")
	}
	t := now()
	if sess.CreatedAt.IsZero() {
		sess.CreatedAt = t
	}
	if sess.UpdatedAt.IsZero() {
		sess.UpdatedAt = t
	}
	if sess.Title == "" {
		sess.Title = store.DefaultTitle
	}
	it, err := sessionItem(sess)
	if err != nil {
		return fmt.Errorf("create session %s: %w", sess.ThreadID, err)
	}
	if lease != nil {
		lease(it)
	}
	if s.limits.SessionsPerUser > 0 {
		// Counted and put at once: one round trip where it was two. The
		// session is put as counted; if the count refuses it, it is
		// deleted again (after a moment in which a listing may show it).
		it[aCounted] = avBool(true)
		var (
			wg       sync.WaitGroup
			countErr error
		)
		wg.Go(func() { _, countErr = s.reserveSession(ctx, sess.UserID) })
		err := s.putSession(ctx, it)
		wg.Wait()
		switch {
		case countErr != nil && err == nil:
			s.unputSession(context.WithoutCancel(ctx), it)
		case countErr == nil && err != nil:
			s.releaseSession(context.WithoutCancel(ctx), sess.UserID)
		}
		if countErr != nil && !errors.Is(err, store.ErrExists) {
			err = countErr
		}
		if err != nil {
			return fmt.Errorf("create session %s: %w", sess.ThreadID, err)
		}
		return nil
	}
	if err := s.putSession(ctx, it); err != nil {
		return fmt.Errorf("create session %s: %w", sess.ThreadID, err)
	}
	return nil
}

// putSession puts a new session's meta item, unless its thread exists
// (store.ErrExists).
func (s *Store) putSession(ctx context.Context, it item) error {
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(s.table),
		Item:                     it,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": attrPK},
	})
	if isConditionFailed(err) {
		return store.ErrExists
	}
	return err
}

// unputSession deletes the meta item it that putSession put, if nothing
// was appended to its session since (its counters as put). A failure is
// only logged: the user then keeps a session the limit did not count.
func (s *Store) unputSession(ctx context.Context, it item) {
	e := newExpr()
	cond := e.n(aUser) + " = " + e.v(it[aUser]) + " AND " + e.n(aMsgSeq) + " = " + e.v(it[aMsgSeq]) +
		" AND " + e.n(aMsgReserved) + " = " + e.v(it[aMsgReserved])
	_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(getS(it, attrPK), metaSK),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	})
	if err != nil {
		s.log.WarnContext(ctx, "dynamo: a session over the user's limit could not be removed again", "session", getS(it, aThread), "error", err)
	}
}

// sessionItem encodes a new session's meta item.
func sessionItem(sess *store.Session) (item, error) {
	it := keyOf(sessionPK(sess.ProjectID, sess.ThreadID), metaSK)
	it[attrGSI1PK] = avS(projectGSI1PK(sess.ProjectID))
	it[attrGSI1SK] = avS(sessionGSI1SK(sess.UserID, sess.Pinned, sess.UpdatedAt, sess.ThreadID))
	it[aThread] = avS(sess.ThreadID)
	it[aUser] = avS(sess.UserID)
	it[aProject] = avS(sess.ProjectID)
	it[aTitle] = avS(sess.Title)
	it[aTitleByUser] = avBool(sess.TitleSetByUser)
	it[aPinned] = avBool(sess.Pinned)
	it[aMsgCount] = avN(sess.MessageCount)
	it[aLLMCalls] = avN(sess.LLMCallsCount)
	it[aInTokens] = avN(sess.InputTokens)
	it[aOutTokens] = avN(sess.OutputTokens)
	it[aTotTokens] = avN(sess.TotalTokens)
	it[aErrors] = avN(sess.Stats.Errors)
	it[aAborted] = avN(sess.Stats.AbortedTurns)
	it[aTurns] = avN(sess.Stats.Turns)
	it[aCostNanos] = avN(sess.Stats.CostNanos)
	it[aUnpriced] = avN(sess.Stats.UnpricedCalls)
	tc := make(item, len(sess.Stats.ToolCalls))
	for name, n := range sess.Stats.ToolCalls {
		tc[toolKey(name)] = avN(n)
	}
	it[aToolCalls] = &types.AttributeValueMemberM{Value: tc}
	it[aMsgSeq] = avN(0)
	it[aMsgReserved] = avN(0)
	it[aMsgCommitted] = avN(0)
	it[aCreatedAt] = avS(fmtTime(sess.CreatedAt))
	it[aUpdatedAt] = avS(fmtTime(sess.UpdatedAt))
	putTime(it, aLastMsgAt, sess.LastMessageAt)
	if len(sess.Metadata) > 0 {
		b, err := json.Marshal(sess.Metadata)
		if err != nil {
			return nil, fmt.Errorf("encode metadata: %w", err)
		}
		it[aMetadata] = avS(string(b))
	}
	if m := sess.CopilotMode(); m != "" {
		it[aCopilotMode] = avS(m)
	}
	return it, nil
}

// toolKey maps a tool name to its key in the tool_calls map: DynamoDB has
// no empty attribute names, so the empty name gets a visible stand-in.
func toolKey(name string) string {
	if name == "" {
		return "(unnamed)"
	}
	return name
}

// sessionFromItem decodes a meta item.
func sessionFromItem(it item) (*store.Session, error) {
	sess := &store.Session{
		ThreadID:       getS(it, aThread),
		UserID:         getS(it, aUser),
		ProjectID:      getS(it, aProject),
		Title:          getS(it, aTitle),
		TitleSetByUser: getBool(it, aTitleByUser),
		Pinned:         getBool(it, aPinned),
	}
	var err error
	for _, f := range []struct {
		name string
		dst  *int64
	}{
		{aMsgCount, &sess.MessageCount},
		{aLLMCalls, &sess.LLMCallsCount},
		{aInTokens, &sess.InputTokens},
		{aOutTokens, &sess.OutputTokens},
		{aTotTokens, &sess.TotalTokens},
		{aErrors, &sess.Stats.Errors},
		{aAborted, &sess.Stats.AbortedTurns},
		{aTurns, &sess.Stats.Turns},
		{aCostNanos, &sess.Stats.CostNanos},
		{aUnpriced, &sess.Stats.UnpricedCalls},
	} {
		if *f.dst, err = getN(it, f.name); err != nil {
			return nil, err
		}
	}
	if m, ok := it[aToolCalls].(*types.AttributeValueMemberM); ok && len(m.Value) > 0 {
		sess.Stats.ToolCalls = make(map[string]int64, len(m.Value))
		for name := range m.Value {
			if sess.Stats.ToolCalls[name], err = getN(m.Value, name); err != nil {
				return nil, fmt.Errorf("tool call count: %w", err)
			}
		}
	}
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{
		{aCreatedAt, &sess.CreatedAt},
		{aUpdatedAt, &sess.UpdatedAt},
		{aLastMsgAt, &sess.LastMessageAt},
	} {
		if *f.dst, err = getTime(it, f.name); err != nil {
			return nil, err
		}
	}
	if md := getS(it, aMetadata); md != "" {
		if err := json.Unmarshal([]byte(md), &sess.Metadata); err != nil {
			return nil, fmt.Errorf("decode metadata: %w", err)
		}
	}
	return sess, nil
}

// readMeta reads the session's meta item (strongly consistent), or
// ErrNotFound when it does not exist or belongs to another user. attrs
// limits the attributes read (user_id is always read); none means all.
func (s *Store) readMeta(ctx context.Context, k store.Key, attrs ...string) (item, error) {
	if err := checkKey(k); err != nil {
		return nil, err
	}
	in := &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            keyOf(sessionPK(k.ProjectID, k.ThreadID), metaSK),
		ConsistentRead: aws.Bool(true),
	}
	if len(attrs) > 0 {
		e := newExpr()
		proj := e.n(aUser)
		for _, a := range attrs {
			proj += ", " + e.n(a)
		}
		in.ProjectionExpression = aws.String(proj)
		in.ExpressionAttributeNames = e.names
	}
	out, err := s.client.GetItem(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", k.ThreadID, err)
	}
	if out.Item == nil || getS(out.Item, aUser) != k.UserID {
		return nil, fmt.Errorf("session %s: %w", k.ThreadID, store.ErrNotFound)
	}
	return out.Item, nil
}

// GetSession implements store.Sessions.
func (s *Store) GetSession(ctx context.Context, k store.Key) (*store.Session, error) {
	it, err := s.readMeta(ctx, k)
	if err != nil {
		return nil, err
	}
	sess, err := sessionFromItem(it)
	if err != nil {
		return nil, fmt.Errorf("decode session %s: %w", k.ThreadID, err)
	}
	return sess, nil
}

// filterScanMax bounds how many index items one query of a filtered
// listing evaluates.
const filterScanMax = 1000

// ListSessions implements store.Sessions with one GSI1 query (more only when
// DynamoDB cuts a page at 1 MB). It reads one item beyond the page to know
// whether a next page exists, so that NextCursor is empty on the last page.
//
// With p.CopilotMode the query carries a FilterExpression on the
// copilot_mode attribute. DynamoDB applies it after Limit (Limit counts the
// items evaluated, not those returned), so the listing queries on, each
// time evaluating up to twice as many items (at most filterScanMax), until
// it holds one match beyond the page or the index is exhausted. The cursor
// is the key of the last session returned, never LastEvaluatedKey, so the
// next page resumes right after it even when a query read past it.
func (s *Store) ListSessions(ctx context.Context, projectID, userID string, p store.Page) ([]store.Session, string, error) {
	if p.Limit < 1 || p.Limit > 1000 {
		return nil, "", fmt.Errorf("list sessions: page limit %d out of range 1..1000", p.Limit)
	}
	var start item
	if p.Cursor != "" {
		var err error
		if start, err = decodeCursor(p.Cursor, projectID, userID); err != nil {
			return nil, "", fmt.Errorf("list sessions: %w", err)
		}
	}
	if projectID == "" || userID == "" {
		return []store.Session{}, "", nil
	}
	e := newExpr()
	cond := e.n(attrGSI1PK) + " = " + e.v(avS(projectGSI1PK(projectID))) +
		" AND begins_with(" + e.n(attrGSI1SK) + ", " + e.v(avS(userGSI1Prefix(userID))) + ")"
	var filter *string
	if p.CopilotMode != "" {
		filter = aws.String(e.n(aCopilotMode) + " = " + e.v(avS(p.CopilotMode)))
	}
	var items []item
	scan := p.Limit + 1 // items the next query evaluates
	for {
		out, err := s.client.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			IndexName:                 aws.String(IndexGSI1),
			KeyConditionExpression:    aws.String(cond),
			FilterExpression:          filter,
			ExpressionAttributeNames:  e.names,
			ExpressionAttributeValues: e.values,
			ScanIndexForward:          aws.Bool(false),
			Limit:                     aws.Int32(int32(scan)),
			ExclusiveStartKey:         start,
		})
		if err != nil {
			return nil, "", fmt.Errorf("list sessions of %s in %s: %w", userID, projectID, err)
		}
		items = append(items, out.Items...)
		start = out.LastEvaluatedKey
		if len(items) > p.Limit || start == nil {
			break
		}
		need := p.Limit + 1 - len(items)
		if filter == nil {
			scan = need
		} else {
			scan = max(need, min(2*scan, filterScanMax))
		}
	}
	next := ""
	if len(items) > p.Limit {
		items = items[:p.Limit]
		last := items[len(items)-1]
		next = encodeCursor(cursor{
			PK: getS(last, attrPK), SK: getS(last, attrSK),
			GSI1PK: getS(last, attrGSI1PK), GSI1SK: getS(last, attrGSI1SK),
		})
	}
	list := make([]store.Session, 0, len(items))
	for _, it := range items {
		sess, err := sessionFromItem(it)
		if err != nil {
			return nil, "", fmt.Errorf("list sessions: decode %s: %w", getS(it, attrPK), err)
		}
		list = append(list, *sess)
	}
	return list, next, nil
}

// updateMeta applies an update to the session meta that bumps updated_at to
// now and rewrites GSI1SK to match. GSI1SK also holds the pinned flag, so
// the update is conditioned on the pinned value it assumes (first false,
// the common case, then the stored one); SetPinned in turn conditions on
// updated_at. build adds the operation's own clauses to e.
func (s *Store) updateMeta(ctx context.Context, k store.Key, build func(e *expr), returnNew bool) (item, error) {
	if err := checkKey(k); err != nil {
		return nil, err
	}
	pinned := false
	for attempt := 0; attempt < maxUpdateAttempts; attempt++ {
		t := now()
		e := newExpr()
		build(e)
		e.set(aUpdatedAt, avS(fmtTime(t)))
		e.set(attrGSI1SK, avS(sessionGSI1SK(k.UserID, pinned, t, k.ThreadID)))
		cond := e.n(aUser) + " = " + e.v(avS(k.UserID)) + " AND " + e.n(aPinned) + " = " + e.v(avBool(pinned))
		in := &dynamodb.UpdateItemInput{
			TableName:                 aws.String(s.table),
			Key:                       keyOf(sessionPK(k.ProjectID, k.ThreadID), metaSK),
			UpdateExpression:          aws.String(e.update()),
			ConditionExpression:       aws.String(cond),
			ExpressionAttributeNames:  e.names,
			ExpressionAttributeValues: e.values,
		}
		if returnNew {
			in.ReturnValues = types.ReturnValueAllNew
		}
		out, err := s.client.UpdateItem(ctx, in)
		if err == nil {
			return out.Attributes, nil
		}
		if !isConditionFailed(err) {
			return nil, fmt.Errorf("update session %s: %w", k.ThreadID, err)
		}
		cur, err := s.readMeta(ctx, k, aPinned)
		if err != nil {
			return nil, err
		}
		pinned = getBool(cur, aPinned)
	}
	return nil, fmt.Errorf("update session %s: gave up after %d concurrent modifications", k.ThreadID, maxUpdateAttempts)
}

// RenameSession implements store.Sessions.
func (s *Store) RenameSession(ctx context.Context, k store.Key, title string) (*store.Session, error) {
	if title == "" {
		return nil, errors.New("rename session: empty title")
	}
	it, err := s.updateMeta(ctx, k, func(e *expr) {
		e.set(aTitle, avS(title))
		e.set(aTitleByUser, avBool(true))
	}, true)
	if err != nil {
		return nil, fmt.Errorf("rename: %w", err)
	}
	sess, err := sessionFromItem(it)
	if err != nil {
		return nil, fmt.Errorf("rename: decode session %s: %w", k.ThreadID, err)
	}
	return sess, nil
}

// SetGeneratedTitle implements store.Sessions. It does not bump
// UpdatedAt: the turn that triggered it already did.
func (s *Store) SetGeneratedTitle(ctx context.Context, k store.Key, title string) (bool, error) {
	if err := checkKey(k); err != nil {
		return false, err
	}
	e := newExpr()
	e.set(aTitle, avS(title))
	cond := e.n(aUser) + " = " + e.v(avS(k.UserID)) + " AND " + e.n(aTitleByUser) + " = " + e.v(avBool(false))
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(sessionPK(k.ProjectID, k.ThreadID), metaSK),
		UpdateExpression:          aws.String(e.update()),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	})
	if err == nil {
		return true, nil
	}
	if !isConditionFailed(err) {
		return false, fmt.Errorf("set generated title of %s: %w", k.ThreadID, err)
	}
	if _, err := s.readMeta(ctx, k); err != nil {
		return false, err
	}
	return false, nil
}

// SetPinned implements store.Sessions. It keeps UpdatedAt and rewrites
// GSI1SK, conditioned on the updated_at it was computed from.
func (s *Store) SetPinned(ctx context.Context, k store.Key, pinned bool) (*store.Session, error) {
	for attempt := 0; attempt < maxUpdateAttempts; attempt++ {
		cur, err := s.readMeta(ctx, k, aUpdatedAt)
		if err != nil {
			return nil, err
		}
		upd, err := getTime(cur, aUpdatedAt)
		if err != nil {
			return nil, fmt.Errorf("pin session %s: %w", k.ThreadID, err)
		}
		e := newExpr()
		e.set(aPinned, avBool(pinned))
		e.set(attrGSI1SK, avS(sessionGSI1SK(k.UserID, pinned, upd, k.ThreadID)))
		cond := e.n(aUser) + " = " + e.v(avS(k.UserID)) + " AND " + e.n(aUpdatedAt) + " = " + e.v(cur[aUpdatedAt])
		out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(s.table),
			Key:                       keyOf(sessionPK(k.ProjectID, k.ThreadID), metaSK),
			UpdateExpression:          aws.String(e.update()),
			ConditionExpression:       aws.String(cond),
			ExpressionAttributeNames:  e.names,
			ExpressionAttributeValues: e.values,
			ReturnValues:              types.ReturnValueAllNew,
		})
		if isConditionFailed(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("pin session %s: %w", k.ThreadID, err)
		}
		sess, err := sessionFromItem(out.Attributes)
		if err != nil {
			return nil, fmt.Errorf("pin: decode session %s: %w", k.ThreadID, err)
		}
		return sess, nil
	}
	return nil, fmt.Errorf("pin session %s: gave up after %d concurrent modifications", k.ThreadID, maxUpdateAttempts)
}

// AddTurnStats implements store.Sessions with one UpdateItem: counters
// through ADD (atomic), tool counts through SET on the nested map (created
// with the session), updated_at and GSI1SK rewritten.
func (s *Store) AddTurnStats(ctx context.Context, k store.Key, d store.TurnStats) error {
	_, err := s.updateMeta(ctx, k, func(e *expr) { addTurnStats(e, d) }, false)
	if err != nil {
		return fmt.Errorf("add turn stats: %w", err)
	}
	return nil
}

// addTurnStats adds to e the clauses that add d to a session's counters.
func addTurnStats(e *expr, d store.TurnStats) {
	for _, c := range []struct {
		attr string
		n    int64
	}{
		{aMsgCount, d.Messages},
		{aLLMCalls, d.LLMCalls},
		{aInTokens, d.InputTokens},
		{aOutTokens, d.OutputTokens},
		{aTotTokens, d.InputTokens + d.OutputTokens},
		{aErrors, d.Errors},
		{aAborted, d.AbortedTurns},
		{aTurns, d.Turns},
		{aCostNanos, d.CostNanos},
		{aUnpriced, d.UnpricedCalls},
	} {
		if c.n != 0 {
			e.add(c.attr, avN(c.n))
		}
	}
	tools := make(map[string]int64, len(d.ToolCalls))
	for name, n := range d.ToolCalls {
		if n != 0 {
			tools[toolKey(name)] += n
		}
	}
	if len(tools) > 0 {
		tc, zero := e.n(aToolCalls), e.v(avN(0))
		for _, name := range sortedKeys(tools) {
			path := tc + "." + e.n(name)
			e.setRaw(path + " = if_not_exists(" + path + ", " + zero + ") + " + e.v(avN(tools[name])))
		}
	}
	if !d.LastMessageAt.IsZero() {
		e.set(aLastMsgAt, avS(fmtTime(d.LastMessageAt)))
	}
}

// reconcileMessageCount adds to e, the update by which AcquireLease takes
// a lease, the clause that makes the session's message_count the number
// of its committed messages, msg_committed (see "Counting" in
// messages.go): the new holder counts what a turn cut before its
// AddTurnStats (its process killed) left committed but uncounted. The
// cut turn's other counters are not known and stay unwritten, so it is
// counted at most once; after a normal turn, which wrote its statistics
// before releasing the lease, the clause changes nothing. A meta item
// written before msg_committed existed keeps its message_count until an
// append has started the counter.
func reconcileMessageCount(e *expr) {
	mc := e.n(aMsgCount)
	e.setRaw(mc + " = if_not_exists(" + e.n(aMsgCommitted) + ", " + mc + ")")
}

// sortedKeys returns m's keys in order, for deterministic expressions.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// DeleteSession implements store.Sessions: the messages first, the meta
// item (with the lease and abort flag) last, never an item of a session
// created again with the same id meanwhile (see "Deletion" in
// messages.go).
func (s *Store) DeleteSession(ctx context.Context, k store.Key) error {
	if err := checkKey(k); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	if err := s.deleteThread(ctx, sessionPK(k.ProjectID, k.ThreadID), k.UserID); err != nil {
		return fmt.Errorf("delete session %s: %w", k.ThreadID, err)
	}
	return nil
}

// ---- cursors ----

// cursor is the position of the last session of a page: the GSI1 key of
// its meta item, which DynamoDB takes as ExclusiveStartKey.
type cursor struct {
	PK     string `json:"pk"`
	SK     string `json:"sk"`
	GSI1PK string `json:"g1pk"`
	GSI1SK string `json:"g1sk"`
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c) // strings only: cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor decodes and validates a cursor of the listing of userID in
// projectID; anything else is ErrInvalidCursor.
func decodeCursor(s, projectID, userID string) (item, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", store.ErrInvalidCursor, err)
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%w: %v", store.ErrInvalidCursor, err)
	}
	prefix := userGSI1Prefix(userID)
	if c.SK != metaSK || c.GSI1PK != projectGSI1PK(projectID) ||
		len(c.GSI1SK) <= len(prefix) || c.GSI1SK[:len(prefix)] != prefix ||
		len(c.PK) <= len(c.GSI1PK)+3 || c.PK[:len(c.GSI1PK)+3] != c.GSI1PK+"#T#" {
		return nil, fmt.Errorf("%w: not a cursor of this listing", store.ErrInvalidCursor)
	}
	return item{
		attrPK: avS(c.PK), attrSK: avS(c.SK),
		attrGSI1PK: avS(c.GSI1PK), attrGSI1SK: avS(c.GSI1SK),
	}, nil
}

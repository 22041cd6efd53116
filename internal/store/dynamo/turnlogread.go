package dynamo

import (
	"bytes"
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"agentchat/internal/store"
)

// The reading of turn logs; see "Turn logs" in turnlog.go.

// ReadTurnEvents implements store.TurnLogs: the meta item (owner, epoch
// and lease) read while one Query reads the log (two when turn is "": the
// latest turn first). The meta item is read strongly consistent: a
// session created a moment ago is found, the lease (Live) is the current
// one, and so is the epoch of a session created again.
func (s *Store) ReadTurnEvents(ctx context.Context, k store.Key, turn string, after int64) (*store.TurnEvents, error) {
	if err := checkKey(k); err != nil {
		return nil, fmt.Errorf("read turn events: %w", err)
	}
	if after < 0 {
		return nil, fmt.Errorf("read turn events of %s: negative event number %d", k.ThreadID, after)
	}
	type metaRead struct {
		it  item
		err error
	}
	metaCh := make(chan metaRead, 1)
	go func() {
		it, err := s.readMeta(ctx, k, aMsgEpoch, aLeaseOwner, aLeaseUntil)
		metaCh <- metaRead{it, err}
	}()
	now := s.clock()
	r := &turnReader{now: now.Unix(), next: after + 1, out: &store.TurnEvents{}}
	var latest item
	wantLatest := turn == ""
	if wantLatest {
		out, err := s.client.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :p)"),
			ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK},
			ExpressionAttributeValues: item{":pk": avS(sessionPK(k.ProjectID, k.ThreadID)), ":p": avS(turnPrefix)},
			ScanIndexForward:          aws.Bool(false),
			Limit:                     aws.Int32(1),
		})
		if err != nil {
			return nil, fmt.Errorf("read the latest turn of %s: %w", k.ThreadID, err)
		}
		if len(out.Items) > 0 {
			latest = out.Items[0]
			if turn, _, _, err = parseTurnSK(getS(latest, attrSK)); err != nil {
				return nil, fmt.Errorf("read the latest turn of %s: %w", k.ThreadID, err)
			}
		}
	}
	var page *dynamodb.QueryOutput
	var err error
	if turn != "" {
		if page, err = s.queryTurn(ctx, k, turn, after, nil); err != nil {
			return nil, err
		}
	}
	m := <-metaCh
	if m.err != nil {
		return nil, fmt.Errorf("read turn events: %w", m.err)
	}
	r.epoch = getS(m.it, aMsgEpoch)
	until, err := getN(m.it, aLeaseUntil)
	if err != nil {
		return nil, fmt.Errorf("read turn events of %s: %w", k.ThreadID, err)
	}
	owner := getS(m.it, aLeaseOwner)
	live := owner != "" && until > now.UnixNano()
	noLog := turn == "" || (latest != nil && !r.valid(latest)) // or its latest item is expired or a stray
	if wantLatest && live && (noLog || owner != turn) {
		// The running turn logged nothing yet: the lease holder is the
		// latest turn.
		return &store.TurnEvents{Turn: owner, First: after + 1, Live: true}, nil
	}
	if noLog {
		return r.out, nil
	}
	r.turn = turn
	for {
		for _, it := range page.Items {
			if err := r.add(it); err != nil {
				return nil, fmt.Errorf("read turn %s of %s: %w", turn, k.ThreadID, err)
			}
			if r.done {
				break
			}
		}
		if r.done || page.LastEvaluatedKey == nil {
			break
		}
		if page, err = s.queryTurn(ctx, k, turn, after, page.LastEvaluatedKey); err != nil {
			return nil, err
		}
	}
	if r.out.Turn == "" {
		// Ahead of the log, or no such turn: its last batch tells.
		if err := s.readTurnTail(ctx, k, r, after); err != nil {
			return nil, err
		}
		if r.out.Turn == "" && live && owner == turn {
			// Running, nothing logged yet.
			r.out = &store.TurnEvents{Turn: turn, First: after + 1}
		}
	}
	if r.out.Turn != "" {
		r.out.Live = live && owner == turn
	}
	return r.out, nil
}

// readTurnTail sets r.out for a reader at after that found no batch ending
// at after or later: the turn's last batch (its newest item, the tail of
// its last chunk) says whether the turn has a log, and whether it ended.
func (s *Store) readTurnTail(ctx context.Context, k store.Key, r *turnReader, after int64) error {
	out, err := s.client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :p)"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK},
		ExpressionAttributeValues: item{":pk": avS(sessionPK(k.ProjectID, k.ThreadID)), ":p": avS(turnPrefix + r.turn + "#")},
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(1),
	})
	if err != nil {
		return fmt.Errorf("read the tail of turn %s of %s: %w", r.turn, k.ThreadID, err)
	}
	if len(out.Items) == 0 || !r.valid(out.Items[0]) {
		return nil
	}
	_, last, _, err := parseTurnSK(getS(out.Items[0], attrSK))
	if err != nil {
		return fmt.Errorf("read the tail of turn %s of %s: %w", r.turn, k.ThreadID, err)
	}
	r.out = &store.TurnEvents{Turn: r.turn, First: after + 1, Final: getBool(out.Items[0], tFinal) && last <= after}
	return nil
}

// queryTurn reads one page of the items of turn from the tail of the
// chunk that ends at after on (eventually consistent; see "Turn logs").
func (s *Store) queryTurn(ctx context.Context, k store.Key, turn string, after int64, start item) (*dynamodb.QueryOutput, error) {
	out, err := s.client.Query(ctx, &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		KeyConditionExpression: aws.String("#pk = :pk AND #sk BETWEEN :from AND :to"),
		ExpressionAttributeNames: map[string]string{
			"#pk": attrPK, "#sk": attrSK,
		},
		ExpressionAttributeValues: item{
			":pk":   avS(sessionPK(k.ProjectID, k.ThreadID)),
			":from": avS(turnSK(turn, after, tailPart)),
			":to":   avS(turnSKEnd(turn)),
		},
		ExclusiveStartKey: start,
	})
	if err != nil {
		return nil, fmt.Errorf("read turn %s of %s: %w", turn, k.ThreadID, err)
	}
	return out, nil
}

// turnReader assembles the chunks of a turn's log, item by item in key
// order, into the events from next on.
type turnReader struct {
	epoch string
	now   int64 // unix seconds, against ttl
	turn  string
	next  int64 // number of the next event to return
	out   *store.TurnEvents
	size  int // bytes of out.Events
	// last and pieces are the chunk being assembled: its data parts so far.
	last   int64
	pieces [][]byte
	done   bool
}

// valid reports whether it is of the session's incarnation and unexpired.
func (r *turnReader) valid(it item) bool {
	ttl, err := getN(it, aTTL)
	return err == nil && getS(it, mEpoch) == r.epoch && r.epoch != "" && ttl > r.now
}

// add takes the next item; r.done is set when the contiguous events end
// (a gap, an incomplete chunk, the final chunk or the size limit).
func (r *turnReader) add(it item) error {
	if !r.valid(it) {
		return nil // a stray of another incarnation, or expired: absent
	}
	_, last, part, err := parseTurnSK(getS(it, attrSK))
	if err != nil {
		return err
	}
	if r.out.Turn == "" { // the first item read: next is still after+1
		r.out.Turn, r.out.First = r.turn, r.next
	}
	if last != r.last {
		if len(r.pieces) > 0 {
			r.done = true // the chunk before has no tail
			return nil
		}
		r.last = last
	}
	if part != tailPart {
		if part != len(r.pieces) {
			r.done = true // a missing part
			return nil
		}
		r.pieces = append(r.pieces, getB(it, tEvents))
		return nil
	}
	pieces := append(r.pieces, getB(it, tEvents))
	r.pieces = nil
	first, err1 := getN(it, tFirst)
	parts, err2 := getN(it, tParts)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("chunk %d: first %v, parts %v", last, err1, err2)
	}
	if last < r.next { // the chunk that ends where the reader is
		r.out.Final = getBool(it, tFinal)
		return nil
	}
	if first > r.next || int64(len(pieces)) != parts {
		r.done = true // a gap, or a chunk not all there yet
		return nil
	}
	events, err := store.DecodeTurnEvents(bytes.Join(pieces, nil), last-first+1)
	if err != nil {
		return fmt.Errorf("chunk %d-%d: %w", first, last, err)
	}
	var whole bool
	r.out.Events, r.size, whole = store.TakeTurnEvents(r.out.Events, r.size, events, first, r.next)
	r.out.Final = whole && getBool(it, tFinal)
	r.done = !whole || r.out.Final
	r.next = last + 1
	return nil
}

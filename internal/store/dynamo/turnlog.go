package dynamo

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"agentchat/internal/store"
)

// Turn logs (store.TurnLogs)
//
// A batch of a turn's log (a chunk) is stored in the session's partition
// as the items TURN#{turn}#{last:010d}#{part:02d}, last being the number
// of its last event (first-1 for a batch without events: 0 for the marker
// that starts a turn). "TURN#" sorts after "META", so the meta item stays
// the first item of the partition, as deleteThread requires. The chunk's
// events (store.EncodeTurnEvents) are cut into pieces of partSize bytes:
// the data parts 00, 01, ... and the tail, always part 99, which holds the
// last piece and the chunk's first, parts (the number of its items) and
// final. A one-item chunk is just its tail; a chunk of several items is
// written with BatchWriteItem, and a reader assembles it only when all its
// parts are there. Every item carries the session's msg_epoch (so that the
// deletion of the session, and its sweep, remove it, and a session created
// again with the same thread id ignores it) and the TTL attribute ttl.
//
// A batch without events only updates the tail of the chunk before it
// (its final flag and expiry), creating it if it is absent: so a turn may
// end with an empty Final batch without rewriting its last events.
//
// A read of the events after n is one Query of the key range
// TURN#{turn}#{n:010d}#99 .. TURN#{turn}#~ (more pages only when there is
// more than a page to return): it starts at the tail of the chunk that
// ends at n, whose final flag tells whether n is the turn's last event
// and whose presence that the turn has a log, without reading that
// chunk's data parts. The latest turn is the first item of a descending
// Query on begins_with(SK, "TURN#") with Limit 1.
//
// Items are written once and never changed but by an empty batch (which
// only sets final and ttl on a tail), so the queries are eventually
// consistent: a stale read may miss the newest items, never show wrong
// ones, and the contiguity checks stop at the first missing item (a reader
// sees the log as it was a moment earlier).

// Attributes of turn log items (besides mEpoch and aTTL).
const (
	tFirst  = "first" // number of the chunk's first event (tail)
	tParts  = "parts" // number of items of the chunk (tail)
	tFinal  = "final" // the chunk ends the turn (tail)
	tEvents = "ev"    // binary: the item's piece of the chunk's events
)

// turnPrefix starts the sort key of every turn log item.
const turnPrefix = "TURN#"

// tailPart is the part number of a chunk's tail item; data parts are
// numbered from 0 below it, so a chunk has at most tailPart items.
const tailPart = 99

// batchWriteMax is the most items one BatchWriteItem takes.
const batchWriteMax = 25

// turnCacheMax bounds the caches of running turns' epochs and seqs.
const turnCacheMax = 4096

func turnSK(turn string, last int64, part int) string {
	return fmt.Sprintf("%s%s#%010d#%02d", turnPrefix, esc(turn), last, part)
}

// turnSKEnd sorts after every item of turn.
func turnSKEnd(turn string) string { return turnPrefix + esc(turn) + "#~" }

// keyUnescaper undoes keyEscaper.
var keyUnescaper = strings.NewReplacer("%23", "#", "%25", "%")

// parseTurnSK returns the turn, last event number and part of a turn log
// sort key.
func parseTurnSK(sk string) (turn string, last int64, part int, err error) {
	rest, ok := strings.CutPrefix(sk, turnPrefix)
	i := strings.IndexByte(rest, '#')
	if !ok || i < 0 || len(rest) != i+1+10+1+2 || rest[i+11] != '#' {
		return "", 0, 0, fmt.Errorf("bad turn log key %q", sk)
	}
	last, err1 := strconv.ParseInt(rest[i+1:i+11], 10, 64)
	p, err2 := strconv.Atoi(rest[i+12:])
	if err1 != nil || err2 != nil {
		return "", 0, 0, fmt.Errorf("bad turn log key %q", sk)
	}
	return keyUnescaper.Replace(rest[:i]), last, p, nil
}

// turnEpochKey is the key of turn's entry in turnEpochs.
func turnEpochKey(pk, turn string) string { return pk + "\x00" + turn }

// turnEpochs caches the epoch of the sessions of running turns, by
// partition and turn, so that a turn reads its session's meta item once,
// at its first batch, not at every batch. A turn's entry is dropped at its
// Final batch; an entry of a turn that died is evicted when the cache is
// full. A turn that goes on after its session was deleted keeps writing
// with the old epoch: its items are strays that the session created again
// ignores (and its deletion, or their TTL, removes).
type turnEpochs = turnCache[string]

// turnCache is a map from turnEpochKey to V of at most turnCacheMax
// entries (any one is evicted to make room), safe for concurrent use.
type turnCache[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

func (c *turnCache[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	return v, ok
}

func (c *turnCache[V]) put(key string, v V) {
	c.update(key, func(V, bool) (V, bool) { return v, true })
}

// update replaces key's entry (v, ok: its value and whether there is one)
// by what f returns, in one step: the new value when keep, else none.
func (c *turnCache[V]) update(key string, f func(v V, ok bool) (nv V, keep bool)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	nv, keep := f(v, ok)
	switch {
	case !keep:
		delete(c.m, key)
		return
	case c.m == nil:
		c.m = map[string]V{}
	case !ok && len(c.m) >= turnCacheMax:
		for k := range c.m { // evict any one
			delete(c.m, k)
			break
		}
	}
	c.m[key] = nv
}

func (c *turnCache[V]) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
}

// turnEpoch returns the epoch of k's session for the items of turn: the
// cached one, or the meta item's (a strongly consistent read, so that a
// session created a moment ago is found), given one by fenceEpoch when no
// append has yet. ErrNotFound when the session does not exist or is not
// k.UserID's.
func (s *Store) turnEpoch(ctx context.Context, k store.Key, pk, turn string) (string, error) {
	key := turnEpochKey(pk, turn)
	if e, ok := s.turnEpochs.get(key); ok {
		return e, nil
	}
	meta, err := s.readMeta(ctx, k, aMsgEpoch)
	if err != nil {
		return "", err
	}
	epoch := getS(meta, aMsgEpoch)
	if epoch == "" {
		if epoch, err = s.fenceEpoch(ctx, pk, k.UserID); err != nil {
			return "", err
		}
	}
	s.turnEpochs.put(key, epoch)
	return epoch, nil
}

// AppendTurnEvents implements store.TurnLogs: one write per batch (a
// PutItem, or a BatchWriteItem of its parts, or an UpdateItem of the tail
// before it for a batch without events), and the read of the session's
// meta item at the turn's first batch (turnEpoch).
func (s *Store) AppendTurnEvents(ctx context.Context, k store.Key, ev store.TurnEvents, keep time.Duration) error {
	if err := checkKey(k); err != nil {
		return fmt.Errorf("append turn events: %w", err)
	}
	last, err := store.CheckTurnEvents(ev, keep)
	if err != nil {
		return fmt.Errorf("append turn events to %s: %w", k.ThreadID, err)
	}
	pk := sessionPK(k.ProjectID, k.ThreadID)
	epoch, err := s.turnEpoch(ctx, k, pk, ev.Turn)
	if err != nil {
		return fmt.Errorf("append turn events: %w", err)
	}
	exp := s.clock().Add(keep)
	ttl := exp.Unix()
	if exp.Nanosecond() > 0 {
		ttl++ // kept at least keep
	}
	if len(ev.Events) == 0 {
		err = s.markTurnTail(ctx, pk, epoch, ev, last, ttl)
	} else {
		err = s.putTurnChunk(ctx, pk, epoch, ev, last, ttl)
	}
	if err != nil {
		return fmt.Errorf("append turn events %d-%d of turn %s to %s: %w", ev.First, last, ev.Turn, k.ThreadID, err)
	}
	if ev.Final {
		s.turnEpochs.drop(pk + "\x00" + ev.Turn)
	}
	return nil
}

// markTurnTail writes a batch without events: the tail of the chunk that
// ends at last gets the batch's final flag and expiry (and is created,
// without events, when absent).
func (s *Store) markTurnTail(ctx context.Context, pk, epoch string, ev store.TurnEvents, last, ttl int64) error {
	e := newExpr()
	for a, v := range map[string]types.AttributeValue{tFirst: avN(ev.First), tParts: avN(1), mEpoch: avS(epoch)} {
		n := e.n(a)
		e.setRaw(n + " = if_not_exists(" + n + ", " + e.v(v) + ")")
	}
	e.set(aTTL, avN(ttl))
	if ev.Final {
		e.set(tFinal, avBool(true))
	}
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(pk, turnSK(ev.Turn, last, tailPart)),
		UpdateExpression:          aws.String(e.update()),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	})
	return err
}

// putTurnChunk writes a batch with events as one chunk (see "Turn logs").
func (s *Store) putTurnChunk(ctx context.Context, pk, epoch string, ev store.TurnEvents, last, ttl int64) error {
	blob := s.turnBlobs.Encode(ev.Events)
	n := (len(blob) + partSize - 1) / partSize
	if n > tailPart {
		return fmt.Errorf("%d bytes of events are more than a batch can hold (%d)", len(blob), tailPart*partSize)
	}
	items := make([]item, n)
	for i := range n {
		part := i
		if i == n-1 {
			part = tailPart
		}
		it := keyOf(pk, turnSK(ev.Turn, last, part))
		it[mEpoch] = avS(epoch)
		it[aTTL] = avN(ttl)
		it[tEvents] = &types.AttributeValueMemberB{Value: blob[i*partSize : min((i+1)*partSize, len(blob))]}
		items[i] = it
	}
	tail := items[n-1]
	tail[tFirst] = avN(ev.First)
	tail[tParts] = avN(int64(n))
	tail[tFinal] = avBool(ev.Final)
	if n == 1 {
		_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: tail})
		return err
	}
	return s.batchPut(ctx, items)
}

// batchPut puts the items with BatchWriteItem, batchWriteMax at a time,
// sending again the items DynamoDB left unprocessed (with a growing
// pause between attempts).
func (s *Store) batchPut(ctx context.Context, items []item) error {
	for len(items) > 0 {
		reqs := make([]types.WriteRequest, 0, min(len(items), batchWriteMax))
		for _, it := range items[:min(len(items), batchWriteMax)] {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		}
		items = items[len(reqs):]
		pending := map[string][]types.WriteRequest{s.table: reqs}
		for delay := 20 * time.Millisecond; ; delay = min(2*delay, time.Second) {
			out, err := s.client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				return fmt.Errorf("batch write: %w", err)
			}
			if len(out.UnprocessedItems[s.table]) == 0 {
				break
			}
			pending = out.UnprocessedItems
			if err := sleep(ctx, delay); err != nil {
				return fmt.Errorf("batch write of unprocessed items: %w", err)
			}
		}
	}
	return nil
}

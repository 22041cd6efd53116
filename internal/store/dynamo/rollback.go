package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"agentchat/internal/store"
)

var _ store.TurnRollbacks = (*Store)(nil)

// Rollback of a turn
//
// Seqs are never handed out twice in one incarnation (msg_reserved only
// grows), so a rollback does not move msg_seq back: it voids the turn's
// trailing run, as step 4 of the append protocol voids a dead range, and
// later appends reserve above it as usual.
//
//  1. Read: the commit state and message_count (strongly consistent
//     GetItem), then the visible messages from msg_seq back with that
//     state (a collector, as ListMessages), a page of rollbackPage
//     messages first and larger ones while all of them are the turn's.
//     The run is [first, msg_seq]: the seqs there not yet voided are
//     exactly its messages, n of them.
//  2. Void: one UpdateItem on the meta item appends the unvoided
//     sub-ranges of [first, msg_seq] to msg_gaps (gaps stay disjoint, so
//     visibleCount stays right), lowers msg_committed by n (ADD -n IF
//     attribute_exists, or IF attribute_not_exists leaving it absent: the
//     first commit then starts it from the visible seqs, see "Counting")
//     and sets message_count to max(0, count-n), conditioned on the user,
//     msg_epoch, msg_seq, the number of gaps (only ever appended to) and
//     message_count being what step 1 read. The run vanishes at once from
//     every reader, and msg_committed still counts the visible messages.
//     A failed condition (a concurrent append, count or rollback) starts
//     over from 1, at most maxRollbackAttempts times.
//  3. Sweep: the voided items (message and part items in [first,
//     msg_seq]) are deleted, best effort, each IF it is of the epoch (or
//     of none), so that they cost no storage and no reads of later
//     queries; one that stays is invisible and goes with its session.

// rollbackPage is how many messages a rollback reads first; a run longer
// than that is read in pages four times larger each.
const rollbackPage = 16

// maxRollbackAttempts bounds the reads and conditional updates of one
// rollback that meets concurrent changes of the session.
const maxRollbackAttempts = 5

// RollBackTurn implements store.TurnRollbacks; see "Rollback of a turn"
// above. An empty turn matches no message.
func (s *Store) RollBackTurn(ctx context.Context, k store.Key, turn string) (int, error) {
	if err := checkKey(k); err != nil {
		return 0, fmt.Errorf("roll back turn %s: %w", turn, err)
	}
	for attempt := 1; ; attempt++ {
		n, run, err := s.rollBackOnce(ctx, k, turn)
		if err == nil {
			if n > 0 {
				s.sweepVoided(ctx, k, run)
			}
			return n, nil
		}
		if !isConditionFailed(err) || attempt >= maxRollbackAttempts {
			return 0, fmt.Errorf("roll back turn %s of %s (attempt %d): %w", turn, k.ThreadID, attempt, err)
		}
	}
}

// voidedRun names the items a rollback voided: the seqs first..last of
// incarnation epoch.
type voidedRun struct {
	epoch       string
	first, last int64
}

// rollBackOnce runs steps 1 and 2 once: it returns the number of messages
// removed and the run to sweep, or the condition failure of a concurrent
// change.
func (s *Store) rollBackOnce(ctx context.Context, k store.Key, turn string) (int, voidedRun, error) {
	it, err := s.readMeta(ctx, k, aMsgSeq, aMsgGaps, aMsgEpoch, aMsgCommitted, aMsgCount)
	if err != nil {
		return 0, voidedRun{}, err
	}
	c, err := commitFromItem(it)
	if err != nil {
		return 0, voidedRun{}, fmt.Errorf("read the commit state: %w", err)
	}
	_, hasCount := it[aMsgCount]
	count, err := getN(it, aMsgCount)
	if err != nil {
		return 0, voidedRun{}, fmt.Errorf("read the message count: %w", err)
	}
	if turn == "" || c.visibleCount() == 0 {
		return 0, voidedRun{}, nil
	}
	first, n, err := s.trailingRun(ctx, k, c, turn)
	if err != nil || n == 0 {
		return 0, voidedRun{}, err
	}

	e := newExpr()
	gaps := e.n(aMsgGaps)
	var add []types.AttributeValue
	for _, r := range c.unvoided(first, c.seq) {
		add = append(add, avS(formatSeqRange(r.lo, r.hi)))
	}
	empty := e.v(&types.AttributeValueMemberL{Value: []types.AttributeValue{}})
	e.setRaw(gaps + " = list_append(if_not_exists(" + gaps + ", " + empty + "), " + e.v(&types.AttributeValueMemberL{Value: add}) + ")")
	mc := e.n(aMsgCount)
	e.set(aMsgCount, avN(max(0, count-n)))
	// updateLease adds the user's check to cond.
	cond := e.n(aMsgEpoch) + " = " + e.v(avS(c.epoch)) + " AND " + e.n(aMsgSeq) + " = " + e.v(avN(c.seq))
	if len(c.gaps) == 0 {
		cond += " AND (attribute_not_exists(" + gaps + ") OR size(" + gaps + ") = " + e.v(avN(0)) + ")"
	} else {
		cond += " AND size(" + gaps + ") = " + e.v(avN(int64(len(c.gaps))))
	}
	if hasCount {
		cond += " AND " + mc + " = " + e.v(avN(count))
	} else {
		cond += " AND attribute_not_exists(" + mc + ")"
	}
	if c.counted {
		e.add(aMsgCommitted, avN(-n))
		cond += " AND attribute_exists(" + e.n(aMsgCommitted) + ")"
	} else {
		cond += " AND attribute_not_exists(" + e.n(aMsgCommitted) + ")"
	}
	if err := s.updateLease(ctx, k, e, cond); err != nil {
		return 0, voidedRun{}, fmt.Errorf("void messages %d..%d: %w", first, c.seq, err)
	}
	return int(n), voidedRun{epoch: c.epoch, first: first, last: c.seq}, nil
}

// trailingRun reads the visible messages of state c from the last one
// back and returns the seq of the first of the run tagged with turn that
// ends the conversation, and its length (0 when the last message is not
// turn's).
func (s *Store) trailingRun(ctx context.Context, k store.Key, c commitState, turn string) (first, n int64, err error) {
	pk := sessionPK(k.ProjectID, k.ThreadID)
	col := newCollector(&s.deflater, c, rollbackPage)
	for {
		if err := s.collectRange(ctx, col, pk, msgPrefix, msgSK(col.next)+"#~", col.limit+2, true); err != nil {
			return 0, 0, fmt.Errorf("read the last messages: %w", err)
		}
		for int(n) < len(col.out) && col.out[n].TurnOf() == turn {
			first, n = col.out[n].Seq, n+1
		}
		if int(n) < len(col.out) || col.next == 0 {
			return first, n, nil
		}
		col.limit *= 4 // all read are the turn's: read on
	}
}

// unvoided returns the sub-ranges of [lo, hi] that no gap of c covers, in
// order.
func (c commitState) unvoided(lo, hi int64) []seqRange {
	var out []seqRange
	for lo <= hi {
		if g, ok := c.gapOf(lo); ok {
			lo = g[1] + 1
			continue
		}
		end := hi
		for _, g := range c.gaps {
			if g[0] > lo && g[0] <= end {
				end = g[0] - 1
			}
		}
		out = append(out, seqRange{lo, end})
		lo = end + 1
	}
	return out
}

// sweepVoided deletes the message and part items of run r (step 3),
// each only if it is of r's epoch or of none; a failure is logged, not
// returned: the items are invisible either way.
func (s *Store) sweepVoided(ctx context.Context, k store.Key, r voidedRun) {
	pk := sessionPK(k.ProjectID, k.ThreadID)
	var start item
	for {
		out, err := s.queryMessages(ctx, pk, msgSK(r.first), msgSK(r.last)+"#~", 0, start, true)
		if err == nil {
			err = s.deleteEach(ctx, out.Items, ofEpoch(r.epoch))
		}
		if err != nil {
			s.log.WarnContext(ctx, "dynamo: could not delete the items of a rolled-back turn (they stay invisible)",
				"session", k.ThreadID, "first", r.first, "last", r.last, "error", err)
			return
		}
		if start = out.LastEvaluatedKey; start == nil {
			return
		}
	}
}

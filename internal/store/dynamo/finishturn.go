package dynamo

import (
	"context"
	"errors"
	"fmt"

	"agentchat/internal/store"
)

var (
	_ store.TurnFinisher       = (*Store)(nil)
	_ store.TitledTurnFinisher = (*Store)(nil)
)

// FinishTurn implements store.TurnFinisher. The end of a turn is three
// writes where it was five: the reservation of the answer's seqs (which
// returns the whole meta item), the answer's items, and one UpdateItem of
// the meta item that commits them (step 3 of the append protocol, see
// messages.go), adds the statistics and releases the lease, conditioned
// on all that the separate writes are conditioned on. When that condition
// cannot hold (an earlier append still to commit, the lease taken by
// another turn, a meta item without msg_committed) or fails, the answer is
// committed as an append commits it and the statistics and release follow
// in one more write; a lost answer to the one write is told from a failure
// by the commit marker, which only this turn moves over its range.
// Without messages it is the statistics and the release in one write.
func (s *Store) FinishTurn(ctx context.Context, k store.Key, owner string, msgs []store.Message, d store.TurnStats) ([]store.Message, error) {
	return s.finishTurn(ctx, k, owner, msgs, d, "")
}

// FinishTitledTurn implements store.TitledTurnFinisher: FinishTurn whose
// one write also sets the generated title, conditioned on the user's not
// having named the session (as SetGeneratedTitle is); a session the user
// named keeps its name, in the same write.
func (s *Store) FinishTitledTurn(ctx context.Context, k store.Key, owner string, msgs []store.Message, d store.TurnStats, title string) ([]store.Message, error) {
	return s.finishTurn(ctx, k, owner, msgs, d, title)
}

// finishTurn is FinishTurn that sets title (when not empty) as a generated
// title.
func (s *Store) finishTurn(ctx context.Context, k store.Key, owner string, msgs []store.Message, d store.TurnStats, title string) ([]store.Message, error) {
	if err := checkKey(k); err != nil {
		return nil, fmt.Errorf("finish turn: %w", err)
	}
	out, err := prepareMessages(k, msgs)
	if err != nil {
		return nil, fmt.Errorf("finish turn: %w", err)
	}
	s.voidLeaseSeq(ctx, k)
	if len(out) == 0 {
		if err := s.statsAndRelease(ctx, k, owner, d, title, nil); err != nil {
			return nil, fmt.Errorf("finish turn on %s: %w", k.ThreadID, err)
		}
		return out, nil
	}
	sp, meta, err := s.reserve(ctx, k, int64(len(out)), 0, true)
	if err != nil {
		return nil, fmt.Errorf("finish turn: %w", err)
	}
	conflict, err := s.writeSpan(ctx, k, sp, out)
	if err != nil {
		return nil, fmt.Errorf("finish turn on %s: %w", k.ThreadID, err)
	}
	if conflict {
		// Items of a stale append in the way: void the range and append
		// with the whole protocol, which reserves past them.
		if err := s.settle(ctx, k, sp, true); err != nil {
			return nil, fmt.Errorf("finish turn on %s: void a range holding items of another append: %w", k.ThreadID, err)
		}
		if out, err = s.appendPrepared(ctx, k, out); err != nil {
			return nil, fmt.Errorf("finish turn: %w", err)
		}
	} else {
		done, err := s.commitFinish(ctx, k, owner, sp, meta, d, title)
		if err != nil {
			return nil, fmt.Errorf("finish turn on %s: %w", k.ThreadID, err)
		}
		if done {
			return out, nil
		}
		if err := s.settle(ctx, k, sp, false); err != nil {
			return nil, fmt.Errorf("finish turn on %s: %w", k.ThreadID, err)
		}
	}
	// The messages are stored: an error from here on is returned with them.
	if err := s.statsAndRelease(ctx, k, owner, d, title, meta); err != nil {
		return out, fmt.Errorf("finish turn on %s: %w", k.ThreadID, err)
	}
	return out, nil
}

// commitFinish commits sp (its messages put), adds d to the session's
// counters and, when the turn still holds the lease, releases it, all in
// one UpdateItem built from meta, the meta item as the reservation of sp
// left it. It reports done = false, having written nothing, when meta
// shows that the write cannot succeed (an earlier append not committed,
// the meta item without msg_committed) or when its condition failed;
// the caller then commits as an append does.
func (s *Store) commitFinish(ctx context.Context, k store.Key, owner string, sp span, meta item, d store.TurnStats, title string) (done bool, err error) {
	c, err := commitFromItem(meta)
	if err != nil || c.seq != sp.first-1 || !c.counted || sp.use != sp.first {
		return false, nil
	}
	e := newExpr()
	e.set(aMsgSeq, avN(sp.last))
	e.add(aMsgCommitted, avN(sp.last-sp.use+1))
	cond := e.n(aMsgEpoch) + " = " + e.v(avS(sp.epoch)) +
		" AND " + e.n(aMsgSeq) + " = " + e.v(avN(sp.first-1)) +
		" AND attribute_exists(" + e.n(aMsgCommitted) + ")"
	cond += " AND " + s.statsReleaseClauses(e, k, owner, d, endStateOf(meta, owner, title))
	err = s.updateLease(ctx, k, e, cond)
	if err == nil {
		return true, nil
	}
	// Failed, or applied with its answer lost: only this write commits
	// sp, so the marker over sp tells.
	after, rerr := s.readCommit(ctx, k)
	switch {
	case rerr == nil && after.epoch == sp.epoch && after.seq >= sp.last && !after.voided(sp.last):
		return true, nil
	case isConditionFailed(err):
		return false, nil
	case rerr != nil:
		err = errors.Join(err, rerr)
	}
	s.abandon(ctx, k, sp)
	return false, fmt.Errorf("commit the answer: %w", err)
}

// statsAndRelease adds d to the session's counters, releases owner's
// lease and sets title (when not empty) as a generated title, in one
// UpdateItem (as AddTurnStats, ReleaseLease and SetGeneratedTitle would in
// three). meta, when known, is a recent state of the meta item, for its
// pinned flag, lease holder and the user's naming; a failed condition
// reads them again.
func (s *Store) statsAndRelease(ctx context.Context, k store.Key, owner string, d store.TurnStats, title string, meta item) error {
	st := endStateOf(meta, owner, title)
	for range maxUpdateAttempts {
		e := newExpr()
		err := s.updateLease(ctx, k, e, s.statsReleaseClauses(e, k, owner, d, st))
		if err == nil {
			return nil
		}
		if !isConditionFailed(err) {
			return fmt.Errorf("write the turn's statistics: %w", err)
		}
		cur, err := s.readMeta(ctx, k, aPinned, aLeaseOwner, aTitleByUser)
		if err != nil {
			return fmt.Errorf("write the turn's statistics: %w", err)
		}
		st = endStateOf(cur, owner, title)
	}
	return fmt.Errorf("write the turn's statistics: gave up after %d concurrent modifications", maxUpdateAttempts)
}

// endState is what the write that ends a turn rests on: the session's
// pinned flag (its GSI1 sort key), whether the turn still holds the lease
// (then released), and the generated title to set ("" for none).
type endState struct {
	pinned, release bool
	title           string
}

// endStateOf is the end of owner's turn as the meta item meta tells it
// (nil: not known, taken as not pinned, the lease owner's, no user's
// name): title is set unless the user named the session, since a
// generated title never replaces the user's.
func endStateOf(meta item, owner, title string) endState {
	if getBool(meta, aTitleByUser) {
		title = ""
	}
	return endState{pinned: getBool(meta, aPinned), release: meta == nil || getS(meta, aLeaseOwner) == owner, title: title}
}

// statsReleaseClauses adds to e what AddTurnStats writes (the counters,
// updated_at and the GSI1 sort key of a session pinned or not) and, as st
// says, the removal of owner's lease and the generated title; it returns
// the condition they rest on beside the session's owner (which
// updateLease adds).
func (s *Store) statsReleaseClauses(e *expr, k store.Key, owner string, d store.TurnStats, st endState) string {
	addTurnStats(e, d)
	t := now()
	e.set(aUpdatedAt, avS(fmtTime(t)))
	e.set(attrGSI1SK, avS(sessionGSI1SK(k.UserID, st.pinned, t, k.ThreadID)))
	cond := e.n(aPinned) + " = " + e.v(avBool(st.pinned))
	if st.release {
		e.remove(aLeaseOwner)
		e.remove(aLeaseUntil)
		cond += " AND " + e.n(aLeaseOwner) + " = " + e.v(avS(owner))
	}
	if st.title != "" {
		e.set(aTitle, avS(st.title))
		cond += " AND " + e.n(aTitleByUser) + " = " + e.v(avBool(false))
	}
	return cond
}

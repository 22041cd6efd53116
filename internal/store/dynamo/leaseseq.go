package dynamo

import (
	"context"
	"slices"

	"agentchat/internal/store"
)

// The first seq of a turn, reserved with its lease
//
// A turn appends its user message first (the agent does it beside the
// first LLM call), and an append's first request reserves its seqs (step 1
// of the append protocol, messages.go). The update that takes a session's
// lease (AcquireLease), or the put that creates a leased session, reserves
// one seq as well, and the store keeps it (leaseSeqs, by partition: a
// session has one lease holder at a time): the next append of one message
// to the session in this process writes at that seq instead of
// reserving, a write less per turn.
//
// A reserved seq must be committed or voided, or later appends wait for it
// until the stall timeout. So an append of several messages voids it
// first, and FinishTurn and ReleaseLease void a seq left unused (abandon):
// a write only for turns that stored nothing. An AcquireLease while the
// session's seq is unused reserves nothing more, and a deletion of the
// session forgets it. A lease of the creating turn that lands after the
// session's creation (store's composed opening sends both at once)
// reserves a second seq beside the creation's: both are kept, the lower
// used first, the other voided at the end. A process that dies holding an
// unused seq leaves it to the stall timeout, as a process that dies within
// an append leaves its range; the window is about as short, from the
// lease to the user message.

// leaseSeq is a seq reserved with a lease, in the session's incarnation
// epoch.
type leaseSeq struct {
	epoch string
	seq   int64
}

// leaseSeqKey is the key of a session's entry in leaseSeqs.
func leaseSeqKey(k store.Key) string { return sessionPK(k.ProjectID, k.ThreadID) }

// leaseSeqs holds the unused seqs reserved with the leases of running
// turns, by session, lowest first: usually one, but a lease taken by the
// turn that created the session, landing after the creation (store's
// composed opening sends both at once), reserves a second. At most
// turnCacheMax sessions (any one is forgotten to make room: its seqs are
// then left to the stall timeout); safe for concurrent use.
type leaseSeqs struct{ c turnCache[pendingSeqs] }

// pendingSeqs are a session's unused seqs of one incarnation.
type pendingSeqs struct {
	epoch string
	seqs  []int64
}

// holds reports whether the session has an unused seq.
func (l *leaseSeqs) holds(key string) bool {
	_, ok := l.c.get(key)
	return ok
}

// add keeps seq, reserved in epoch; the seqs of another epoch (an
// incarnation deleted meanwhile) are forgotten.
func (l *leaseSeqs) add(key, epoch string, seq int64) {
	l.c.update(key, func(p pendingSeqs, ok bool) (pendingSeqs, bool) {
		if !ok || p.epoch != epoch {
			p = pendingSeqs{epoch: epoch}
		}
		p.seqs = append(slices.Clone(p.seqs), seq)
		slices.Sort(p.seqs)
		return p, true
	})
}

// take returns, and forgets, the session's lowest unused seq.
func (l *leaseSeqs) take(key string) (ls leaseSeq, ok bool) {
	l.c.update(key, func(p pendingSeqs, found bool) (pendingSeqs, bool) {
		if !found {
			return p, false
		}
		ls, ok = leaseSeq{epoch: p.epoch, seq: p.seqs[0]}, true
		p.seqs = p.seqs[1:]
		return p, len(p.seqs) > 0
	})
	return ls, ok
}

// dropUnless forgets the session's unused seqs unless they are of epoch.
func (l *leaseSeqs) dropUnless(key, epoch string) {
	l.c.update(key, func(p pendingSeqs, ok bool) (pendingSeqs, bool) { return p, ok && p.epoch == epoch })
}

// drop forgets the session's unused seqs.
func (l *leaseSeqs) drop(key string) { l.c.drop(key) }

// appendAtLeaseSeq appends out (prepared) at ls: one message is written at
// it and committed (steps 2 and 3 of the protocol, with no reservation);
// several void it and take the whole protocol, as does a message whose
// key holds a stray item.
func (s *Store) appendAtLeaseSeq(ctx context.Context, k store.Key, ls leaseSeq, out []store.Message) ([]store.Message, error) {
	sp := span{epoch: ls.epoch, first: ls.seq, use: ls.seq, last: ls.seq}
	if len(out) > 1 {
		s.abandon(ctx, k, sp)
		return s.appendPrepared(ctx, k, out)
	}
	conflict, err := s.writeSpan(ctx, k, sp, out)
	if err != nil {
		return nil, err
	}
	if conflict {
		if err := s.settle(ctx, k, sp, true); err != nil {
			return nil, err
		}
		return s.appendPrepared(ctx, k, out)
	}
	if err := s.settle(ctx, k, sp, false); err != nil {
		return nil, err
	}
	return out, nil
}

// voidLeaseSeq voids the seqs reserved with k's lease that are unused,
// lowest first (each is voided once the one before is settled).
func (s *Store) voidLeaseSeq(ctx context.Context, k store.Key) {
	for {
		ls, ok := s.leaseSeqs.take(leaseSeqKey(k))
		if !ok {
			return
		}
		s.abandon(ctx, k, span{epoch: ls.epoch, first: ls.seq, use: ls.seq, last: ls.seq})
	}
}

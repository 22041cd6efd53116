package dynamo

import (
	"context"

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
// session forgets it. A process that dies holding an unused seq leaves it
// to the stall timeout, as a process that dies within an append leaves
// its range; the window is the same, from the lease to the user message.

// leaseSeq is the seq reserved with a lease, in the session's incarnation
// epoch.
type leaseSeq struct {
	epoch string
	seq   int64
}

// leaseSeqKey is the key of a session's entry in leaseSeqs.
func leaseSeqKey(k store.Key) string { return sessionPK(k.ProjectID, k.ThreadID) }

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

// voidLeaseSeq voids the seq reserved with k's lease if it is unused.
func (s *Store) voidLeaseSeq(ctx context.Context, k store.Key) {
	if ls, ok := s.leaseSeqs.take(leaseSeqKey(k)); ok {
		s.abandon(ctx, k, span{epoch: ls.epoch, first: ls.seq, use: ls.seq, last: ls.seq})
	}
}

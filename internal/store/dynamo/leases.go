package dynamo

import (
	"context"
	"errors"
	"fmt"
	"github.com/google/uuid"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"agentchat/internal/store"
)

// updateLease runs one conditional UpdateItem on the meta item; cond is
// ANDed with the ownership check.
func (s *Store) updateLease(ctx context.Context, k store.Key, e *expr, cond string) error {
	_, err := s.updateLeaseReturning(ctx, k, e, cond, "", "")
	return err
}

// updateLeaseReturning is updateLease asking DynamoDB to return the item
// with a failed condition when rv is ALL_OLD (in the
// ConditionalCheckFailedException; emulators may not).
// rv asks for the updated attributes on success (UPDATED_NEW, ...).
func (s *Store) updateLeaseReturning(ctx context.Context, k store.Key, e *expr, cond string, rvFailure types.ReturnValuesOnConditionCheckFailure, rv types.ReturnValue) (item, error) {
	full := e.n(aUser) + " = " + e.v(avS(k.UserID))
	if cond != "" {
		full += " AND (" + cond + ")"
	}
	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(s.table),
		Key:                                 keyOf(sessionPK(k.ProjectID, k.ThreadID), metaSK),
		UpdateExpression:                    aws.String(e.update()),
		ConditionExpression:                 aws.String(full),
		ExpressionAttributeNames:            e.names,
		ExpressionAttributeValues:           e.values,
		ReturnValuesOnConditionCheckFailure: rvFailure,
		ReturnValues:                        rv,
	})
	if err != nil {
		return nil, err
	}
	return out.Attributes, nil
}

func checkLeaseArgs(owner string, ttl time.Duration) error {
	if owner == "" {
		return errors.New("empty lease owner")
	}
	if ttl <= 0 {
		return fmt.Errorf("lease ttl %v is not positive", ttl)
	}
	return nil
}

// AcquireLease implements store.Leases: one conditional update that takes
// a free, expired or own lease, or one whose holder ignored an abort
// requested more than store.AbortGrace ago, and clears the abort flag.
func (s *Store) AcquireLease(ctx context.Context, k store.Key, owner string, ttl time.Duration) error {
	_, err := s.acquireLease(ctx, k, owner, ttl, types.ReturnValueUpdatedNew, nil)
	return err
}

// acquireLease is AcquireLease returning what its update returns of the
// meta item: rv UPDATED_NEW the attributes it set, ALL_NEW the whole
// item as the lease left it (OpenTurn reads the session and its commit
// state from it). When the lease is refused and DynamoDB returns no item
// with the failure, unseen (when not nil) may say that the session was not
// seen by a read beside (OpenTurnOrGuess): ErrNotFound then, without the
// meta item's read that tells for sure.
func (s *Store) acquireLease(ctx context.Context, k store.Key, owner string, ttl time.Duration, rv types.ReturnValue, unseen func() bool) (item, error) {
	if err := checkKey(k); err != nil {
		return nil, fmt.Errorf("acquire lease: %w", err)
	}
	if err := checkLeaseArgs(owner, ttl); err != nil {
		return nil, fmt.Errorf("acquire lease on %s: %w", k.ThreadID, err)
	}
	t := s.clock()
	pk := sessionPK(k.ProjectID, k.ThreadID)
	e := newExpr()
	// The turn's first seq (leaseseq.go), unless the session has an
	// unused one.
	holds := s.leaseSeqs.holds(leaseSeqKey(k))
	if !holds {
		e.add(aMsgReserved, avN(1))
	}
	e.set(aLeaseOwner, avS(owner))
	e.set(aLeaseUntil, avN(t.Add(ttl).UnixNano()))
	e.remove(aAbort)
	e.remove(aAbortAt)
	reconcileMessageCount(e) // count what a cut turn left uncounted (sessions.go)
	// The incarnation's epoch, given if it has none yet (as an append or a
	// deletion would), comes back with the lease: the turn's log needs no
	// read for it (turnEpochs).
	ep := e.n(aMsgEpoch)
	e.setRaw(ep + " = if_not_exists(" + ep + ", " + e.v(avS(uuid.NewString())) + ")")
	lo, lu, ab, at := e.n(aLeaseOwner), e.n(aLeaseUntil), e.n(aAbort), e.n(aAbortAt)
	cond := "attribute_not_exists(" + lo + ") OR " + lo + " = " + e.v(avS(owner)) + " OR " + lu + " < " + e.v(avN(t.UnixNano())) +
		" OR (" + ab + " = " + e.v(avBool(true)) + " AND " + at + " <= " + e.v(avN(t.Add(-store.AbortGrace).UnixNano())) + ")"
	updated, err := s.updateLeaseReturning(ctx, k, e, cond, types.ReturnValuesOnConditionCheckFailureAllOld, rv)
	if err == nil {
		epoch := getS(updated, aMsgEpoch)
		if epoch == "" { // not returned (unchanged): read it
			c, err := s.readCommit(ctx, k)
			if err != nil {
				return nil, fmt.Errorf("acquire lease on %s: %w", k.ThreadID, err)
			}
			epoch = c.epoch
		}
		s.turnEpochs.put(turnEpochKey(pk, owner), epoch)
		if !holds {
			seq, err := getN(updated, aMsgReserved)
			if err != nil || seq < 1 {
				return nil, fmt.Errorf("acquire lease on %s: the seq reserved with it was not returned (%v)", k.ThreadID, err)
			}
			// Beside a seq reserved meanwhile by the session's creation,
			// if this lease landed after it (see leaseSeqs).
			s.leaseSeqs.add(leaseSeqKey(k), epoch, seq)
		} else {
			// Those of an incarnation deleted by another process are void
			// there already.
			s.leaseSeqs.dropUnless(leaseSeqKey(k), epoch)
		}
		return updated, nil
	}
	var cf *types.ConditionalCheckFailedException
	if !errors.As(err, &cf) {
		return nil, fmt.Errorf("acquire lease on %s: %w", k.ThreadID, err)
	}
	// The item that failed the condition tells who holds the lease until
	// when. DynamoDB returns it with the failure; without it (no such
	// item, or an emulator that does not return it) read the meta item.
	old := cf.Item
	if old == nil && unseen != nil && unseen() {
		// No item came back with the failure, and what was read beside
		// the lease saw nothing of the session: taken for missing
		// (OpenTurnOrGuess).
		return nil, fmt.Errorf("acquire lease: session %s: %w", k.ThreadID, store.ErrNotFound)
	}
	if old == nil || getS(old, aUser) != k.UserID {
		if old, err = s.readMeta(ctx, k, aLeaseOwner, aLeaseUntil, aAbort, aAbortAt); err != nil {
			return nil, fmt.Errorf("acquire lease: %w", err)
		}
	}
	held, err := leaseHeld(old)
	if err != nil {
		return nil, fmt.Errorf("acquire lease on %s: %w", k.ThreadID, err)
	}
	return nil, fmt.Errorf("acquire lease on %s: %w", k.ThreadID, held)
}

// leaseHeld is the *store.LeaseHeldError of the meta item it, whose lease
// refused an acquisition: held until lease_until, or until the abort grace
// of a pending abort ends when that comes first.
func leaseHeld(it item) (*store.LeaseHeldError, error) {
	until, err := getN(it, aLeaseUntil)
	if err != nil {
		return nil, fmt.Errorf("read the held lease: %w", err)
	}
	free := until
	if getBool(it, aAbort) {
		at, err := getN(it, aAbortAt)
		if err != nil {
			return nil, fmt.Errorf("read the held lease: %w", err)
		}
		if at > 0 {
			free = min(free, at+int64(store.AbortGrace))
		}
	}
	return &store.LeaseHeldError{Until: time.Unix(0, free).UTC(), Owner: getS(it, aLeaseOwner)}, nil
}

// RenewLease implements store.Leases. A lease that expired but that nobody
// took is still the owner's and is renewed.
func (s *Store) RenewLease(ctx context.Context, k store.Key, owner string, ttl time.Duration) error {
	if err := checkKey(k); err != nil {
		return fmt.Errorf("renew lease: %w", err)
	}
	if err := checkLeaseArgs(owner, ttl); err != nil {
		return fmt.Errorf("renew lease on %s: %w", k.ThreadID, err)
	}
	e := newExpr()
	e.set(aLeaseUntil, avN(s.clock().Add(ttl).UnixNano()))
	err := s.updateLease(ctx, k, e, e.n(aLeaseOwner)+" = "+e.v(avS(owner)))
	if err == nil {
		return nil
	}
	if !isConditionFailed(err) {
		return fmt.Errorf("renew lease on %s: %w", k.ThreadID, err)
	}
	if _, err := s.readMeta(ctx, k); err != nil {
		return fmt.Errorf("renew lease: %w", err)
	}
	return fmt.Errorf("renew lease on %s: %w", k.ThreadID, store.ErrLeaseLost)
}

// ReleaseLease implements store.Leases.
func (s *Store) ReleaseLease(ctx context.Context, k store.Key, owner string) error {
	if checkKey(k) != nil || owner == "" {
		return nil
	}
	s.voidLeaseSeq(ctx, k)
	e := newExpr()
	e.remove(aLeaseOwner)
	e.remove(aLeaseUntil)
	err := s.updateLease(ctx, k, e, e.n(aLeaseOwner)+" = "+e.v(avS(owner)))
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("release lease on %s: %w", k.ThreadID, err)
	}
	return nil
}

// RequestAbort implements store.Leases: abort_at keeps the time of the
// first pending request (AcquireLease removes it with the flag).
func (s *Store) RequestAbort(ctx context.Context, k store.Key) error {
	if err := checkKey(k); err != nil {
		return fmt.Errorf("request abort: %w", err)
	}
	e := newExpr()
	e.set(aAbort, avBool(true))
	at := e.n(aAbortAt)
	e.setRaw(at + " = if_not_exists(" + at + ", " + e.v(avN(s.clock().UnixNano())) + ")")
	err := s.updateLease(ctx, k, e, "")
	if isConditionFailed(err) {
		return fmt.Errorf("request abort: session %s: %w", k.ThreadID, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("request abort on %s: %w", k.ThreadID, err)
	}
	return nil
}

// AbortRequested implements store.Leases with a strongly consistent read.
func (s *Store) AbortRequested(ctx context.Context, k store.Key) (bool, error) {
	it, err := s.readMeta(ctx, k, aAbort)
	if err != nil {
		return false, fmt.Errorf("abort requested: %w", err)
	}
	return getBool(it, aAbort), nil
}

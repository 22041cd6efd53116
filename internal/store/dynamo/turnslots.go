package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"agentchat/internal/store"
)

// A turn slot (store.TurnSlots) is one item in the user's partition:
//
//	turn slot  PK=U#{user}  SK=TURNSLOT#{slot:04d}  (owner, expires_at, ttl)
//
// It carries the owner, the expiry (unix nanoseconds, the attributes of
// the device locks) and the table's TTL attribute, so that DynamoDB
// eventually deletes the slots of users who stopped chatting.

// turnSlotPrefix starts the sort key of every turn slot item.
const turnSlotPrefix = "TURNSLOT#"

// turnSlotTTLMargin is how long after its expiry a slot item becomes
// eligible for deletion by the table's TTL (an expired slot is free
// anyway, so a late deletion changes nothing).
const turnSlotTTLMargin = time.Hour

func turnSlotSK(slot int) string { return fmt.Sprintf("%s%04d", turnSlotPrefix, slot) }

// slotHolder is the state of a slot item as read back.
type slotHolder struct {
	owner   string
	expires int64 // unix nanoseconds
}

// AcquireTurnSlot implements store.TurnSlots. It tries the owner's first
// slot with one conditional PutItem (absent, expired or owner's); when
// that is taken it reads the user's slots with one Query and tries the
// ones it saw free, in order, each with the same conditional put. So a
// turn usually costs one write, and a refusal one write and one read.
func (s *Store) AcquireTurnSlot(ctx context.Context, userID, owner string, n int, ttl time.Duration) (int, error) {
	if err := store.CheckTurnSlotArgs(userID, owner, n, ttl); err != nil {
		return 0, fmt.Errorf("acquire turn slot of user %s: %w", userID, err)
	}
	t := s.clock()
	first := store.FirstTurnSlot(owner, n)
	ok, _, err := s.putTurnSlot(ctx, userID, first, owner, t, ttl)
	if err != nil {
		return 0, fmt.Errorf("acquire turn slot of user %s: %w", userID, err)
	}
	if ok {
		return first, nil
	}
	held, err := s.turnSlots(ctx, userID)
	if err != nil {
		return 0, fmt.Errorf("acquire turn slot of user %s: %w", userID, err)
	}
	now := t.UnixNano()
	earliest := int64(math.MaxInt64)
	for j := 1; j <= n; j++ {
		i := (first + j) % n // the first slot last: it was just taken
		if h, ok := held[i]; ok && h.owner != owner && h.expires > now {
			earliest = min(earliest, h.expires)
			continue
		}
		ok, until, err := s.putTurnSlot(ctx, userID, i, owner, t, ttl)
		if err != nil {
			return 0, fmt.Errorf("acquire turn slot of user %s: %w", userID, err)
		}
		if ok {
			return i, nil
		}
		if until > 0 {
			earliest = min(earliest, until)
		}
	}
	if earliest == math.MaxInt64 {
		// Every slot seen free was taken meanwhile by a turn whose expiry
		// the failed put did not return (emulators): it ends in ttl at
		// the latest unless renewed.
		earliest = t.Add(ttl).UnixNano()
	}
	return 0, fmt.Errorf("acquire turn slot of user %s: %w", userID,
		&store.TurnSlotsFullError{Slots: n, Until: time.Unix(0, earliest).UTC()})
}

// putTurnSlot writes the slot for owner until t+ttl when it is absent,
// owner's or expired at t. When another owner holds it, ok is false and
// until is that holder's expiry when DynamoDB returned the item (0 when
// not known).
func (s *Store) putTurnSlot(ctx context.Context, userID string, slot int, owner string, t time.Time, ttl time.Duration) (ok bool, until int64, err error) {
	exp := t.Add(ttl)
	it := keyOf(userPK(userID), turnSlotSK(slot))
	it[aLockOwner] = avS(owner)
	it[aExpiresAt] = avN(exp.UnixNano())
	it[aTTL] = avN(exp.Add(turnSlotTTLMargin).Unix() + 1)
	e := newExpr()
	cond := "attribute_not_exists(" + e.n(attrPK) + ") OR " + e.n(aLockOwner) + " = " + e.v(avS(owner)) +
		" OR " + e.n(aExpiresAt) + " <= " + e.v(avN(t.UnixNano()))
	_, err = s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                           aws.String(s.table),
		Item:                                it,
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            e.names,
		ExpressionAttributeValues:           e.values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		return true, 0, nil
	}
	var cf *types.ConditionalCheckFailedException
	if !errors.As(err, &cf) {
		return false, 0, fmt.Errorf("put slot %d: %w", slot, err)
	}
	if cf.Item != nil {
		if until, err = getN(cf.Item, aExpiresAt); err != nil {
			return false, 0, fmt.Errorf("slot %d: %w", slot, err)
		}
	}
	return false, until, nil
}

// turnSlots reads every slot item of the user, by slot number.
func (s *Store) turnSlots(ctx context.Context, userID string) (map[int]slotHolder, error) {
	held := map[int]slotHolder{}
	var start item
	for {
		out, err := s.client.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :sk)"),
			ProjectionExpression:      aws.String("#sk, #o, #e"),
			ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK, "#o": aLockOwner, "#e": aExpiresAt},
			ExpressionAttributeValues: item{":pk": avS(userPK(userID)), ":sk": avS(turnSlotPrefix)},
			ConsistentRead:            aws.Bool(true),
			ExclusiveStartKey:         start,
		})
		if err != nil {
			return nil, fmt.Errorf("read turn slots: %w", err)
		}
		for _, it := range out.Items {
			sk := getS(it, attrSK)
			slot, err := strconv.Atoi(strings.TrimPrefix(sk, turnSlotPrefix))
			if err != nil {
				return nil, fmt.Errorf("turn slot item %q: %w", sk, err)
			}
			exp, err := getN(it, aExpiresAt)
			if err != nil {
				return nil, fmt.Errorf("turn slot item %q: %w", sk, err)
			}
			held[slot] = slotHolder{owner: getS(it, aLockOwner), expires: exp}
		}
		if start = out.LastEvaluatedKey; start == nil {
			return held, nil
		}
	}
}

// RenewTurnSlot implements store.TurnSlots with one UpdateItem conditioned
// on the owner.
func (s *Store) RenewTurnSlot(ctx context.Context, userID string, slot int, owner string, ttl time.Duration) error {
	if err := store.CheckTurnSlotArgs(userID, owner, slot+1, ttl); err != nil {
		return fmt.Errorf("renew turn slot %d of user %s: %w", slot, userID, err)
	}
	exp := s.clock().Add(ttl)
	e := newExpr()
	e.set(aExpiresAt, avN(exp.UnixNano()))
	e.set(aTTL, avN(exp.Add(turnSlotTTLMargin).Unix()+1))
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(userPK(userID), turnSlotSK(slot)),
		UpdateExpression:          aws.String(e.update()),
		ConditionExpression:       aws.String(e.n(aLockOwner) + " = " + e.v(avS(owner))),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	})
	if isConditionFailed(err) {
		return fmt.Errorf("renew turn slot %d of user %s: %w", slot, userID, store.ErrLeaseLost)
	}
	if err != nil {
		return fmt.Errorf("renew turn slot %d of user %s: %w", slot, userID, err)
	}
	return nil
}

// ReleaseTurnSlot implements store.TurnSlots with a DeleteItem conditioned
// on the owner; a failed condition is the no-op of the contract.
func (s *Store) ReleaseTurnSlot(ctx context.Context, userID string, slot int, owner string) error {
	if userID == "" || owner == "" || slot < 0 {
		return nil // such a slot cannot be held
	}
	e := newExpr()
	_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(userPK(userID), turnSlotSK(slot)),
		ConditionExpression:       aws.String(e.n(aLockOwner) + " = " + e.v(avS(owner))),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("release turn slot %d of user %s: %w", slot, userID, err)
	}
	return nil
}

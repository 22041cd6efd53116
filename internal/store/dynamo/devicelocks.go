package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"agentchat/internal/store"
)

// Attributes of the device lock item.
const (
	aNode      = "node_id"
	aLockOwner = "owner"
	aExpiresAt = "expires_at" // unix nanoseconds
	// aTTL is the table's TimeToLiveSpecification attribute (epoch
	// seconds): DynamoDB deletes an item some time after it. Only device
	// locks and turn slots carry it.
	aTTL = "ttl"
)

// deviceLockTTLMargin is how long after its expiry a device lock item
// becomes eligible for deletion by the table's TTL. The margin keeps the
// background deletion well away from a renewal (an expired lock is free
// anyway, so a late deletion changes nothing).
const deviceLockTTLMargin = time.Hour

func deviceLockPK(project, node string) string {
	return "P#" + esc(project) + "#DEV#" + esc(node)
}

const deviceLockSK = "LOCK"

// checkDeviceLockArgs rejects the arguments that name no lock or no
// holder.
func checkDeviceLockArgs(projectID, nodeID, owner string) error {
	switch {
	case projectID == "":
		return errors.New("empty project id")
	case nodeID == "":
		return errors.New("empty node id")
	case owner == "":
		return errors.New("empty owner")
	}
	return nil
}

// AcquireDeviceLock implements store.DeviceLocks with one conditional
// PutItem of the lock item, which succeeds when the item does not exist,
// is the owner's, or has expired.
func (s *Store) AcquireDeviceLock(ctx context.Context, projectID, nodeID, owner string, ttl time.Duration) error {
	if err := checkDeviceLockArgs(projectID, nodeID, owner); err != nil {
		return fmt.Errorf("acquire lock of device %s in project %s: %w", nodeID, projectID, err)
	}
	if ttl <= 0 {
		return fmt.Errorf("acquire lock of device %s in project %s: lease ttl %v is not positive", nodeID, projectID, ttl)
	}
	t := s.clock()
	until := t.Add(ttl)
	it := keyOf(deviceLockPK(projectID, nodeID), deviceLockSK)
	it[aProject] = avS(projectID)
	it[aNode] = avS(nodeID)
	it[aLockOwner] = avS(owner)
	it[aExpiresAt] = avN(until.UnixNano())
	it[aTTL] = avN(until.Add(deviceLockTTLMargin).Unix() + 1)
	e := newExpr()
	cond := "attribute_not_exists(" + e.n(attrPK) + ") OR " + e.n(aLockOwner) + " = " + e.v(avS(owner)) +
		" OR " + e.n(aExpiresAt) + " <= " + e.v(avN(t.UnixNano()))
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 aws.String(s.table),
		Item:                      it,
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	})
	if isConditionFailed(err) {
		return fmt.Errorf("acquire lock of device %s in project %s: %w", nodeID, projectID, store.ErrLeaseHeld)
	}
	if err != nil {
		return fmt.Errorf("acquire lock of device %s in project %s: %w", nodeID, projectID, err)
	}
	return nil
}

// ReleaseDeviceLock implements store.DeviceLocks with a DeleteItem
// conditioned on the owner; a failed condition (not held by owner, or no
// item) is the no-op of the contract.
func (s *Store) ReleaseDeviceLock(ctx context.Context, projectID, nodeID, owner string) error {
	if checkDeviceLockArgs(projectID, nodeID, owner) != nil {
		return nil // such a lock cannot be held
	}
	e := newExpr()
	_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(deviceLockPK(projectID, nodeID), deviceLockSK),
		ConditionExpression:       aws.String(e.n(aLockOwner) + " = " + e.v(avS(owner))),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("release lock of device %s in project %s: %w", nodeID, projectID, err)
	}
	return nil
}

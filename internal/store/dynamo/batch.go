package dynamo

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"agentchat/internal/store"
)

// Deletion of projects.
const (
	// deleteWorkers is the number of threads DeleteProject removes at once.
	deleteWorkers = 8
	// projectPageSize is the number of sessions read per GSI1 page by
	// DeleteProject.
	projectPageSize = 100
)

// deleteThread removes the incarnation of the session partition pk that
// holds its meta item now, as "Deletion" in the protocol comment of
// messages.go describes: learn (or fence) its epoch, delete its items one
// by one, each only if it is of that epoch, while the meta item holds it, delete the meta item (last, so that a cut-off
// removal is found again and resumed), then delete, one by one and only if
// they are of its epoch, the items that appends in flight wrote meanwhile.
// With user, the session must belong to that user. It returns an error
// wrapping store.ErrNotFound when there is no such meta item.
func (s *Store) deleteThread(ctx context.Context, pk, user string) error {
	s.leaseSeqs.drop(pk) // of the incarnation removed (leaseseq.go)
	page, err := s.queryThread(ctx, pk, nil)
	if err != nil {
		return err
	}
	// The meta item is the partition's first item (META sorts before MSG#
	// and TURN#).
	var meta item
	if len(page.Items) > 0 && getS(page.Items[0], attrSK) == metaSK {
		meta = page.Items[0]
	}
	if meta == nil || (user != "" && getS(meta, aUser) != user) {
		return fmt.Errorf("%s: %w", pk, store.ErrNotFound)
	}
	epoch := getS(meta, aMsgEpoch)
	if epoch == "" {
		// No append has reserved yet: give the incarnation its epoch, so
		// that appends reserving from now on stamp their items with it,
		// and read again.
		if epoch, err = s.fenceEpoch(ctx, pk, user); err != nil {
			return err
		}
		if page, err = s.queryThread(ctx, pk, nil); err != nil {
			return err
		}
	}
	held, err := s.clearIncarnation(ctx, pk, epoch, page)
	if err != nil || !held {
		return err // !held: a concurrent deletion removed this incarnation
	}
	e := newExpr()
	out, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(pk, metaSK),
		ConditionExpression:       aws.String(e.n(aMsgEpoch) + " = " + e.v(avS(epoch))),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
		ReturnValues:              types.ReturnValueAllOld,
	})
	if isConditionFailed(err) {
		return nil // deleted by a concurrent deletion (and maybe created again)
	}
	if err != nil {
		return fmt.Errorf("delete %s meta: %w", pk, err)
	}
	if getBool(out.Attributes, aCounted) {
		// Only the deletion that removed the meta item gets here.
		s.releaseSession(context.WithoutCancel(ctx), getS(out.Attributes, aUser))
	}
	return s.sweepThread(ctx, pk, epoch)
}

// fenceEpoch returns the epoch of the incarnation whose meta item is at pk
// (and belongs to user, if not empty), giving it one if it has none yet
// (step a of "Deletion").
func (s *Store) fenceEpoch(ctx context.Context, pk, user string) (string, error) {
	e := newExpr()
	ep := e.n(aMsgEpoch)
	e.setRaw(ep + " = if_not_exists(" + ep + ", " + e.v(avS(uuid.NewString())) + ")")
	cond := "attribute_exists(" + e.n(attrPK) + ")"
	if user != "" {
		cond += " AND " + e.n(aUser) + " = " + e.v(avS(user))
	}
	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(pk, metaSK),
		UpdateExpression:          aws.String(e.update()),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
		ReturnValues:              types.ReturnValueAllNew,
	})
	if isConditionFailed(err) {
		return "", fmt.Errorf("%s: %w", pk, store.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("fence %s: %w", pk, err)
	}
	epoch := getS(out.Attributes, aMsgEpoch)
	if epoch == "" {
		return "", fmt.Errorf("fence %s: the meta item has no %s", pk, aMsgEpoch)
	}
	return epoch, nil
}

// sweepThread is the clean-up pass after the meta item is deleted (step d
// of "Deletion"): it deletes the items of epoch (or of none) that appends
// in flight wrote meanwhile, each conditioned on its epoch, so that the
// items of a later incarnation of the thread id are left alone.
func (s *Store) sweepThread(ctx context.Context, pk, epoch string) error {
	var start item
	for {
		out, err := s.queryThread(ctx, pk, start)
		if err != nil {
			return err
		}
		var ours []item
		for _, it := range out.Items {
			if ep := getS(it, mEpoch); getS(it, attrSK) != metaSK && (ep == "" || ep == epoch) {
				ours = append(ours, it)
			}
		}
		if err := s.deleteEach(ctx, ours, ofEpoch(epoch)); err != nil {
			return err
		}
		start = out.LastEvaluatedKey
		if start == nil {
			return nil
		}
	}
}

// queryThread reads one page of the keys and epochs of the items of
// partition pk, ascending, and the owner on the meta item (strongly
// consistent).
func (s *Store) queryThread(ctx context.Context, pk string, start item) (*dynamodb.QueryOutput, error) {
	out, err := s.client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ProjectionExpression:      aws.String("#pk, #sk, #ep, #u"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK, "#ep": mEpoch, "#u": aUser},
		ExpressionAttributeValues: item{":pk": avS(pk)},
		ConsistentRead:            aws.Bool(true),
		ExclusiveStartKey:         start,
	})
	if err != nil {
		return nil, fmt.Errorf("list items of %s: %w", pk, err)
	}
	return out, nil
}

// metaHoldsEpoch reports whether the meta item of pk exists with epoch
// (strongly consistent).
func (s *Store) metaHoldsEpoch(ctx context.Context, pk, epoch string) (bool, error) {
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:                aws.String(s.table),
		Key:                      keyOf(pk, metaSK),
		ConsistentRead:           aws.Bool(true),
		ProjectionExpression:     aws.String("#ep"),
		ExpressionAttributeNames: map[string]string{"#ep": aMsgEpoch},
	})
	if err != nil {
		return false, fmt.Errorf("read %s meta: %w", pk, err)
	}
	return out.Item != nil && getS(out.Item, aMsgEpoch) == epoch, nil
}

// deleteEach deletes the items one by one (at most putConcurrency at once),
// each with the condition cond builds for it; an item whose condition
// fails is left alone.
func (s *Store) deleteEach(ctx context.Context, items []item, cond func(it item, e *expr) string) error {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	sem := make(chan struct{}, putConcurrency)
	for _, it := range items {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			e := newExpr()
			c := cond(it, e)
			_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
				TableName:                 aws.String(s.table),
				Key:                       keyOf(getS(it, attrPK), getS(it, attrSK)),
				ConditionExpression:       aws.String(c),
				ExpressionAttributeNames:  e.names,
				ExpressionAttributeValues: e.values,
			})
			if err == nil || isConditionFailed(err) {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if firstErr == nil {
				firstErr = fmt.Errorf("delete %s %s: %w", getS(it, attrPK), getS(it, attrSK), err)
			}
		})
	}
	wg.Wait()
	return firstErr
}

// DeleteProject implements store.Sessions: it pages through the project's
// sessions of every user on GSI1 and removes each thread (up to
// deleteWorkers at once), meta item last, so that running it again after a
// cut-off run finishes the job.
func (s *Store) DeleteProject(ctx context.Context, projectID string) error {
	if projectID == "" {
		return fmt.Errorf("delete project: empty project id")
	}
	var start item
	for {
		out, err := s.client.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			IndexName:                 aws.String(IndexGSI1),
			KeyConditionExpression:    aws.String("#g = :g"),
			ExpressionAttributeNames:  map[string]string{"#g": attrGSI1PK},
			ExpressionAttributeValues: item{":g": avS(projectGSI1PK(projectID))},
			Limit:                     aws.Int32(projectPageSize),
			ExclusiveStartKey:         start,
		})
		if err != nil {
			return fmt.Errorf("delete project %s: list sessions: %w", projectID, err)
		}
		pks := make([]string, 0, len(out.Items))
		for _, it := range out.Items {
			pks = append(pks, getS(it, attrPK))
		}
		if err := s.deleteThreads(ctx, pks); err != nil {
			return fmt.Errorf("delete project %s: %w", projectID, err)
		}
		start = out.LastEvaluatedKey
		if start == nil {
			return s.deleteProjectAudit(ctx, projectID)
		}
	}
}

// deleteThreads removes the threads with deleteWorkers workers and returns
// the first error.
func (s *Store) deleteThreads(ctx context.Context, pks []string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan string)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range min(deleteWorkers, len(pks)) {
		wg.Go(func() {
			for pk := range work {
				// No meta item: removed meanwhile (GSI1 lags).
				if err := s.deleteThread(ctx, pk, ""); err != nil && !errors.Is(err, store.ErrNotFound) {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
				}
			}
		})
	}
feed:
	for _, pk := range pks {
		select {
		case work <- pk:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

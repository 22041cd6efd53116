package dynamo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// BatchWriteItem limits and retry policy.
const (
	batchMaxItems = 25
	// batchMaxBytes keeps a request well under the 16 MB request limit.
	batchMaxBytes    = 8 << 20
	batchMaxAttempts = 10
	// deleteWorkers is the number of threads DeleteProject removes at once.
	deleteWorkers = 8
	// projectPageSize is the number of sessions read per GSI1 page by
	// DeleteProject.
	projectPageSize = 100
)

// batchWrite runs the write requests in BatchWriteItem calls of at most 25
// items, retrying unprocessed items with exponential backoff and jitter.
func (s *Store) batchWrite(ctx context.Context, reqs []types.WriteRequest) error {
	for len(reqs) > 0 {
		n, size := 0, 0
		for n < len(reqs) && n < batchMaxItems {
			sz := requestSize(reqs[n])
			if n > 0 && size+sz > batchMaxBytes {
				break
			}
			size += sz
			n++
		}
		if err := s.batchWriteChunk(ctx, reqs[:n]); err != nil {
			return err
		}
		reqs = reqs[n:]
	}
	return nil
}

// batchWriteChunk writes one chunk until nothing is left unprocessed.
func (s *Store) batchWriteChunk(ctx context.Context, chunk []types.WriteRequest) error {
	pending := chunk
	backoff := 20 * time.Millisecond
	for attempt := 1; ; attempt++ {
		out, err := s.client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
			RequestItems: map[string][]types.WriteRequest{s.table: pending},
		})
		if err != nil {
			return fmt.Errorf("batch write of %d items: %w", len(pending), err)
		}
		pending = out.UnprocessedItems[s.table]
		if len(pending) == 0 {
			return nil
		}
		if attempt >= batchMaxAttempts {
			return fmt.Errorf("batch write: %d items still unprocessed after %d attempts", len(pending), attempt)
		}
		if err := sleep(ctx, backoff/2+rand.N(backoff/2+1)); err != nil {
			return fmt.Errorf("batch write: %w", err)
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// requestSize estimates the bytes of a write request.
func requestSize(r types.WriteRequest) int {
	var it item
	switch {
	case r.PutRequest != nil:
		it = r.PutRequest.Item
	case r.DeleteRequest != nil:
		it = r.DeleteRequest.Key
	}
	n := 0
	for name, v := range it {
		n += len(name) + 8
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			n += len(v.Value)
		case *types.AttributeValueMemberB:
			n += len(v.Value) * 4 / 3 // base64 on the wire
		default:
			n += 64
		}
	}
	return n
}

// deleteThread removes every item of a session partition: the messages and
// parts first, the meta item last (so that a cut-off removal is found again
// and resumed), then any item an append racing with the removal wrote
// meanwhile.
func (s *Store) deleteThread(ctx context.Context, pk string) error {
	if err := s.deletePartition(ctx, pk, true); err != nil {
		return err
	}
	_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.table),
		Key:       keyOf(pk, metaSK),
	})
	if err != nil {
		return fmt.Errorf("delete %s meta: %w", pk, err)
	}
	return s.deletePartition(ctx, pk, false)
}

// deletePartition deletes the items of partition pk, page by page; with
// keepMeta the META item is left alone.
func (s *Store) deletePartition(ctx context.Context, pk string, keepMeta bool) error {
	var start item
	for {
		out, err := s.client.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			KeyConditionExpression:    aws.String("#pk = :pk"),
			ProjectionExpression:      aws.String("#pk, #sk"),
			ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK},
			ExpressionAttributeValues: item{":pk": avS(pk)},
			ConsistentRead:            aws.Bool(true),
			ExclusiveStartKey:         start,
		})
		if err != nil {
			return fmt.Errorf("list items of %s: %w", pk, err)
		}
		var reqs []types.WriteRequest
		for _, it := range out.Items {
			sk := getS(it, attrSK)
			if keepMeta && sk == metaSK {
				continue
			}
			reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: keyOf(pk, sk)}})
		}
		if err := s.batchWrite(ctx, reqs); err != nil {
			return fmt.Errorf("delete items of %s: %w", pk, err)
		}
		start = out.LastEvaluatedKey
		if start == nil {
			return nil
		}
	}
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
			return nil
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
				if err := s.deleteThread(ctx, pk); err != nil {
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

package dynamo

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"agentchat/internal/store"
)

// newAllOldStore returns a store on a fresh table whose client behaves as
// DynamoDB does and dynalite does not: a conditional write that fails with
// ReturnValuesOnConditionCheckFailure ALL_OLD returns the item in the
// ConditionalCheckFailedException (read here through a second client, so
// that the store's own requests are what ops records).
func newAllOldStore(t *testing.T) (*Store, *opLog) {
	t.Helper()
	opts := dynamodb.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String(endpoint),
	}
	raw := dynamodb.New(opts)
	table := "t-" + uuid.NewString()
	ops := &opLog{}
	opts.APIOptions = []func(*middleware.Stack) error{func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("allOld",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				op := awsmiddleware.GetOperationName(ctx)
				ops.add(op)
				// The item before the write, as DynamoDB would return it.
				var key item
				var rv types.ReturnValuesOnConditionCheckFailure
				switch p := in.Parameters.(type) {
				case *dynamodb.UpdateItemInput:
					key, rv = p.Key, p.ReturnValuesOnConditionCheckFailure
				case *dynamodb.PutItemInput:
					key, rv = keyOf(getS(p.Item, attrPK), getS(p.Item, attrSK)), p.ReturnValuesOnConditionCheckFailure
				}
				var before item
				if rv == types.ReturnValuesOnConditionCheckFailureAllOld {
					got, err := raw.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
					if err != nil {
						return middleware.InitializeOutput{}, middleware.Metadata{}, err
					}
					before = got.Item
				}
				out, md, err := next.HandleInitialize(ctx, in)
				var cf *types.ConditionalCheckFailedException
				if errors.As(err, &cf) && cf.Item == nil && before != nil {
					err = &types.ConditionalCheckFailedException{Message: cf.Message, Item: before}
				}
				return out, md, err
			}), middleware.After)
	}}
	s := NewFromClient(dynamodb.New(opts), table)
	createTable(t, s)
	return s, ops
}

// opLog records the operations a store sends.
type opLog struct {
	mu  sync.Mutex
	ops []string
}

func (l *opLog) add(op string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops = append(l.ops, op)
}

// take returns the operations recorded so far and forgets them.
func (l *opLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.ops
	l.ops = nil
	return out
}

// TestLeaseHeldFromFailedUpdate: a refused AcquireLease reads the
// holder's expiry from the item the failed conditional update returns, so
// the refusal costs that one request.
func TestLeaseHeldFromFailedUpdate(t *testing.T) {
	s, ops := newAllOldStore(t)
	now := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	s.clock = func() time.Time { return now }
	ctx := t.Context()
	k := store.Key{ProjectID: "p", UserID: "alice", ThreadID: uuid.NewString()}
	if err := s.CreateLeasedSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}, "A", time.Hour); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		setup func() error
		want  time.Time
	}{
		{"lease", func() error { return nil }, now.Add(time.Hour)},
		{"abort pending", func() error { return s.RequestAbort(ctx, k) }, now.Add(store.AbortGrace)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.setup(); err != nil {
				t.Fatal(err)
			}
			ops.take()
			err := s.AcquireLease(ctx, k, "B", time.Hour)
			var held *store.LeaseHeldError
			if !errors.As(err, &held) || !errors.Is(err, store.ErrLeaseHeld) {
				t.Fatalf("AcquireLease(B) = %v, want a *store.LeaseHeldError", err)
			}
			if !held.Until.Equal(tc.want) {
				t.Errorf("Until = %v, want %v", held.Until, tc.want)
			}
			if got := ops.take(); len(got) != 1 || got[0] != "UpdateItem" {
				t.Errorf("requests of a refused AcquireLease = %v, want [UpdateItem]", got)
			}
		})
	}
	// Another user's session is still not found (the returned item is not
	// theirs).
	other := store.Key{ProjectID: k.ProjectID, UserID: "bob", ThreadID: k.ThreadID}
	if err := s.AcquireLease(ctx, other, "B", time.Hour); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AcquireLease by another user = %v, want ErrNotFound", err)
	}
}

// TestTurnSlotRequests: a turn usually takes its slot with one PutItem;
// a refusal costs one more read (the user's slots), and the slot items
// carry the table's TTL attribute.
func TestTurnSlotRequests(t *testing.T) {
	s, ops := newAllOldStore(t)
	now := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	s.clock = func() time.Time { return now }
	ctx := t.Context()
	const n = 2
	ops.take()
	slot, err := s.AcquireTurnSlot(ctx, "alice#1", "A", n, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got := ops.take(); len(got) != 1 || got[0] != "PutItem" {
		t.Errorf("requests of a free first slot = %v, want [PutItem]", got)
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(userPK("alice#1"), turnSlotSK(slot)), ConsistentRead: aws.Bool(true),
	})
	if err != nil || out.Item == nil {
		t.Fatalf("read the slot item: %v %v", out, err)
	}
	if ttl, _ := getN(out.Item, aTTL); ttl != now.Add(time.Minute+turnSlotTTLMargin).Unix()+1 {
		t.Errorf("ttl attribute = %d, want the expiry plus %v", ttl, turnSlotTTLMargin)
	}
	if getS(out.Item, attrPK) != "U#alice%231" || getS(out.Item, aLockOwner) != "A" {
		t.Errorf("slot item = %v", out.Item)
	}
	ops.take()
	// Fill the other slot, then be refused.
	for {
		if _, err := s.AcquireTurnSlot(ctx, "alice#1", uuid.NewString(), n, 2*time.Minute); err == nil {
			break
		}
	}
	ops.take()
	_, err = s.AcquireTurnSlot(ctx, "alice#1", "C", n, time.Minute)
	var full *store.TurnSlotsFullError
	if !errors.As(err, &full) || !full.Until.Equal(now.Add(time.Minute)) {
		t.Fatalf("AcquireTurnSlot(C) = %v, want a *store.TurnSlotsFullError until %v", err, now.Add(time.Minute))
	}
	if got := ops.take(); len(got) != 2 || got[0] != "PutItem" || got[1] != "Query" {
		t.Errorf("requests of a refusal = %v, want [PutItem Query]", got)
	}
}

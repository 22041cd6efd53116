package dynamo

import (
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"agentchat/internal/store"
)

func TestDeviceLockPK(t *testing.T) {
	if got, want := deviceLockPK("p1", "n1"), "P#p1#DEV#n1"; got != want {
		t.Errorf("deviceLockPK = %q, want %q", got, want)
	}
	// Escaped components: no pair of ids forges another's key.
	if a, b := deviceLockPK("a#DEV#b", "c"), deviceLockPK("a", "b#DEV#c"); a == b {
		t.Errorf("deviceLockPK collision: %q", a)
	}
	if deviceLockPK("p", "t") == sessionPK("p", "t") {
		t.Error("a device lock key equals a session key")
	}
}

// TestDeviceLockItem checks the stored item: its key, owner, expiry and
// TTL attribute, kept by a refused acquisition and deleted by a release.
func TestDeviceLockItem(t *testing.T) {
	s := newTestStore(t)
	now := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	s.clock = func() time.Time { return now }
	ctx := t.Context()
	read := func() item {
		t.Helper()
		out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(s.table), Key: keyOf(deviceLockPK("p#1", "n1"), deviceLockSK), ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			t.Fatalf("GetItem: %v", err)
		}
		return out.Item
	}
	if err := s.AcquireDeviceLock(ctx, "p#1", "n1", "A", time.Minute); err != nil {
		t.Fatal(err)
	}
	it := read()
	until := now.Add(time.Minute)
	want := map[string]string{
		attrPK: "P#p%231#DEV#n1", attrSK: "LOCK", aProject: "p#1", aNode: "n1", aLockOwner: "A",
	}
	for a, v := range want {
		if got := getS(it, a); got != v {
			t.Errorf("%s = %q, want %q", a, got, v)
		}
	}
	if got, err := getN(it, aExpiresAt); err != nil || got != until.UnixNano() {
		t.Errorf("%s = %d, %v; want %d", aExpiresAt, got, err, until.UnixNano())
	}
	ttl, err := getN(it, aTTL)
	if err != nil || ttl <= until.Add(deviceLockTTLMargin).Unix() || ttl > until.Add(deviceLockTTLMargin).Unix()+1 {
		t.Errorf("%s = %d, %v; want about %d (epoch seconds, an hour after the expiry)", aTTL, ttl, err, until.Add(deviceLockTTLMargin).Unix())
	}
	if _, ok := it[attrGSI1PK]; ok {
		t.Error("the lock item is in GSI1")
	}

	if err := s.AcquireDeviceLock(ctx, "p#1", "n1", "B", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Errorf("B while A holds: %v, want ErrLeaseHeld", err)
	}
	if getS(read(), aLockOwner) != "A" {
		t.Error("a refused acquisition changed the item")
	}
	now = now.Add(30 * time.Second)
	if err := s.AcquireDeviceLock(ctx, "p#1", "n1", "A", time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, _ := getN(read(), aExpiresAt); got != now.Add(time.Minute).UnixNano() {
		t.Errorf("renewed expiry = %d, want %d", got, now.Add(time.Minute).UnixNano())
	}
	if err := s.ReleaseDeviceLock(ctx, "p#1", "n1", "B"); err != nil {
		t.Fatal(err)
	}
	if read() == nil {
		t.Fatal("a release by a non-owner deleted the item")
	}
	if err := s.ReleaseDeviceLock(ctx, "p#1", "n1", "A"); err != nil {
		t.Fatal(err)
	}
	if it := read(); it != nil {
		t.Errorf("after release the item is %v", it)
	}
}

package dynamo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/uuid"

	"agentchat/internal/store"
)

// isMetaDelete reports whether a request is the DeleteItem of a meta item.
func isMetaDelete(op string, in any) bool {
	d, ok := in.(*dynamodb.DeleteItemInput)
	return op == "DeleteItem" && ok && getS(d.Key, attrSK) == metaSK
}

// putItems writes items as they are (as an append in flight would).
func putItems(t *testing.T, s *Store, items []item) {
	t.Helper()
	for _, it := range items {
		if _, err := s.client.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: it}); err != nil {
			t.Fatalf("put %s: %v", getS(it, attrSK), err)
		}
	}
}

// threadItems returns the items of k's partition.
func threadItems(t *testing.T, s *Store, k store.Key) []item {
	t.Helper()
	var out []item
	for _, it := range scan(t, s) {
		if getS(it, attrPK) == sessionPK(k.ProjectID, k.ThreadID) {
			out = append(out, it)
		}
	}
	return out
}

// A session deleted and created again with the same thread id while the
// deletion is still running (paused by a hook at the worst moments) keeps
// its meta item and the messages it commits meanwhile; the old
// incarnation's items, stragglers of appends in flight included, are gone.
func TestDeleteRaceWithRecreate(t *testing.T) {
	large := func(tag string, size int) string { return tag + randomText(size) } // stored compressed to 4/5
	newBatches := [][]store.Message{
		{{Role: store.RoleUser, Content: "new-1"}, {Role: store.RoleTool, Content: large("new-2", 500<<10)}},
		{{Role: store.RoleAssistant, Content: "new-3"}},
	}
	oldSmall := []store.Message{
		{Role: store.RoleUser, Content: "old-1"},
		{Role: store.RoleTool, Content: large("old-2", 500<<10)},
		{Role: store.RoleAssistant, Content: "old-3"},
	}
	var oldLarge []store.Message // over 2 MB: the first pass reads 3 pages
	for i := range 4 {
		oldLarge = append(oldLarge, store.Message{Role: store.RoleTool, Content: large(fmt.Sprintf("old-%d", i+1), 860<<10)})
	}
	afterMetaDelete := func(op string, in any, done bool, err error) bool {
		return done && err == nil && isMetaDelete(op, in)
	}
	tests := []struct {
		name string
		old  []store.Message // the old session's messages
		// pause tells the point of the deletion, before (!done) or after
		// (done) a request, where it pauses while the window runs.
		pause func(op string, in any, done bool, err error) bool
		// straggle, if set, is called in the window with a function
		// writing items of the old incarnation; stragglersFirst runs it
		// before the session is created again, otherwise after its
		// appends.
		stragglersFirst bool
		straggle        func(put func(seq int64, content string))
		// otherDeletion deletes the old incarnation in the window first,
		// racing with the paused deletion.
		otherDeletion bool
	}{
		{
			name:  "stragglers of the old session land after the new appends",
			old:   oldSmall,
			pause: afterMetaDelete,
			straggle: func(put func(int64, string)) {
				put(4, large("old-straggler", 700<<10)) // a message item and two parts
				put(9, "old-straggler-2")
			},
		},
		{
			name:            "a straggler of the old session stands in the way of the new appends",
			old:             oldSmall,
			pause:           afterMetaDelete,
			stragglersFirst: true,
			straggle:        func(put func(int64, string)) { put(2, "old-straggler") },
		},
		{
			name: "another deletion of an old session without messages finished first",
			// After the fence of the epoch, before the first pass reads
			// the partition again.
			pause:         func(op string, _ any, done bool, err error) bool { return done && err == nil && op == "UpdateItem" },
			otherDeletion: true,
		},
		{
			name: "another deletion of a large old session finished between two pages",
			old:  oldLarge,
			// Before the first pass reads its second page.
			pause: func() func(op string, _ any, done bool, err error) bool {
				var queries atomic.Int64
				return func(op string, _ any, done bool, _ error) bool {
					return !done && op == "Query" && queries.Add(1) == 2
				}
			}(),
			otherDeletion: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			table := "t-" + uuid.NewString()
			var once sync.Once
			reached, release := make(chan struct{}), make(chan struct{})
			var freeOnce sync.Once
			free := func() { freeOnce.Do(func() { close(release) }) }
			pause := func(op string, in any, done bool, err error) {
				if tc.pause(op, in, done, err) {
					once.Do(func() {
						close(reached)
						<-release
					})
				}
			}
			deleter := newObservedStore(t, table,
				func(op string, in any) error { pause(op, in, false, nil); return nil },
				func(op string, in any, err error) { pause(op, in, true, err) })
			t.Cleanup(free)                                                           // runs before the table is dropped
			s, err := New(t.Context(), Options{TableName: table, Endpoint: endpoint}) // same table, no hook
			if err != nil {
				t.Fatal(err)
			}
			s.stallTimeout = time.Hour // a wait for a dead range would hang the test
			s.log = slog.New(slog.DiscardHandler)
			ctx := t.Context()
			k := createSession(t, s)
			pk := sessionPK(k.ProjectID, k.ThreadID)
			if _, err := s.AppendMessages(ctx, k, tc.old); err != nil {
				t.Fatal(err)
			}
			old, err := s.readCommit(ctx, k)
			if err != nil {
				t.Fatal(err)
			}

			deleted := make(chan error, 1)
			go func() { deleted <- deleter.DeleteSession(ctx, k) }()
			select {
			case <-reached:
			case err := <-deleted:
				t.Fatalf("DeleteSession ended (%v) without reaching the pause", err)
			}

			// The window: the deletion is paused.
			put := func(seq int64, content string) {
				items, err := messageItems(nil, pk, old.epoch, "old-writer",
					store.Message{Seq: seq, ID: uuid.NewString(), Role: store.RoleTool, Content: content, CreatedAt: now()})
				if err != nil {
					t.Fatal(err)
				}
				putItems(t, s, items)
			}
			if tc.otherDeletion {
				if err := s.DeleteSession(ctx, k); err != nil {
					t.Fatalf("the other DeleteSession: %v", err)
				}
			}
			if tc.straggle != nil && tc.stragglersFirst {
				tc.straggle(put)
			}
			if err := s.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID, Title: "again"}); err != nil {
				t.Fatalf("CreateSession again: %v", err)
			}
			var want []store.Message
			for _, b := range newBatches {
				got, err := s.AppendMessages(ctx, k, b)
				if err != nil {
					t.Fatalf("AppendMessages in the new session: %v", err)
				}
				want = append(want, got...)
			}
			if tc.straggle != nil && !tc.stragglersFirst {
				tc.straggle(put)
			}
			free()
			if err := <-deleted; err != nil {
				t.Fatalf("paused DeleteSession: %v", err)
			}

			sess, err := s.GetSession(ctx, k)
			if err != nil {
				t.Fatalf("GetSession of the new session: %v", err)
			}
			if sess.Title != "again" {
				t.Errorf("session title %q, want the new session's", sess.Title)
			}
			got, err := s.ListMessages(ctx, k, 0)
			if err != nil {
				t.Fatalf("ListMessages of the new session: %v", err)
			}
			if len(got) != len(want) {
				t.Fatalf("ListMessages: %d messages %.8q, want %d", len(got), contents(got), len(want))
			}
			for i := range got {
				if got[i].Seq != want[i].Seq || got[i].ID != want[i].ID || got[i].Content != want[i].Content {
					t.Errorf("message %d: seq %d, %.8q; want seq %d, %.8q", i, got[i].Seq, got[i].Content, want[i].Seq, want[i].Content)
				}
			}
			cur, err := s.readCommit(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if cur.epoch == old.epoch {
				t.Fatalf("the new session has the old epoch %s", old.epoch)
			}
			// Nothing of the old incarnation is left: every item is the new
			// session's.
			for _, it := range threadItems(t, s, k) {
				if ep := getS(it, mEpoch); ep != cur.epoch {
					t.Errorf("item %s left with epoch %q, want only the new session's %q", getS(it, attrSK), ep, cur.epoch)
				}
				if strings.HasPrefix(getS(it, mContent), "old") || strings.HasPrefix(string(getB(it, mBody)), `{"content":"old`) {
					t.Errorf("item %s of the old session is left", getS(it, attrSK))
				}
			}

			// And the new session is removed in full in turn.
			if err := s.DeleteSession(ctx, k); err != nil {
				t.Fatalf("DeleteSession of the new session: %v", err)
			}
			if left := threadItems(t, s, k); len(left) != 0 {
				t.Errorf("%d items left after deleting the new session, e.g. %s", len(left), getS(left[0], attrSK))
			}
		})
	}
}

// The first pass of a deletion (clearIncarnation) never deletes an item of
// a later incarnation, even from a page it read before the incarnation it
// removes was gone: here another deletion removes the session and the
// session is created again, with messages at the keys the stale page
// lists, between the page's read and its deletion. (The batch-deleting
// first pass it replaces, clearThread, loses messages of the new session here.)
func TestFirstPassSparesRecreatedSession(t *testing.T) {
	// Stored compressed to 4/5.
	large := func(tag string, size int) string { return tag + randomText(size) }
	var oldLarge []store.Message // over 2 MB: the partition reads in 3 pages
	for i := range 4 {
		oldLarge = append(oldLarge, store.Message{Role: store.RoleTool, Content: large(fmt.Sprintf("old-%d", i+1), 860<<10)})
	}
	for _, tc := range []struct {
		name string
		old  []store.Message
	}{
		{"one page", []store.Message{{Role: store.RoleUser, Content: "old-1"}, {Role: store.RoleTool, Content: large("old-2", 500<<10)}, {Role: store.RoleAssistant, Content: "old-3"}}},
		{"several pages", oldLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t)
			s.log = slog.New(slog.DiscardHandler)
			ctx := t.Context()
			k := createSession(t, s)
			pk := sessionPK(k.ProjectID, k.ThreadID)
			if _, err := s.AppendMessages(ctx, k, tc.old); err != nil {
				t.Fatal(err)
			}
			old, err := s.readCommit(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			page, err := s.queryThread(ctx, pk, nil) // read while the meta item holds the old epoch
			if err != nil {
				t.Fatal(err)
			}

			if err := s.DeleteSession(ctx, k); err != nil {
				t.Fatalf("the other DeleteSession: %v", err)
			}
			if err := s.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID, Title: "again"}); err != nil {
				t.Fatalf("CreateSession again: %v", err)
			}
			var want []store.Message
			for _, b := range [][]store.Message{
				{{Role: store.RoleUser, Content: "new-1"}, {Role: store.RoleTool, Content: large("new-2", 500<<10)}},
				{{Role: store.RoleAssistant, Content: "new-3"}},
			} {
				got, err := s.AppendMessages(ctx, k, b)
				if err != nil {
					t.Fatalf("AppendMessages in the new session: %v", err)
				}
				want = append(want, got...)
			}

			if _, err := s.clearIncarnation(ctx, pk, old.epoch, page); err != nil {
				t.Fatalf("first pass from the stale page: %v", err)
			}
			got, err := s.ListMessages(ctx, k, 0)
			if err != nil {
				t.Fatalf("ListMessages of the new session: %v", err)
			}
			if strings.Join(contents(got), ",") != strings.Join(contents(want), ",") {
				t.Fatalf("ListMessages = %.8q, want %.8q", contents(got), contents(want))
			}
			if sess, err := s.GetSession(ctx, k); err != nil || sess.Title != "again" {
				t.Fatalf("GetSession of the new session: %+v, %v", sess, err)
			}
		})
	}
}

// Strays of an earlier incarnation left in the partition (an append that
// put its items after the deletion's clean-up pass) are ignored by the
// reader and removed with the session that holds the partition now.
func TestDeleteRemovesEarlierStrays(t *testing.T) {
	s := newTestStore(t)
	s.log = slog.New(slog.DiscardHandler)
	ctx := t.Context()
	k := createSession(t, s)
	pk := sessionPK(k.ProjectID, k.ThreadID)
	want, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "a"}, {Role: store.RoleAssistant, Content: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []int64{3, 7} {
		items, err := messageItems(nil, pk, "earlier-epoch", "stale", store.Message{Seq: seq, ID: uuid.NewString(), Role: store.RoleUser, Content: "stray", CreatedAt: now()})
		if err != nil {
			t.Fatal(err)
		}
		putItems(t, s, items)
	}
	got, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "c"}}) // meets the stray at 3
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, got...)
	list, err := s.ListMessages(ctx, k, 0)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(contents(list), ",") != "a,b,c" || list[2].Seq != want[2].Seq {
		t.Errorf("ListMessages = %q (last seq %d), want a,b,c (last seq %d)", contents(list), list[len(list)-1].Seq, want[2].Seq)
	}
	if err := s.DeleteSession(ctx, k); err != nil {
		t.Fatal(err)
	}
	if left := threadItems(t, s, k); len(left) != 0 {
		t.Errorf("%d items left, e.g. %s", len(left), getS(left[0], attrSK))
	}
}

// The reader ignores items stamped with another epoch than the meta
// item's: beside the messages they change nothing; in place of a committed
// message they are not taken for it.
func TestCollectorSkipsOtherEpochs(t *testing.T) {
	pk := sessionPK("p", "t")
	msg := func(seq int64, epoch, content string) []item {
		items, err := messageItems(nil, pk, epoch, "w-"+epoch, store.Message{Seq: seq, ID: uuid.NewString(), Role: store.RoleUser, Content: content, CreatedAt: now()})
		if err != nil {
			t.Fatal(err)
		}
		return items
	}
	strayPart := func(seq int64) item {
		it := msg(seq, "old", "")[0]
		it[attrSK] = avS(partSK(seq, 1))
		return it
	}
	cat := func(groups ...[]item) []item {
		var out []item
		for _, g := range groups {
			out = append(out, g...)
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		items   []item // descending, as the query returns them
		want    string
		wantErr string
	}{
		{
			name:  "strays beside the messages",
			items: cat(msg(4, "old", "stray-4"), msg(3, "new", "c"), []item{strayPart(2)}, msg(2, "new", "b"), msg(1, "", "a (not stamped)")),
			want:  "a (not stamped),b,c",
		},
		{
			name:    "stray in place of a committed message",
			items:   cat(msg(3, "new", "c"), msg(2, "old", "stray-2"), msg(1, "new", "a")),
			wantErr: "message 2 missing",
		},
	} {
		col := newCollector(nil, commitState{seq: 3, epoch: "new"}, 0)
		for _, it := range tc.items {
			col.add(it)
		}
		got := strings.Join(contents(col.result()), ",")
		switch {
		case tc.wantErr != "":
			if col.broken == nil || !strings.Contains(col.broken.Error(), tc.wantErr) || strings.Contains(got, "stray") {
				t.Errorf("%s: read %q, error %v; want error %q and no stray", tc.name, got, col.broken, tc.wantErr)
			}
		case col.broken != nil || got != tc.want:
			t.Errorf("%s: read %q, error %v; want %q", tc.name, got, col.broken, tc.want)
		}
	}
}

// A deletion of a session that is not there (or another user's) reports
// store.ErrNotFound and removes nothing.
func TestDeleteSessionOfAnotherUser(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	k := createSession(t, s)
	if _, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "mine"}}); err != nil {
		t.Fatal(err)
	}
	before := len(threadItems(t, s, k))
	other := k
	other.UserID = "mallory"
	if err := s.DeleteSession(ctx, other); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DeleteSession by another user: %v, want ErrNotFound", err)
	}
	if after := len(threadItems(t, s, k)); after != before {
		t.Errorf("%d items after another user's delete, %d before", after, before)
	}
	if err := s.deleteThread(context.WithoutCancel(ctx), sessionPK("p", uuid.NewString()), ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleteThread of a missing thread: %v, want ErrNotFound", err)
	}
}

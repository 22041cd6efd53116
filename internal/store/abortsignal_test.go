package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"agentchat/internal/store"
	"agentchat/internal/store/sqlite"
)

func TestAbortNotifications(t *testing.T) {
	ctx := context.Background()
	inner, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "chat.db"))
	if err != nil {
		t.Fatal(err)
	}
	st := store.WithAbortNotifications(inner)
	t.Cleanup(func() { _ = st.Close() })
	n, ok := st.(store.AbortNotifier)
	if !ok {
		t.Fatal("WithAbortNotifications returned no AbortNotifier")
	}
	mine := store.Key{ProjectID: "p", UserID: "alice", ThreadID: "t1"}
	other := store.Key{ProjectID: "p", UserID: "alice", ThreadID: "t2"}
	for _, k := range []store.Key{mine, other} {
		if err := st.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
			t.Fatal(err)
		}
	}
	pending := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}

	ch, stop := n.WatchAbort(mine)
	ch2, stop2 := n.WatchAbort(mine)
	defer stop2()
	if err := st.RequestAbort(ctx, other); err != nil {
		t.Fatal(err)
	}
	if pending(ch) {
		t.Fatal("notified of another session's abort")
	}
	if err := st.RequestAbort(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if err := st.RequestAbort(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if !pending(ch) || !pending(ch2) {
		t.Fatal("a watcher of the session was not notified")
	}
	if pending(ch) {
		t.Fatal("two requests left two notifications: one pending is enough")
	}
	if ab, err := st.AbortRequested(ctx, mine); err != nil || !ab {
		t.Fatalf("AbortRequested = %v, %v: the flag must be stored", ab, err)
	}

	stop()
	stop() // idempotent
	if err := st.RequestAbort(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if pending(ch) {
		t.Fatal("notified after stop")
	}
	if !pending(ch2) {
		t.Fatal("the remaining watcher was not notified")
	}

	// A refused request notifies nobody.
	gone := store.Key{ProjectID: "p", UserID: "alice", ThreadID: "missing"}
	ch3, stop3 := n.WatchAbort(gone)
	defer stop3()
	if err := st.RequestAbort(ctx, gone); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("RequestAbort of a missing session: %v, want ErrNotFound", err)
	}
	if pending(ch3) {
		t.Fatal("a refused request notified")
	}
}

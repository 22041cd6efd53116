package userpath_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/userpath"
)

const forbidden = "not yours"

func status(err error) int {
	var se *httpapi.StatusError
	if errors.As(err, &se) {
		return se.Status
	}
	if err == nil {
		return 0
	}
	return -1
}

func TestCheck(t *testing.T) {
	srv := gns3test.NewServer(t, nil)
	alice := srv.AddUser(gns3test.User{Username: "alice"})
	bob := srv.AddUser(gns3test.User{Username: "bob"})
	srv.BindToken("tok-alice-SECRET", "alice")
	c, err := gns3.New(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	r := userpath.New(c, userpath.WithClock(clock), userpath.WithTTL(time.Minute))
	id := auth.Identity{UserID: "alice", Token: "tok-alice-SECRET", Via: auth.ViaJWT}
	ctx := context.Background()
	for _, tc := range []struct {
		path string
		want int
	}{
		{"me", 0}, {"alice", 0}, {alice.UserID, 0}, {strings.ToUpper(alice.UserID), 0},
		{bob.UserID, 403}, {"bob", 403}, {"", 403}, {"Me", 403}, {"not-a-uuid", 403},
	} {
		if got := status(r.Check(ctx, id, tc.path, forbidden)); got != tc.want {
			t.Errorf("Check(%q) = %d, want %d", tc.path, got, tc.want)
		}
	}
	// One GNS3 call while cached; a new one once expired.
	if n := srv.Hits("GET /v3/access/users/me"); n != 1 {
		t.Fatalf("%d calls to /users/me", n)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	if err := r.Check(ctx, id, alice.UserID, forbidden); err != nil {
		t.Fatal(err)
	}
	if n := srv.Hits("GET /v3/access/users/me"); n != 2 {
		t.Fatalf("%d calls to /users/me after expiry", n)
	}
	// Another token is another entry; a refused token is 403 and not cached.
	stranger := auth.Identity{UserID: "carol", Token: "unknown", Via: auth.ViaJWT}
	if got := status(r.Check(ctx, stranger, alice.UserID, forbidden)); got != 403 {
		t.Fatalf("stranger: %d", got)
	}
	if r.Len() != 1 {
		t.Fatalf("cache holds %d entries", r.Len())
	}
	// The controller down: 502, with a message free of the token.
	srv.SetHang(true)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	fresh := userpath.New(c)
	err = fresh.Check(short, id, alice.UserID, forbidden)
	if !errors.Is(err, context.DeadlineExceeded) && status(err) != http.StatusBadGateway {
		t.Fatalf("hung controller: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "SECRET") {
		t.Fatal("the error holds the token")
	}
}

func TestBounded(t *testing.T) {
	srv := gns3test.NewServer(t, nil)
	srv.AddUser(gns3test.User{Username: "alice"})
	c, _ := gns3.New(srv.URL, nil)
	r := userpath.New(c, userpath.WithMaxEntries(3))
	for i := range 10 {
		id := auth.Identity{UserID: "alice", Token: "t" + string(rune('a'+i)), Via: auth.ViaJWT}
		srv.BindToken(id.Token, "alice")
		if _, err := r.GNS3User(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		if r.Len() > 3 {
			t.Fatalf("cache grew to %d", r.Len())
		}
	}
}

func TestNoController(t *testing.T) {
	for _, r := range []*userpath.Resolver{nil, userpath.New(nil)} {
		id := auth.Identity{UserID: "alice", Token: "x"}
		if err := r.Check(context.Background(), id, "me", forbidden); err != nil {
			t.Fatal(err)
		}
		if err := r.Check(context.Background(), id, "alice", forbidden); err != nil {
			t.Fatal(err)
		}
		if got := status(r.Check(context.Background(), id, "00000000-0000-4000-8000-000000000000", forbidden)); got != 403 {
			t.Fatalf("uuid without controller: %d", got)
		}
		if _, err := r.GNS3User(context.Background(), id); !errors.Is(err, userpath.ErrNoController) {
			t.Fatal(err)
		}
	}
}

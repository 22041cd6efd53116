package sessionsfn_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"testing"

	"github.com/google/uuid"

	"agentchat/internal/httpapi/sessions"
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/lambdatest"
	"agentchat/internal/lambdaapp/sessionsfn"
	"agentchat/internal/store"
)

var endpoint string

func TestMain(m *testing.M) { os.Exit(lambdatest.WithDynalite(m, &endpoint)) }

func fixture(t *testing.T, name string) *lambdatest.Fixture {
	t.Helper()
	f, err := lambdaapp.Find(sessionsfn.Funcs(), name)
	if err != nil {
		t.Fatal(err)
	}
	return lambdatest.New(t, endpoint, f, nil)
}

// seed creates a session of user in project p1 with two messages.
func seed(t *testing.T, fx *lambdatest.Fixture, user, title string) store.Key {
	t.Helper()
	ctx := context.Background()
	k := store.Key{ProjectID: "p1", UserID: user, ThreadID: uuid.NewString()}
	if err := fx.Store.CreateSession(ctx, &store.Session{ThreadID: k.ThreadID, UserID: user, ProjectID: "p1", Title: title}); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.Store.AppendMessages(ctx, k, []store.Message{
		{Role: store.RoleUser, Content: "hello"},
		{Role: store.RoleAssistant, Content: "hi there"},
	}); err != nil {
		t.Fatal(err)
	}
	return k
}

type view struct {
	ThreadID string `json:"thread_id"`
	Title    string `json:"title"`
	Pinned   bool   `json:"pinned"`
	UserID   string `json:"user_id"`
}

func TestList(t *testing.T) {
	fx := fixture(t, "sessions-list")
	seed(t, fx, "alice", "one")
	seed(t, fx, "alice", "two")
	seed(t, fx, "bob", "bob's")
	route := "GET " + sessions.PathList
	for r, target := range map[string]string{route: "/v3/projects/p1/chat/sessions?limit=1", lambdatest.Copilot(route): "/v3/copilot/projects/p1/chat/sessions?limit=1"} {
		resp := fx.API(r, target, fx.Auth("alice"), "")
		if resp.Status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", target, resp.Status, resp.Body)
		}
		var got []view
		resp.JSON(t, &got)
		if len(got) != 1 || got[0].UserID != "alice" {
			t.Fatalf("%s: got %+v, want one session of alice", target, got)
		}
		if resp.Header["X-Next-Cursor"] == "" || resp.Header["X-Request-Id"] == "" {
			t.Errorf("%s: headers %v lack X-Next-Cursor or X-Request-Id", target, resp.Header)
		}
	}
	resp := fx.API(route, "/v3/projects/p1/chat/sessions", map[string]string{}, "")
	if resp.Status != http.StatusUnauthorized {
		t.Errorf("without a token: status %d, want 401", resp.Status)
	}
}

func TestOneRoutePerFunction(t *testing.T) {
	fx := fixture(t, "sessions-list")
	k := seed(t, fx, "alice", "kept")
	// API Gateway only routes the function's own route to it; anything
	// else reaching it is not served.
	resp := fx.API("DELETE "+sessions.PathSession, "/v3/projects/p1/chat/sessions/"+k.ThreadID, fx.Auth("alice"), "")
	if resp.Status != http.StatusNotFound {
		t.Fatalf("DELETE through sessions-list: status %d, want 404", resp.Status)
	}
	if _, err := fx.Store.GetSession(context.Background(), k); err != nil {
		t.Fatalf("session gone after a request the function does not serve: %v", err)
	}
}

func TestSessionRoutes(t *testing.T) {
	tests := []struct {
		fn     string
		route  string
		suffix string // after /sessions/{id}
		body   string
		status int
		check  func(t *testing.T, fx *lambdatest.Fixture, k store.Key, resp lambdatest.Response)
	}{
		{fn: "sessions-history", route: "GET " + sessions.PathHistory, suffix: "/history?limit=1", status: http.StatusOK,
			check: func(t *testing.T, _ *lambdatest.Fixture, k store.Key, resp lambdatest.Response) {
				var h struct {
					ThreadID string `json:"thread_id"`
					Messages []struct {
						Role    string `json:"role"`
						Content string `json:"content"`
					} `json:"messages"`
				}
				resp.JSON(t, &h)
				if h.ThreadID != k.ThreadID || len(h.Messages) != 1 || h.Messages[0].Content != "hi there" {
					t.Errorf("history %+v, want the last message of %s", h, k.ThreadID)
				}
			}},
		{fn: "sessions-rename", route: "PATCH " + sessions.PathSession, body: `{"title":"Renamed in Lambda"}`, status: http.StatusOK,
			check: func(t *testing.T, fx *lambdatest.Fixture, k store.Key, _ lambdatest.Response) {
				s, err := fx.Store.GetSession(context.Background(), k)
				if err != nil || s.Title != "Renamed in Lambda" || !s.TitleSetByUser {
					t.Errorf("after rename: %+v, %v", s, err)
				}
			}},
		{fn: "sessions-rename", route: "PATCH " + sessions.PathSession, body: `{"title":""}`, status: http.StatusUnprocessableEntity},
		{fn: "sessions-delete", route: "DELETE " + sessions.PathSession, status: http.StatusNoContent,
			check: func(t *testing.T, fx *lambdatest.Fixture, k store.Key, _ lambdatest.Response) {
				if _, err := fx.Store.GetSession(context.Background(), k); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("after delete: %v, want not found", err)
				}
			}},
		{fn: "sessions-pin", route: "PUT " + sessions.PathPin, suffix: "/pin", status: http.StatusOK,
			check: func(t *testing.T, fx *lambdatest.Fixture, k store.Key, resp lambdatest.Response) {
				var v view
				resp.JSON(t, &v)
				s, err := fx.Store.GetSession(context.Background(), k)
				if !v.Pinned || err != nil || !s.Pinned {
					t.Errorf("after pin: response %+v, stored %+v, %v", v, s, err)
				}
			}},
		{fn: "sessions-unpin", route: "DELETE " + sessions.PathPin, suffix: "/pin", status: http.StatusOK,
			check: func(t *testing.T, fx *lambdatest.Fixture, k store.Key, resp lambdatest.Response) {
				var v view
				resp.JSON(t, &v)
				if v.Pinned || v.ThreadID != k.ThreadID {
					t.Errorf("after unpin: %+v", v)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.fn+" "+http.StatusText(tc.status), func(t *testing.T) {
			fx := fixture(t, tc.fn)
			k := seed(t, fx, "alice", "seeded")
			for route, prefix := range map[string]string{tc.route: "/v3/projects/", lambdatest.Copilot(tc.route): "/v3/copilot/projects/"} {
				target := prefix + "p1/chat/sessions/" + k.ThreadID + tc.suffix
				// Another user's session is never visible.
				if other := fx.API(route, target, fx.Auth("mallory"), tc.body); tc.status < 400 && other.Status != http.StatusNotFound {
					t.Fatalf("%s as another user: status %d, want 404: %s", target, other.Status, other.Body)
				}
				resp := fx.API(route, target, fx.Auth("alice"), tc.body)
				if resp.Status != tc.status {
					t.Fatalf("%s: status %d, want %d: %s", target, resp.Status, tc.status, resp.Body)
				}
				if tc.check != nil {
					tc.check(t, fx, k, resp)
				}
				if tc.status == http.StatusNoContent {
					break // the session is gone; the alias was checked by the other routes
				}
			}
		})
	}
}

func TestChatAbort(t *testing.T) {
	fx := fixture(t, "chat-abort")
	ctx := context.Background()
	k := store.Key{ProjectID: "p1", UserID: "alice", ThreadID: uuid.NewString()}
	if err := fx.Store.CreateSession(ctx, &store.Session{ThreadID: k.ThreadID, UserID: k.UserID, ProjectID: k.ProjectID}); err != nil {
		t.Fatal(err)
	}
	route := "POST " + sessions.PathAbort
	if resp := fx.API(route, "/v3/projects/p1/chat/sessions/"+k.ThreadID+"/abort", fx.Auth("bob"), ""); resp.Status != http.StatusNotFound {
		t.Fatalf("abort of another user's session: %d %s", resp.Status, resp.Body)
	}
	resp := fx.API(lambdatest.Copilot(route), "/v3/copilot/projects/p1/chat/sessions/"+k.ThreadID+"/abort", fx.Auth("alice"), "")
	if resp.Status != http.StatusAccepted {
		t.Fatalf("abort: %d %s", resp.Status, resp.Body)
	}
	if ok, err := fx.Store.AbortRequested(ctx, k); err != nil || !ok {
		t.Fatalf("abort flag %v, %v", ok, err)
	}
}

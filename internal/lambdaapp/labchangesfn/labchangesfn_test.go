package labchangesfn_test

import (
	"context"
	"net/http"
	"os"
	"testing"

	"agentchat/internal/httpapi/labchanges"
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/labchangesfn"
	"agentchat/internal/lambdaapp/lambdatest"
	"agentchat/internal/store"
)

var endpoint string

func TestMain(m *testing.M) { os.Exit(lambdatest.WithDynalite(m, &endpoint)) }

func fixture(t *testing.T, name string) *lambdatest.Fixture {
	t.Helper()
	f, err := lambdaapp.Find(labchangesfn.Funcs(), name)
	if err != nil {
		t.Fatal(err)
	}
	return lambdatest.New(t, endpoint, f, nil)
}

// TestAuditFunction: the audit trail over DynamoDB, under both prefixes,
// the caller's own entries only.
func TestAuditFunction(t *testing.T) {
	fx := fixture(t, labchangesfn.AuditFunction)
	ctx := context.Background()
	for _, u := range []string{"alice", "bob"} {
		if err := fx.Store.AppendAudit(ctx, &store.AuditEntry{ProjectID: "p1", UserID: u, Tool: "delete_gns3_node",
			Arguments: `{"nodes":["R1"]}`, Summary: "delete R1", Status: store.AuditSuccess, Decision: store.DecisionApproved, DecidedBy: u}); err != nil {
			t.Fatal(err)
		}
	}
	route := "GET " + labchanges.PathAudit
	for r, target := range map[string]string{route: "/v3/projects/p1/chat/audit", lambdatest.Copilot(route): "/v3/copilot/projects/p1/chat/audit?limit=10"} {
		resp := fx.API(r, target, fx.Auth("alice"), "")
		if resp.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", target, resp.Status, resp.Body)
		}
		var page labchanges.AuditPage
		resp.JSON(t, &page)
		if len(page.Entries) != 1 || page.Entries[0].UserID != "alice" || page.Entries[0].Summary != "delete R1" {
			t.Fatalf("%s: %+v", target, page)
		}
	}
	if resp := fx.API(route, "/v3/projects/p1/chat/audit", map[string]string{}, ""); resp.Status != http.StatusUnauthorized {
		t.Errorf("without a token: %d", resp.Status)
	}
}

// TestUndoFunction: without GNS3 the function answers a clear 409, and
// another user's session is 404.
func TestUndoFunction(t *testing.T) {
	fx := fixture(t, labchangesfn.UndoFunction)
	ctx := context.Background()
	k := store.Key{ProjectID: "p1", UserID: "alice", ThreadID: "7d7c1d7e-4c9e-4a34-9f55-3b3f1c7e9a10"}
	if err := fx.Store.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
		t.Fatal(err)
	}
	route := "POST " + labchanges.PathUndo
	resp := fx.API(route, "/v3/projects/p1/chat/sessions/"+k.ThreadID+"/undo", fx.Auth("alice"), "")
	if resp.Status != http.StatusConflict {
		t.Fatalf("undo without GNS3: %d %s", resp.Status, resp.Body)
	}
}

package apikeysfn_test

import (
	"net/http"
	"os"
	"testing"

	"github.com/google/uuid"

	"agentchat/internal/httpapi/apikeys"
	"agentchat/internal/lambdaapp/apikeysfn"
	"agentchat/internal/lambdaapp/lambdatest"
)

var endpoint string

func TestMain(m *testing.M) { os.Exit(lambdatest.WithDynalite(m, &endpoint)) }

type key struct {
	ID     string `json:"id"`
	Key    string `json:"key"`
	Status string `json:"status"`
}

// TestKeyLifecycle creates, uses, lists and revokes keys through the four
// functions, sharing one table as they do in AWS.
func TestKeyLifecycle(t *testing.T) {
	vars := map[string]string{"TABLE_NAME": "t-" + uuid.NewString()}
	fx := map[string]*lambdatest.Fixture{}
	for _, f := range apikeysfn.Funcs() {
		fx[f.Name] = lambdatest.New(t, endpoint, f, vars)
	}
	create, list := "POST "+apikeys.PathKeys, "GET "+apikeys.PathKeys
	del, delAll := "DELETE "+apikeys.PathKey, "DELETE "+apikeys.PathKeys
	alice := fx["api-keys-create"].Auth("alice")

	var keys []key
	for _, name := range []string{"one", "two"} {
		resp := fx["api-keys-create"].API(create, "/v3/access/users/me/api-keys", alice, `{"name":"`+name+`"}`)
		if resp.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", resp.Status, resp.Body)
		}
		var k key
		resp.JSON(t, &k)
		keys = append(keys, k)
	}

	// The new key authenticates (an API-key lookup in DynamoDB).
	byKey := map[string]string{"Authorization": "Bearer " + keys[0].Key}
	resp := fx["api-keys-list"].API(list, "/v3/access/users/alice/api-keys", byKey, "")
	var listed []key
	resp.JSON(t, &listed)
	if resp.Status != http.StatusOK || len(listed) != 2 {
		t.Fatalf("list with an API key: %d %s", resp.Status, resp.Body)
	}
	for _, k := range listed {
		if k.Key != "" {
			t.Fatalf("a listed key shows its secret: %+v", k)
		}
	}

	if resp := fx["api-keys-delete"].API(del, "/v3/access/users/me/api-keys/"+keys[0].ID, alice, ""); resp.Status >= 300 {
		t.Fatalf("revoke: %d %s", resp.Status, resp.Body)
	}
	if resp := fx["api-keys-list"].API(list, "/v3/access/users/me/api-keys", byKey, ""); resp.Status != http.StatusUnauthorized {
		t.Fatalf("revoked key still authenticates: %d %s", resp.Status, resp.Body)
	}
	if resp := fx["api-keys-delete-all"].API(delAll, "/v3/access/users/me/api-keys", alice, ""); resp.Status >= 300 {
		t.Fatalf("revoke all: %d %s", resp.Status, resp.Body)
	}
	if resp := fx["api-keys-list"].API(list, "/v3/access/users/me/api-keys", map[string]string{"Authorization": "Bearer " + keys[1].Key}, ""); resp.Status != http.StatusUnauthorized {
		t.Fatalf("key still authenticates after revoke all: %d %s", resp.Status, resp.Body)
	}
	if resp := fx["api-keys-list"].API(list, "/v3/access/users/bob/api-keys", alice, ""); resp.Status != http.StatusForbidden && resp.Status != http.StatusNotFound {
		t.Fatalf("listing another user's keys: %d %s", resp.Status, resp.Body)
	}
}

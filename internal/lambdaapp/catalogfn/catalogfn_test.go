package catalogfn_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/agents"
	"agentchat/internal/auth"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/gateway"
	"agentchat/internal/httpapi/gateway/openaiwire"
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/catalogfn"
	"agentchat/internal/lambdaapp/lambdatest"
	"agentchat/internal/store"
)

var endpoint string

func TestMain(m *testing.M) { os.Exit(lambdatest.WithDynalite(m, &endpoint)) }

// reference is f served by package gateway itself, with the real agents,
// as the local server and the other gateway functions serve it.
func reference(f lambdaapp.Func) lambdaapp.Func {
	return lambdaapp.NewFunc(f.Name+"-reference", f.Kind, func(context.Context, *lambdaapp.App) ([]httpapi.Route, error) {
		return gateway.New(gateway.Options{Agents: agents.DefaultRegistry(agents.Deps{})}).Routes(), nil
	}, f.Patterns...)
}

func TestPathsAreTheGateways(t *testing.T) {
	for got, want := range map[string]string{catalogfn.PathRoot: gateway.PathRoot, catalogfn.PathRootBare: gateway.PathRootBare, catalogfn.PathAgents: gateway.PathAgents} {
		if got != want {
			t.Errorf("path %q, the gateway serves %q", got, want)
		}
	}
}

// apiKey stores an API key of user (revoked when revoked) and returns its
// secret.
func apiKey(t *testing.T, st store.APIKeys, user string, revoked bool) string {
	t.Helper()
	secret, prefix, hash, err := auth.GenerateAPIKey()
	if err != nil {
		t.Fatal(err)
	}
	k := &store.APIKey{ID: uuid.NewString(), UserID: user, Name: "test", Hash: hash, Prefix: prefix, CreatedAt: time.Now().UTC()}
	if revoked {
		k.RevokedAt = time.Now().UTC()
	}
	if err := st.CreateAPIKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	return secret
}

// TestSameAnswersAsTheGateway drives each function and package gateway
// with the same API Gateway events and wants the same status, headers and
// body byte for byte.
func TestSameAnswersAsTheGateway(t *testing.T) {
	table := "t-" + uuid.NewString()
	vars := map[string]string{"TABLE_NAME": table}
	type request struct {
		name, route, target string
		header              map[string]string
	}
	agentsFx := lambdatest.New(t, endpoint, find(t, catalogfn.AgentsFunction), vars)
	active := apiKey(t, agentsFx.Store, "alice", false)
	revoked := apiKey(t, agentsFx.Store, "alice", true)
	get := http.MethodGet + " "
	cases := []struct {
		fn       string
		requests []request
	}{
		{catalogfn.RootFunction, []request{
			{name: "bare", route: get + gateway.PathRootBare, target: "/v1"},
			{name: "slash", route: get + gateway.PathRoot, target: "/v1/"},
			{name: "with a token", route: get + gateway.PathRootBare, target: "/v1", header: agentsFx.Auth("alice")},
		}},
		{catalogfn.AgentsFunction, []request{
			{name: "jwt", route: get + gateway.PathAgents, target: "/v1/agents", header: agentsFx.Auth("alice")},
			{name: "api key", route: get + gateway.PathAgents, target: "/v1/agents?x=1", header: map[string]string{"Authorization": "Bearer " + active}},
			{name: "no credentials", route: get + gateway.PathAgents, target: "/v1/agents"},
			{name: "bad token", route: get + gateway.PathAgents, target: "/v1/agents", header: map[string]string{"Authorization": "Bearer not-a-jwt"}},
			{name: "revoked api key", route: get + gateway.PathAgents, target: "/v1/agents", header: map[string]string{"Authorization": "Bearer " + revoked}},
			{name: "basic auth", route: get + gateway.PathAgents, target: "/v1/agents", header: map[string]string{"Authorization": "Basic YTpi"}},
		}},
	}
	for _, c := range cases {
		f := find(t, c.fn)
		ours := agentsFx
		if c.fn != catalogfn.AgentsFunction {
			ours = lambdatest.New(t, endpoint, f, vars)
		}
		ref := lambdatest.New(t, endpoint, reference(f), vars)
		for _, rq := range c.requests {
			t.Run(c.fn+"/"+rq.name, func(t *testing.T) {
				h := map[string]string{"X-Request-Id": "req-" + strings.ReplaceAll(rq.name, " ", "-") + "-00000000"}
				maps.Copy(h, rq.header)
				got := ours.API(rq.route, rq.target, h, "")
				want := ref.API(rq.route, rq.target, h, "")
				if got.Status != want.Status || string(got.Body) != string(want.Body) || !maps.Equal(got.Header, want.Header) {
					t.Fatalf("%s %s:\n got %d %v %s\nwant %d %v %s", rq.route, rq.target, got.Status, got.Header, got.Body, want.Status, want.Header, want.Body)
				}
				if want.Status >= 400 && !strings.Contains(string(want.Body), `"error":{"message"`) {
					t.Errorf("reference error is not OpenAI-shaped: %s", want.Body)
				}
			})
		}
	}

	// The list itself: every agent, by id and description.
	resp := agentsFx.API(get+gateway.PathAgents, "/v1/agents", agentsFx.Auth("alice"), "")
	var list []openaiwire.AgentInfo
	resp.JSON(t, &list)
	if resp.Status != http.StatusOK || len(list) != len(agents.DefaultRegistry(agents.Deps{}).List()) {
		t.Fatalf("agents: %d %s", resp.Status, resp.Body)
	}
}

// TestRootIsBare checks that v1-root starts without a secret (JWT_SECRET
// unset; a parameter name it must not read), a DynamoDB endpoint or AWS
// credentials, and still answers.
func TestRootIsBare(t *testing.T) {
	f := find(t, catalogfn.RootFunction)
	if !f.Bare {
		t.Fatal("v1-root is not a bare function")
	}
	env := map[string]string{"STORE": "dynamodb", "TABLE_NAME": "t-unused", "LOG_LEVEL": "debug", "JWT_SECRET_PARAM": "/never/read"}
	h, release, err := f.Handler(context.Background(), func(k string) string { return env[k] }, &strings.Builder{})
	if err != nil {
		t.Fatalf("v1-root needs more than the template's global environment: %v", err)
	}
	defer func() { _ = release() }()
	ev, err := lambdatest.APIRequest("GET "+gateway.PathRootBare, "/v1", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := lambdaapp.APIGateway(h)(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]string
	if err := json.Unmarshal([]byte(resp.Body), &body); err != nil || resp.StatusCode != http.StatusOK || body["status"] != "ok" {
		t.Fatalf("GET /v1: %d %s (%v)", resp.StatusCode, resp.Body, err)
	}

	// v1-agents needs a secret: it authenticates.
	agentsFn := find(t, catalogfn.AgentsFunction)
	if agentsFn.Bare {
		t.Fatal("v1-agents is bare, but its route needs authentication")
	}
	bare := lambdaapp.NewBareFunc("x", lambdaapp.API, agentsFn.Build, agentsFn.Patterns...)
	if _, _, err := bare.Handler(context.Background(), func(k string) string { return env[k] }, &strings.Builder{}); err == nil ||
		!strings.Contains(err.Error(), "needs authentication") {
		t.Fatalf("a bare function with an authenticated route: error %v", err)
	}
}

func find(t *testing.T, name string) lambdaapp.Func {
	t.Helper()
	f, err := lambdaapp.Find(catalogfn.Funcs(), name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

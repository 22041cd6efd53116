package seerrtools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"agentchat/internal/agent"
	"agentchat/internal/seerr"
	"agentchat/internal/seerr/seerrtest"
)

// tools returns the tools of the Seerr skill on c by name.
func tools(t *testing.T, c *seerr.Client) map[string]agent.Tool {
	t.Helper()
	out := map[string]agent.Tool{}
	for _, tool := range Skill(c).Tools {
		out[tool.Name] = tool
	}
	return out
}

// call runs a tool and checks that the key appears nowhere in its answer.
func call(t *testing.T, tl map[string]agent.Tool, name, args string) (string, error) {
	t.Helper()
	tool, ok := tl[name]
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	out, err := tool.Execute(context.Background(), json.RawMessage(args))
	if strings.Contains(out, testKey) || (err != nil && strings.Contains(err.Error(), testKey)) {
		t.Fatalf("%s(%s) leaks the API key: %q, %v", name, args, out, err)
	}
	return out, err
}

// mustCall runs a tool that must succeed and decodes its JSON output.
func mustCall(t *testing.T, tl map[string]agent.Tool, name, args string, into any) string {
	t.Helper()
	out, err := call(t, tl, name, args)
	if err != nil {
		t.Fatalf("%s(%s): %v", name, args, err)
	}
	if err := json.Unmarshal([]byte(out), into); err != nil {
		t.Fatalf("%s output is not JSON: %v\n%s", name, err, out)
	}
	return out
}

// testKey is the Seerr API key of the tests, never to be shown.
const testKey = "sk-seerr-Zq81vX0secretKEY4242"

// newFake starts a fake Seerr and returns it with a client of it.
func newFake(t *testing.T) (*seerrtest.Server, *seerr.Client) {
	t.Helper()
	f := seerrtest.New(testKey)
	t.Cleanup(f.Close)
	c, err := seerr.New(seerr.Config{BaseURL: f.URL, APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

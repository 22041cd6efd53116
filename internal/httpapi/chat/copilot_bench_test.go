package chat_test

import (
	"fmt"
	"maps"
	"testing"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store/dynamo/dynalitetest"

	"github.com/google/uuid"
)

// copilotBenchSecret signs the benchmark user's JWT.
const copilotBenchSecret = "copilot-bench-secret-0123456789abcdef"

// BenchmarkCopilotTTFT measures BenchmarkAddedTTFT's figures for the GNS3
// copilot as the GNS3 web UI uses it: the local server in JWT mode with
// GNS3_URL on the fake controller (gns3test, the project holding the
// seeded lab of four nodes and three links), so that every turn reads the
// project's topology (its nodes and links, with the user's token) before
// its first LLM call. The controller answers each request after
// gns3-latency: 0 over loopback, and 2ms, nearer what a real controller
// takes to list a project's nodes. The store is SQLite (a file) or
// DynamoDB (dynalite on loopback, whose answers take milliseconds as
// DynamoDB's do). The direct call replays the body agentchat sent
// upstream, topology included, so added-ttft-µs holds the topology's
// fetch and whatever of the turn's opening does not overlap it.
func BenchmarkCopilotTTFT(b *testing.B) {
	for _, storeName := range []string{"sqlite", "dynamodb"} {
		for _, latency := range []time.Duration{0, 2 * time.Millisecond} {
			for _, name := range []string{"new-session-client-id", "continuing-session"} {
				b.Run(fmt.Sprintf("%s/store=%s/gns3-latency=%s", name, storeName, latency), func(b *testing.B) {
					benchCopilotTTFT(b, storeName, latency, name)
				})
			}
		}
	}
}

// benchCopilotTTFT runs one case of BenchmarkCopilotTTFT.
func benchCopilotTTFT(b *testing.B, storeName string, latency time.Duration, name string) {
	v, err := auth.NewJWTVerifier([]byte(copilotBenchSecret), time.Now)
	if err != nil {
		b.Fatal(err)
	}
	token, err := v.Issue("alice", time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	g := gns3test.NewServer(b, gns3test.AcceptTokens(token))
	g.AddProjectWithID(project, "lab", gns3.StatusOpened)
	g.SeedTopology(project)
	g.SetLatency(latency)
	env := map[string]string{"JWT_SECRET": copilotBenchSecret, "GNS3_URL": g.URL}
	if storeName == "dynamodb" {
		maps.Copy(env, map[string]string{"STORE": "dynamodb", "TABLE_NAME": "bench-" + uuid.NewString(),
			"DYNAMODB_ENDPOINT": dynalitetest.Start(b), "AWS_REGION": "us-east-1"})
	}
	s := newBenchStackWith(b, llmtest.Reply{Text: ttftReply}, env, token)
	measureAddedTTFT(b, s, name)
	nodes := "GET /v3/projects/" + project + "/nodes"
	if g.Hits(nodes) < b.N {
		b.Fatalf("the topology was read %d times in %d turns", g.Hits(nodes), b.N)
	}
}

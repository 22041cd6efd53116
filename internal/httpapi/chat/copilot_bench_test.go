package chat_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
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
	s, g := newCopilotBenchStack(b, storeName, latency)
	measureAddedTTFT(b, s, name)
	nodes := "GET /v3/projects/" + project + "/nodes"
	if g.Hits(nodes) < b.N {
		b.Fatalf("the topology was read %d times in %d turns", g.Hits(nodes), b.N)
	}
}

// newCopilotBenchStack starts the fake controller (the seeded lab in
// project, answering after latency) and the local server in JWT mode on
// it over storeName ("sqlite" or "dynamodb", on dynalite), whose scripted
// LLM streams ttftReply.
func newCopilotBenchStack(b *testing.B, storeName string, latency time.Duration) (*benchStack, *gns3test.Server) {
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
	return newBenchStackWith(b, llmtest.Reply{Text: ttftReply}, env, token), g
}

// BenchmarkCopilotToolStep measures a copilot turn with one tool step, as
// the GNS3 web UI sees it: the model calls a tool, then answers. With
// step=changes the tool starts a node (start_gns3_node, a change: the step
// is stored before the tool runs, and the topology is read again for the
// second LLM call); with step=reads it reads the topology
// (gns3_topology_reader). Between its two LLM calls the turn runs the tool
// (GNS3 requests) and stores the step's messages. answer-µs is the median
// time from the request sent to the answer's first content event read, in
// the client process (answer-p90-µs its 90th percentile); continuing
// sessions of a few turns each. Store and controller latency as in
// BenchmarkCopilotTTFT.
func BenchmarkCopilotToolStep(b *testing.B) {
	for _, step := range []string{"changes", "reads"} {
		for _, storeName := range []string{"sqlite", "dynamodb"} {
			for _, latency := range []time.Duration{0, 2 * time.Millisecond} {
				b.Run(fmt.Sprintf("step=%s/store=%s/gns3-latency=%s", step, storeName, latency), func(b *testing.B) {
					benchCopilotToolStep(b, step == "changes", storeName, latency)
				})
			}
		}
	}
}

// benchCopilotToolStep runs one case of BenchmarkCopilotToolStep.
func benchCopilotToolStep(b *testing.B, changes bool, storeName string, latency time.Duration) {
	s, g := newCopilotBenchStack(b, storeName, latency)
	call := llmtest.ToolCall{ID: "call_read", Name: "gns3_topology_reader", Arguments: `{}`}
	if changes {
		call = llmtest.ToolCall{ID: "call_start", Name: "start_gns3_node", Arguments: `{"nodes":["PC2"]}`}
	}
	s.llm.SetHandler(func(req llmtest.Request) llmtest.Reply {
		switch {
		case !req.Stream:
			return llmtest.Reply{Text: benchTitle}
		case req.Messages[len(req.Messages)-1].Role == "tool":
			return llmtest.Reply{Text: ttftReply}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{call}}
	})
	pc2 := ""
	for _, n := range g.Nodes(project) {
		if n["name"] == "PC2" {
			pc2 = n["node_id"].(string)
		}
	}
	c := startClient(b)
	words := len(strings.Fields(ttftReply))
	cycle := &sessionCycle{s: s, turns: 4}
	c.stream(b, s.chatCmd(cycle.next(b), "Go on."), words) // warm-up
	startPC2 := "POST /v3/projects/" + project + "/nodes/" + pc2 + "/start"
	before := g.Hits(startPC2)
	var answers []time.Duration
	for b.Loop() {
		b.StopTimer()
		sid := cycle.next(b)
		g.SetNodeStatus(project, pc2, "stopped") // each turn of step=changes starts it
		b.StartTimer()
		answers = append(answers, c.stream(b, s.chatCmd(sid, "Go on."), words)[0])
	}
	b.ReportMetric(micros(quantile(slices.Clone(answers), 0.5)), "answer-µs")
	b.ReportMetric(micros(quantile(answers, 0.9)), "answer-p90-µs")
	if starts := g.Hits(startPC2) - before; changes && starts < b.N {
		b.Fatalf("PC2 was started %d times in %d turns", starts, b.N)
	}
}

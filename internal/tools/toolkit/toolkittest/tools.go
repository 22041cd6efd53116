package toolkittest

import (
	"testing"

	"agentchat/internal/agent"
)

// FindTool returns the tool name of ts, failing t when there is none.
func FindTool(t testing.TB, ts []agent.Tool, name string) agent.Tool {
	t.Helper()
	for _, tl := range ts {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return agent.Tool{}
}

// Names returns the names of ts, in order.
func Names(ts []agent.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

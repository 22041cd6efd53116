package localserver

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"agentchat/internal/llm/llmtest"
	"agentchat/internal/pcapsum/pcaptest"
)

// TestLinkToolsThroughStream drives the link tools through /stream with
// the scripted LLM: teaching mode reads a link's traffic (a real pcap the
// fake GNS3 streams) but is refused the link conditions, which never
// reach GNS3; lab automation mode sets them on the right link.
func TestLinkToolsThroughStream(t *testing.T) {
	l := newCopilotLab(t, false)
	topo := l.gns3.SeedTopology(l.project)
	lid := topo.Links[0] // PC1 e0 - Switch1 e0
	l.gns3.SetCaptureSource(lid, func() io.Reader { return pcaptest.FaultCapture().Reader() })
	putPath := "PUT /v3/projects/" + l.project + "/links/" + lid
	setArgs := `{"action":"set","link":"PC1:e0,Switch1:e0","conditions":{"packet_loss":30},"show_icon":false}`
	analyzeArgs := `{"link":"PC1:e0","max_packets":17}`

	for _, tc := range []struct {
		mode     string
		wantSet  string
		wantPuts int
	}{
		{"teaching_assistant", "not allowed in teaching_assistant mode", 0},
		{"lab_automation_assistant", `"success":true`, 1},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			l.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{
				{ID: "call_analyze", Name: "analyze_link_traffic", Arguments: analyzeArgs},
				{ID: "call_set", Name: "manage_gns3_link_conditions", Arguments: setArgs},
			}}, llmtest.Reply{Text: "Done."})
			before := l.gns3.Hits(putPath)
			evs := l.stream(map[string]any{"message": "look at the PC1 link, then degrade it", "copilot_mode": tc.mode}, nil)
			out := toolEnd(t, evs, "call_analyze").ToolOutput
			r := parseResult(t, out)
			if !r.Success || !strings.Contains(out, "OSPF hello-interval mismatch") || !strings.Contains(out, "asked for 10.0.12.99 3 time(s) without a reply") {
				t.Fatalf("analyze in %s: %s", tc.mode, out)
			}
			if set := toolEnd(t, evs, "call_set").ToolOutput; !strings.Contains(set, tc.wantSet) {
				t.Fatalf("set in %s: %s", tc.mode, set)
			}
			if got := l.gns3.Hits(putPath) - before; got != tc.wantPuts {
				t.Fatalf("GNS3 received %d link updates", got)
			}
			l.checkNoToken(evs)
		})
	}
	if puts := l.gns3.LinkUpdates(lid); len(puts) != 1 || puts[0]["show_filters_icon"] != false {
		t.Fatalf("link updates %v", puts)
	}
	if l.gns3.Link(l.project, lid)["capturing"] != false {
		t.Fatal("a capture was left running")
	}
}

// TestInjectSetsLinkConditions: through POST .../chat/inject the model's
// link conditions land on the link it named, in GNS3, with the conditions
// icon hidden although the model did not say so (a fault must not show on
// the student's canvas); the session is listed in its mode.
func TestInjectSetsLinkConditions(t *testing.T) {
	l := newCopilotLab(t, false)
	topo := l.gns3.SeedTopology(l.project)
	lid := topo.Links[0] // PC1 e0 - Switch1 e0
	l.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_set", Name: "manage_gns3_link_conditions",
		Arguments: `{"action":"set","link":"Switch1:e0,PC1:e0","conditions":{"packet_loss":100}}`}}},
		llmtest.Reply{Text: "Report: PC1's link drops every packet; undo: clear its conditions."})
	status, evs := l.post("/v3/copilot/projects/"+l.project+"/chat/inject", map[string]any{"message": ""}, nil)
	if status != http.StatusOK || evs[len(evs)-1].Type != "done" {
		t.Fatalf("inject: %d %+v", status, evs)
	}
	if out := toolEnd(t, evs, "call_set").ToolOutput; !strings.Contains(out, `"success":true`) {
		t.Fatalf("set: %s", out)
	}
	puts := l.gns3.LinkUpdates(lid)
	if len(puts) != 1 || puts[0]["show_filters_icon"] != false {
		t.Fatalf("link updates %v", puts)
	}
	if f, _ := puts[0]["filters"].(map[string]any); f == nil || fmt.Sprint(f["packet_loss"]) != "[100]" {
		t.Fatalf("filters sent %v", puts[0]["filters"])
	}
	if got := l.sessionsOfMode("troubleshooting_injection"); len(got) != 1 || got[0]["thread_id"] != evs[0].SessionID {
		t.Fatalf("injection sessions %v", got)
	}
}

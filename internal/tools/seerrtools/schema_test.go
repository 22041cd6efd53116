package seerrtools

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"agentchat/internal/agent"
	"agentchat/internal/tools/toolkit/toolkittest"
)

// goldenTool is a tool as testdata/tools.golden.json keeps it: what the
// model was shown by the hand-written schemas of the Seerr skill before
// the tools moved onto toolkit.
type goldenTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	SideEffects bool            `json:"side_effects,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// TestToolsAsShownBefore checks that the model is shown the same tools as
// before: names and order, descriptions, side effects and schemas (as
// JSON values: the order of their keys may differ).
func TestToolsAsShownBefore(t *testing.T) {
	b, err := os.ReadFile("testdata/tools.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden []goldenTool
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	tools := Skill(nil).Tools
	if got, want := toolkittest.Names(tools), goldenNames(golden); !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	for i, tool := range tools {
		g := golden[i]
		if tool.Description != g.Description || tool.SideEffects != g.SideEffects {
			t.Errorf("%s: description %q, side effects %v; want %q, %v", tool.Name, tool.Description, tool.SideEffects, g.Description, g.SideEffects)
		}
		if got, want := jsonValue(t, tool.Parameters), jsonValue(t, g.Parameters); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: schema\n%s\nwant\n%s", tool.Name, tool.Parameters, g.Parameters)
		}
	}
}

func TestSkillDefinition(t *testing.T) {
	s := Skill(nil)
	if s.Name != "seerr" || !strings.Contains(s.Prompt, ToolRequestMedia) {
		t.Fatalf("skill = %+v", s)
	}
	for _, tool := range s.Tools {
		if tool.Description == "" || tool.Run == nil {
			t.Errorf("%s: incomplete", tool.Name)
		}
		if tool.SideEffects != (tool.Name == ToolRequestMedia) || tool.Tier != agent.TierRead || tool.Tier.ChangesLab() {
			t.Errorf("%s: SideEffects %v, Tier %q", tool.Name, tool.SideEffects, tool.Tier)
		}
	}
}

func goldenNames(ts []goldenTool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

func jsonValue(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, raw)
	}
	return v
}

package gns3tools

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/agent"
	"agentchat/internal/tools/toolkit"
	"agentchat/internal/tools/toolkit/toolkittest"
)

// projectTools are the tools of a project chat, in order.
var projectTools = []string{
	ToolTopologyReader, ToolGetTemplates, ToolCreateNode, ToolCreateLink, ToolStartNode, ToolStopNode,
	ToolSuspendNode, ToolUpdateNodeName, ToolDeleteNode, ToolDeleteLink, ToolLinkConditions, ToolAnalyzeTraffic,
}

// checkShape checks that s is a well-formed schema of the kind the model
// is given: typed, objects closed and listing their properties, required
// properties present, arrays with typed items.
func checkShape(t *testing.T, where string, s map[string]any) {
	t.Helper()
	typ, ok := s["type"].(string)
	if !ok {
		t.Errorf("%s: type %v, want one JSON type", where, s["type"])
		return
	}
	switch typ {
	case "object":
		props, ok := s["properties"].(map[string]any)
		if !ok {
			t.Errorf("%s: object without properties", where)
			return
		}
		if s["additionalProperties"] != false {
			t.Errorf("%s: additionalProperties %v, want false", where, s["additionalProperties"])
		}
		req, _ := s["required"].([]any)
		for _, r := range req {
			if _, ok := props[r.(string)]; !ok {
				t.Errorf("%s: required %q is not a property", where, r)
			}
		}
		for name, p := range props {
			pm, ok := p.(map[string]any)
			if !ok {
				t.Errorf("%s.%s: not a schema", where, name)
				continue
			}
			if d, _ := pm["description"].(string); d == "" {
				t.Errorf("%s.%s: no description", where, name)
			}
			checkShape(t, where+"."+name, pm)
		}
	case "array":
		items, ok := s["items"].(map[string]any)
		if !ok {
			t.Errorf("%s: array without items", where)
			return
		}
		if _, ok := s["minItems"].(float64); !ok {
			t.Errorf("%s: array without minItems", where)
		}
		if _, ok := s["maxItems"].(float64); !ok {
			t.Errorf("%s: array without maxItems", where)
		}
		checkShape(t, where+"[]", items)
	case "string", "integer", "number", "boolean":
	default:
		t.Errorf("%s: unknown type %q", where, typ)
	}
}

func TestSchemas(t *testing.T) {
	ts := New(Options{})
	project := ts.Project("8b6f3b63-7b8a-4c3e-9d62-0d1b2b1c9e10")
	if got := toolkittest.Names(project); !slices.Equal(got, projectTools) {
		t.Fatalf("project tools %v, want %v", got, projectTools)
	}
	gateway := ts.Gateway()
	if got, want := toolkittest.Names(gateway), append(slices.Clone(projectTools), ToolListProjects); !slices.Equal(got, want) {
		t.Fatalf("gateway tools %v, want %v", got, want)
	}
	sideEffects := map[string]bool{
		ToolCreateNode: true, ToolCreateLink: true, ToolStartNode: true, ToolStopNode: true, ToolSuspendNode: true,
		ToolUpdateNodeName: true, ToolDeleteNode: true, ToolDeleteLink: true, ToolLinkConditions: true,
	}
	waits := map[string]bool{ToolStartNode: true, ToolStopNode: true, ToolSuspendNode: true}
	for _, variant := range []struct {
		name  string
		tools []agent.Tool
	}{{"project", project}, {"gateway", gateway}} {
		for _, tool := range variant.tools {
			where := variant.name + "/" + tool.Name
			if tool.Description == "" || tool.Run == nil {
				t.Errorf("%s: no description or no Run", where)
			}
			if tool.SideEffects != sideEffects[tool.Name] {
				t.Errorf("%s: SideEffects %v", where, tool.SideEffects)
			}
			if tool.Name == ToolAnalyzeTraffic {
				if tool.Timeout < maxCaptureSeconds*time.Second+stopCaptureTimeout {
					t.Errorf("%s: Timeout %v shorter than the longest capture", where, tool.Timeout)
				}
			} else if waits[tool.Name] != (tool.Timeout >= 4*60e9) || (!waits[tool.Name] && tool.Timeout != 0) {
				t.Errorf("%s: Timeout %v", where, tool.Timeout)
			}
			var s map[string]any
			if err := json.Unmarshal(tool.Parameters, &s); err != nil {
				t.Fatalf("%s: parameters are not JSON: %v", where, err)
			}
			if s["type"] != "object" {
				t.Errorf("%s: parameters of type %v", where, s["type"])
			}
			checkShape(t, where, s)
			var parsed jsonschema.Schema
			if err := json.Unmarshal(tool.Parameters, &parsed); err != nil {
				t.Fatalf("%s: not a JSON schema: %v", where, err)
			}
			if _, err := parsed.Resolve(nil); err != nil {
				t.Errorf("%s: schema does not resolve: %v", where, err)
			}
			props := s["properties"].(map[string]any)
			_, hasProject := props["project_id"]
			wantProject := variant.name == "gateway" && tool.Name != ToolListProjects
			if hasProject != wantProject {
				t.Errorf("%s: project_id property present %v, want %v", where, hasProject, wantProject)
			}
			if wantProject {
				req, _ := s["required"].([]any)
				if len(req) == 0 || req[0] != "project_id" {
					t.Errorf("%s: required %v, want project_id first", where, req)
				}
				if !bytes.HasPrefix(tool.Parameters, []byte(`{"type":"object","properties":{"project_id":`)) {
					t.Errorf("%s: project_id is not the first property: %s", where, tool.Parameters)
				}
				if p := props["project_id"].(map[string]any); p["type"] != "string" || p["pattern"] != toolkit.UUIDPattern {
					t.Errorf("%s: project_id schema %v", where, p)
				}
			}
		}
	}
}

func TestNotConfigured(t *testing.T) {
	ts := New(Options{})
	for _, tool := range append(ts.Project("8b6f3b63-7b8a-4c3e-9d62-0d1b2b1c9e10"), ts.Gateway()...) {
		out, err := tool.Run(context.Background(), json.RawMessage(`{}`))
		if err == nil || err.Error() != "GNS3 is not configured" || out != "" {
			t.Errorf("%s: %q, %v; want the error \"GNS3 is not configured\"", tool.Name, out, err)
		}
	}
}

func TestArgumentValidation(t *testing.T) {
	ts := New(Options{})
	tools := map[string]*toolkit.Args{}
	for _, sp := range ts.tools.Defs {
		tools[sp.Name] = sp.Args(false)
		tools["v1/"+sp.Name] = sp.Args(true)
	}
	long := "[" + strings.TrimSuffix(strings.Repeat(`{"template":"VPCS"},`, 21), ",") + "]"
	tests := []struct{ tool, args, err string }{
		{ToolCreateNode, `{}`, `required: missing properties: ["nodes"]`},
		{ToolCreateNode, `{"nodes":[]}`, `nodes: minItems: array length 0 is less than 1`},
		{ToolCreateNode, `{"nodes":` + long + `}`, `nodes: maxItems: array length 21 is greater than 20`},
		{ToolCreateNode, `{"nodes":[{"name":"R1"}]}`, `nodes[]: required: missing properties: ["template"]`},
		{ToolCreateNode, `{"nodes":[{"template":""}]}`, `nodes[].template: minLength`},
		{ToolCreateNode, `{"nodes":[{"template":"VPCS","x":1.5,"y":2}]}`, `nodes[].x: type: 1.5 has type "number", want "integer"`},
		{ToolCreateNode, `{"nodes":[{"template":"VPCS","x":10}]}`, `dependentRequired`},
		{ToolCreateNode, `{"nodes":[{"template":"VPCS","color":"red"}]}`, `unexpected additional properties ["color"]`},
		{ToolCreateNode, `{"nodes":"VPCS"}`, `nodes: type: VPCS has type "string", want "array"`},
		{ToolCreateNode, `[1]`, `the arguments must be a JSON object`},
		{ToolCreateNode, `{"nodes":`, `not valid JSON`},
		{ToolCreateLink, `{"links":[{"node_a":"R1","port_a":"e0/0","node_b":"R2"}]}`, `missing properties: ["port_b"]`},
		{ToolStartNode, `{"nodes":["R1","R1"]}`, `uniqueItems`},
		{ToolStartNode, `{"nodes":[7]}`, `nodes[]: type: 7 has type "integer", want "string"`},
		{ToolDeleteLink, `{"links":["abc"]}`, `links[]: pattern`},
		{ToolTopologyReader, `{"x":1}`, `unexpected additional properties ["x"]`},
		{"v1/" + ToolStartNode, `{"nodes":["R1"]}`, `missing properties: ["project_id"]`},
		{"v1/" + ToolStartNode, `{"project_id":"p1","nodes":["R1"]}`, `project_id: pattern`},
	}
	for _, tt := range tests {
		_, err := tools[tt.tool].Parse(json.RawMessage(tt.args))
		if err == nil || !strings.HasPrefix(err.Error(), "invalid arguments: ") || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s %s: %v; want an error with %q", tt.tool, tt.args, err, tt.err)
		}
	}
	valid := []struct{ tool, args string }{
		{ToolTopologyReader, ``},
		{ToolTopologyReader, `null`},
		{ToolCreateNode, `{"nodes":[{"template":"VPCS","name":null,"x":null}]}`},
		{ToolCreateNode, `{"nodes":[{"template":"VPCS","x":-10,"y":20.0}]}`},
		{"v1/" + ToolStartNode, `{"project_id":"8b6f3b63-7b8a-4c3e-9d62-0d1b2b1c9e10","nodes":["R1"]}`},
	}
	for _, tt := range valid {
		if _, err := tools[tt.tool].Parse(json.RawMessage(tt.args)); err != nil {
			t.Errorf("%s %s: %v", tt.tool, tt.args, err)
		}
	}
}

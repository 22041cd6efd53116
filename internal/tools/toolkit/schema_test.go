package toolkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/auth"
)

type sample struct {
	Nodes []sampleNode `json:"nodes" jsonschema:"The nodes."`
	Note  *string      `json:"note,omitempty" jsonschema:"A note."`
}

type sampleNode struct {
	Name string `json:"name" jsonschema:"Its name."`
	X    *int   `json:"x,omitempty" jsonschema:"Its x."`
}

type sampleItem struct {
	Name string `json:"name"`
	Outcome
}

// env is what the sample tool sees of its calls.
type env struct{ calls []Call }

func sampleDef() *Def[*env] {
	d := Define("sample_tool", "A sample.", func(s *jsonschema.Schema) {
		NonEmpty(Array(s, "nodes", 1, 2).Items, "name")
	}, func(_ context.Context, e *env, a sample) Report[sampleItem] {
		items := make([]sampleItem, len(a.Nodes))
		for i, n := range a.Nodes {
			items[i].Name = n.Name
			if n.X != nil {
				items[i].Succeed()
			} else {
				items[i].Fail("no x for <" + n.Name + ">")
			}
		}
		return Finish(items)
	})
	d.SideEffects = true
	return d
}

func TestSchemaInferred(t *testing.T) {
	d := sampleDef()
	want := `{"type":"object","properties":{"nodes":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string","description":"Its name.","minLength":1},` +
		`"x":{"type":"integer","description":"Its x."}},"required":["name"],"additionalProperties":false},"description":"The nodes.","minItems":1,"maxItems":2},` +
		`"note":{"type":"string","description":"A note."}},"required":["nodes"],"additionalProperties":false}`
	if got := string(d.Args(false).JSON()); got != want {
		t.Errorf("project schema\n%s\nwant\n%s", got, want)
	}
	gw := string(d.Args(true).JSON())
	if !strings.HasPrefix(gw, `{"type":"object","properties":{"project_id":{"type":"string","description":"Id (UUID) of the GNS3 project to act on, from list_gns3_projects.","pattern":"`) ||
		!strings.Contains(gw, `"required":["project_id","nodes"]`) {
		t.Errorf("gateway schema %s", gw)
	}
	d.Global = true
	if d.Args(true) != d.Args(false) {
		t.Error("a global tool has a project_id")
	}
}

func TestParse(t *testing.T) {
	d := sampleDef()
	project, gateway := d.Args(false), d.Args(true)
	invalid := []struct {
		args *Args
		raw  string
		want string
	}{
		{project, ``, `required: missing properties: ["nodes"]`},
		{project, `[1]`, `the arguments must be a JSON object`},
		{project, `{"nodes":`, `not valid JSON`},
		{project, `{"nodes":[]}`, `nodes: minItems: array length 0 is less than 1`},
		{project, `{"nodes":[{"name":""}]}`, `nodes[].name: minLength`},
		{project, `{"nodes":[{"name":"a","x":1.5}]}`, `nodes[].x: type: 1.5 has type "number", want "integer"`},
		{project, `{"nodes":[{"name":"a"}],"color":"red"}`, `unexpected additional properties ["color"]`},
		// A null is dropped only where the schema lists the property.
		{project, `{"nodes":[{"name":"a"}],"color":null}`, `unexpected additional properties ["color"]`},
		{project, `{"nodes":[{"name":"a","y":null}]}`, `nodes[]: unexpected additional properties ["y"]`},
		{project, `{"nodes":[{"name":null}]}`, `nodes[]: required: missing properties: ["name"]`},
		{project, `{"nodes":[{"name":"a"}],"project_id":"8b6f3b63-7b8a-4c3e-9d62-0d1b2b1c9e10"}`, `project_id`},
		{gateway, `{"nodes":[{"name":"a"}]}`, `missing properties: ["project_id"]`},
		{gateway, `{"project_id":"p1","nodes":[{"name":"a"}]}`, `project_id: pattern`},
		{project, `{"nodes":"` + strings.Repeat("é", 400) + `"}`, `é...`},
	}
	for _, tt := range invalid {
		_, err := tt.args.Parse(json.RawMessage(tt.raw))
		if err == nil || !strings.HasPrefix(err.Error(), "invalid arguments: ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%.80s: %v; want an error with %q", tt.raw, err, tt.want)
		}
		if err != nil && len(err.Error()) > 400 {
			t.Errorf("%.80s: error of %d bytes", tt.raw, len(err.Error()))
		}
	}
	for _, raw := range []string{
		`{"nodes":[{"name":"a","x":null}],"note":null}`,
		`{"nodes":[{"name":"a","x":-10}]}`,
	} {
		if _, err := project.Parse(json.RawMessage(raw)); err != nil {
			t.Errorf("%s: %v", raw, err)
		}
	}
}

func TestSet(t *testing.T) {
	var logs bytes.Buffer
	e := &env{}
	set := &Set[*env]{
		Defs:       []*Def[*env]{sampleDef()},
		Configured: true,
		Begin:      func(_ context.Context, c Call) *env { e.calls = append(e.calls, c); return e },
		Logger:     slog.New(slog.NewTextHandler(&logs, nil)),
		Failures:   "sample tool had failures",
	}
	ctx := auth.WithIdentity(context.Background(), auth.Identity{UserID: "u", Token: "tok"})
	pt := set.Project("p-route")[0]
	if !pt.SideEffects || pt.Name != "sample_tool" {
		t.Errorf("tool %+v", pt)
	}
	out, err := pt.Run(ctx, json.RawMessage(`{"nodes":[{"name":"a","x":1},{"name":"b"}]}`))
	if err != nil || out != `{"success":false,"total":2,"successful":1,"failed":1,"results":[{"name":"a","status":"success"},{"name":"b","status":"failed","error":"no x for <b>"}]}` {
		t.Errorf("answer %s, %v", out, err)
	}
	if !strings.Contains(logs.String(), `msg="sample tool had failures" tool=sample_tool project_id=p-route total=2 failed=1 first_error="no x for <b>"`) {
		t.Errorf("log %s", logs.String())
	}
	pid := "8b6f3b63-7b8a-4c3e-9d62-0d1b2b1c9e10"
	if _, err := set.Gateway()[0].Run(context.Background(), json.RawMessage(`{"project_id":"`+pid+`","nodes":[{"name":"a","x":1}]}`)); err != nil {
		t.Fatal(err)
	}
	if want := []Call{{"sample_tool", "p-route", "tok"}, {"sample_tool", pid, ""}}; len(e.calls) != 2 || e.calls[0] != want[0] || e.calls[1] != want[1] {
		t.Errorf("calls %+v, want %+v", e.calls, want)
	}
	set.Configured = false
	if _, err := pt.Run(ctx, nil); !errors.Is(err, ErrNotConfigured) || err.Error() != "GNS3 is not configured" {
		t.Errorf("not configured: %v", err)
	}
	if len(e.calls) != 2 {
		t.Error("a tool ran without GNS3")
	}
}

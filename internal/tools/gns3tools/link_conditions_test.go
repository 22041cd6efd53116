package gns3tools

import (
	"reflect"
	"strings"
	"testing"

	"agentchat/internal/gns3/gns3test"
)

func TestLinkConditionsSetGetClear(t *testing.T) {
	e := newEnv(t)
	topo := e.fake.SeedTopology(e.pid)
	lid := topo.Links[0] // PC1 e0 - Switch1 e0

	a := e.Call(ToolLinkConditions, `{"action":"set","link":"PC1:e0, Switch1:Ethernet0","show_icon":false,
		"conditions":{"packet_loss":10,"delay_ms":100,"jitter_ms":5,"bpf":"icmp","frequency_drop":-1,"corrupt":3}}`)
	r := a.item(t, 0, "success")
	if r["link_id"] != lid || r["ends"] != "PC1 Ethernet0 <-> Switch1 Ethernet0" || r["show_icon"] != false {
		t.Errorf("set: %v", r)
	}
	want := map[string]any{"packet_loss": []any{10}, "delay": []any{100, 5}, "bpf": []any{"icmp"}, "frequency_drop": []any{-1}, "corrupt": []any{3}}
	puts := e.fake.LinkUpdates(lid)
	if len(puts) != 1 || !reflect.DeepEqual(puts[0]["filters"], want) || puts[0]["show_filters_icon"] != false || len(puts[0]) != 2 {
		t.Fatalf("GNS3 saw %v", puts)
	}
	if got := e.fake.Link(e.pid, lid)["filters"]; !reflect.DeepEqual(got, want) {
		t.Errorf("link filters %v", got)
	}

	// One end names the link too; get reads the conditions back.
	a = e.Call(ToolLinkConditions, `{"action":"get","link":"pc1:e0"}`)
	if c, _ := a.item(t, 0, "success")["conditions"].(map[string]any); len(c) != 5 || c["bpf"].([]any)[0] != "icmp" {
		t.Errorf("get: %v", a.Results[0])
	}
	a = e.Call(ToolLinkConditions, `{"action":"get_available","link":"`+lid+`"}`)
	if av, _ := a.item(t, 0, "success")["available"].([]any); len(av) != 5 {
		t.Errorf("available: %v", a.Results[0])
	}

	a = e.Call(ToolLinkConditions, `{"action":"clear","link":"`+lid+`"}`)
	a.item(t, 0, "success")
	puts = e.fake.LinkUpdates(lid)
	if len(puts) != 2 || !reflect.DeepEqual(puts[1], map[string]any{"filters": map[string]any{}}) {
		t.Errorf("clear sent %v", puts[1:])
	}
	if got := e.fake.Link(e.pid, lid)["filters"]; len(got.(map[string]any)) != 0 {
		t.Errorf("after clear: %v", got)
	}
}

// TestLinkConditionsRangesNeverReachGNS3: every out-of-range or unsafe
// condition is refused before any request changes the link.
func TestLinkConditionsRangesNeverReachGNS3(t *testing.T) {
	e := newEnv(t)
	topo := e.fake.SeedTopology(e.pid)
	lid := topo.Links[0]
	link := `"link":"` + lid + `"`
	for _, tt := range []struct{ args, want string }{
		{`{"action":"set",` + link + `,"conditions":{"packet_loss":101}}`, "maximum"},
		{`{"action":"set",` + link + `,"conditions":{"packet_loss":-1}}`, "minimum"},
		{`{"action":"set",` + link + `,"conditions":{"corrupt":1000}}`, "maximum"},
		{`{"action":"set",` + link + `,"conditions":{"frequency_drop":-2}}`, "minimum"},
		{`{"action":"set",` + link + `,"conditions":{"frequency_drop":32768}}`, "maximum"},
		{`{"action":"set",` + link + `,"conditions":{"delay_ms":32768}}`, "maximum"},
		{`{"action":"set",` + link + `,"conditions":{"delay_ms":10,"jitter_ms":-5}}`, "minimum"},
		{`{"action":"set",` + link + `,"conditions":{"bpf":"icmp\nor tcp"}}`, "pattern"},
		{`{"action":"set",` + link + `,"conditions":{"bpf":"icmp\u0000"}}`, "pattern"},
		{`{"action":"set",` + link + `,"conditions":{"bpf":"` + strings.Repeat("a", 257) + `"}}`, "maxLength"},
		{`{"action":"set",` + link + `,"conditions":{"packet_loss":1.5}}`, "integer"},
		{`{"action":"drop",` + link + `}`, "enum"},
		{`{"action":"set",` + link + `,"conditions":{"loss":5}}`, "loss"},
	} {
		out, err := e.Rec.Run(userCtx(), e.Tool(ToolLinkConditions), tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %q, %v; want an error with %q", tt.args, out, err, tt.want)
		}
	}
	for _, tt := range []struct{ args, want string }{
		{`{"action":"set",` + link + `}`, "set needs at least one condition"},
		{`{"action":"set",` + link + `,"conditions":{}}`, "set needs at least one condition"},
		{`{"action":"set",` + link + `,"conditions":{"jitter_ms":5}}`, "jitter_ms needs delay_ms"},
		{`{"action":"clear",` + link + `,"conditions":{"packet_loss":5}}`, "clear takes no conditions"},
		{`{"action":"get",` + link + `,"show_icon":true}`, "get takes no conditions"},
	} {
		a := e.Call(ToolLinkConditions, tt.args)
		if msg := errText(a.item(t, 0, "failed")); !strings.Contains(msg, tt.want) {
			t.Errorf("%s: %q, want %q", tt.args, msg, tt.want)
		}
	}
	if n := e.fake.Hits("PUT /v3/projects/" + e.pid + "/links/" + lid); n != 0 || len(e.fake.LinkUpdates(lid)) != 0 {
		t.Errorf("GNS3 got %d PUTs", n)
	}
}

func TestLinkConditionsRefusals(t *testing.T) {
	e := newEnv(t)
	topo := e.fake.SeedTopology(e.pid)
	sw2 := e.fake.AddNode(e.pid, gns3test.SwitchNode(e.pid, "Switch2", 200, 200))
	trunk := e.fake.AddLink(e.pid, gns3test.LinkPayload(e.pid, topo.Nodes["Switch1"], 0, 6, "e6", sw2, 0, 0, "e0"))

	// Switches apply no conditions: GNS3 would store them and do nothing.
	a := e.Call(ToolLinkConditions, `{"action":"set","link":"Switch1:e6","conditions":{"packet_loss":50}}`)
	if msg := errText(a.item(t, 0, "failed")); !strings.Contains(msg, "GNS3 applies no conditions on this link") {
		t.Errorf("switch link: %q", msg)
	}
	a = e.Call(ToolLinkConditions, `{"action":"get_available","link":"`+trunk+`"}`)
	if r := a.item(t, 0, "success"); r["available"] != nil || !strings.Contains(r["note"].(string), "applies no conditions") {
		t.Errorf("available on a switch link: %v", r)
	}
	if len(e.fake.LinkUpdates(trunk)) != 0 {
		t.Error("a PUT reached GNS3")
	}

	for ref, want := range map[string]string{
		"R1:gi0/3":                             "no link joins R1 Gi0/3",
		"R1:gi0/0,PC1:e0":                      "no link joins R1 Gi0/0 and PC1 Ethernet0",
		"R9:e0":                                "node 'R9' not found",
		"PC1":                                  "write it node:port",
		"0d3e5fa5-7c3b-4d1b-9a55-1b2b3c4d5e6f": "link 0d3e5fa5-7c3b-4d1b-9a55-1b2b3c4d5e6f not found",
		"a:1,b:2,c:3":                          "give a link_id, or one or two ends",
	} {
		a := e.Call(ToolLinkConditions, `{"action":"get","link":"`+ref+`"}`)
		if msg := errText(a.item(t, 0, "failed")); !strings.Contains(msg, want) {
			t.Errorf("link %q: %q, want %q", ref, msg, want)
		}
	}

	// GNS3's refusal comes back readable.
	e.fake.SetRequestAuthorizer(gns3test.DenyPrivileges("Link.Modify"))
	a = e.Call(ToolLinkConditions, `{"action":"set","link":"R1:gi0/0","conditions":{"delay_ms":200}}`)
	if msg := errText(a.item(t, 0, "failed")); msg != "GNS3 refused the conditions: 403: the user lacks the GNS3 permission for this action (Permission denied (privilege Link.Modify is required))" {
		t.Errorf("refused: %q", msg)
	}
}

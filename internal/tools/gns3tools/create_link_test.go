package gns3tools

import (
	"strings"
	"testing"
)

// linkEnd is one end of a link the fake holds.
type linkEnd struct {
	node             string
	adapter, portNum int
}

// fakeLinks returns the ends of the fake's links, by link id.
func (e *env) fakeLinks() map[string][2]linkEnd {
	out := map[string][2]linkEnd{}
	for _, l := range e.fake.Links(e.pid) {
		var ends [2]linkEnd
		for i, raw := range l["nodes"].([]any) {
			m := raw.(map[string]any)
			ends[i] = linkEnd{m["node_id"].(string), num(m["adapter_number"]), num(m["port_number"])}
		}
		out[l["link_id"].(string)] = ends
	}
	return out
}

func TestCreateLinks(t *testing.T) {
	e := newEnv(t)
	e.fake.SeedTemplates()
	topo := e.fake.SeedTopology(e.pid)
	created := e.Call(ToolCreateNode, `{"nodes":[
		{"template":"IOU L3","name":"IR1"},{"template":"IOU L3","name":"IR2"},
		{"template":"Cisco IOSv","name":"V1"},{"template":"Cisco 7200","name":"C1"},{"template":"Alpine","name":"D1"}]}`)
	if !created.Success {
		t.Fatalf("create: %+v", created)
	}
	id := map[string]string{}
	for _, r := range created.Results {
		id[r["name"].(string)] = r["node_id"].(string)
	}
	for k, v := range topo.Nodes {
		id[k] = v
	}
	a := e.Call(ToolCreateLink, `{"links":[
		{"node_a":"IR1","port_a":"e0/0","node_b":"ir2","port_b":"Ethernet0/0"},
		{"node_a":"V1","port_a":"Gi0/2","node_b":"Switch1","port_b":"e3"},
		{"node_a":"C1","port_a":"f0/0","node_b":"V1","port_b":"GigabitEthernet0/1"},
		{"node_a":"`+id["C1"]+`","port_a":"Ethernet1/3","node_b":"D1","port_b":"eth1"},
		{"node_a":"PC1","port_a":"e0","node_b":"V1","port_b":"g0/3"},
		{"node_a":"V1","port_a":"e0/9","node_b":"IR1","port_b":"e1/0"},
		{"node_a":"R9","port_a":"e0/0","node_b":"IR1","port_b":"e1/1"},
		{"node_a":"IR1","port_a":"s2/0","node_b":"IR2","port_b":"s2/0"},
		{"node_a":"IR1","port_a":"e1/2","node_b":"IR1","port_b":"e1/2"},
		{"node_a":"IR2","port_a":"e1/0","node_b":"D1","port_b":"eth1"}]}`)
	if a.Successful != 5 || a.Failed != 5 {
		t.Fatalf("answer %+v", a)
	}
	links := e.fakeLinks()
	wantEnds := map[int][2]linkEnd{
		0: {{id["IR1"], 0, 0}, {id["IR2"], 0, 0}},
		1: {{id["V1"], 2, 0}, {id["Switch1"], 0, 3}},
		2: {{id["C1"], 0, 0}, {id["V1"], 1, 0}},
		3: {{id["C1"], 1, 3}, {id["D1"], 1, 0}},
		7: {{id["IR1"], 2, 0}, {id["IR2"], 2, 0}},
	}
	for i, w := range wantEnds {
		r := a.item(t, i, "success")
		if got, ok := links[r["link_id"].(string)]; !ok || got != w {
			t.Errorf("link %d: ends %v, want %v", i, got, w)
		}
	}
	if r := a.Results[1]; r["node_a"] != "V1" || r["port_a"] != "Gi0/2" || r["node_b"] != "Switch1" || r["port_b"] != "Ethernet3" {
		t.Errorf("link 1 names: %v", r)
	}
	if r := a.Results[3]; r["node_a"] != "C1" || r["port_b"] != "eth1" {
		t.Errorf("link 3 names: %v", r)
	}
	fails := map[int]string{
		4: "409: Port is already used (PC1 Ethernet0 is linked to Switch1 Ethernet0 by link " + topo.Links[0] + ")",
		5: "port 'e0/9' not found on V1; ports: Gi0/0, Gi0/1, Gi0/2, Gi0/3",
		6: "node 'R9' not found; nodes: PC1, PC2, Switch1, R1, ", // then the new nodes, in creation order
		8: "a link needs two different ports; both ends are IR1 Ethernet1/2",
		9: "port eth1 of D1 is already used by link 4 of this call",
	}
	for i, w := range fails {
		if msg := errText(a.item(t, i, "failed")); msg != w && !(strings.HasSuffix(w, ", ") && strings.HasPrefix(msg, w)) {
			t.Errorf("link %d: error %q, want %q", i, msg, w)
		}
	}
	if len(links) != 3+5 {
		t.Errorf("%d links in the project, want 8", len(links))
	}
}

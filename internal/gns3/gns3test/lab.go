package gns3test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Messages of GNS3 v3 (gns3server/controller/project.py, link.py,
// node.py, services/templates.py, controller/__init__.py).
const (
	msgNotOpened    = "The project is not opened"
	msgPortUsed     = "Port is already used"
	msgSelfLink     = "Cannot connect to itself"
	msgRenameOnline = "Sorry, it is not possible to rename a node that is already powered on"
)

func writeMessage(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, map[string]any{"message": fmt.Sprintf(format, args...)})
}

// validationError answers 422 the way GNS3 v3 reports a body that does
// not match the schema.
func validationError(w http.ResponseWriter, loc, msg string) {
	writeMessage(w, http.StatusUnprocessableEntity, "1 validation error for Request\n%s\n  %s", loc, msg)
}

// decodeBody reads a JSON object body, numbers with an integral value
// as int.
func decodeBody(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	var body map[string]any
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil || body == nil {
		validationError(w, "body", "value is not a valid dict (type=type_error.dict)")
		return nil, false
	}
	normalized, _ := normalize(body).(map[string]any)
	return normalized, true
}

// normalize turns integral float64 values into int, recursively.
func normalize(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	}
	return v
}

// intField returns body[k] as an int; ok false when missing or not an
// integer.
func intField(body map[string]any, k string) (int, bool) {
	v, ok := body[k].(int)
	return v, ok
}

// deepCopy copies a JSON-like value.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = deepCopy(e)
		}
		return s
	case []map[string]any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = deepCopy(e)
		}
		return s
	}
	return v
}

func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	c, _ := deepCopy(m).(map[string]any)
	return c
}

// lockedProject checks the project of the request with s.mu held: 422 for
// a malformed id, 404 when missing, and, when mustBeOpen, 403 when closed
// (GNS3's open_required).
func (s *Server) lockedProject(w http.ResponseWriter, r *http.Request, mustBeOpen bool) (string, bool) {
	id := r.PathValue("project_id")
	if !validID(w, "project_id", id) {
		return "", false
	}
	p, ok := s.projects[id]
	if !ok {
		projectNotFound(w, id)
		return "", false
	}
	if mustBeOpen && p["status"] == "closed" {
		writeMessage(w, http.StatusForbidden, msgNotOpened)
		return "", false
	}
	return id, true
}

// lockedNode finds a node with s.mu held, or answers 404 as GNS3 does.
func (s *Server) lockedNode(w http.ResponseWriter, projectID, nodeID string) (int, map[string]any, bool) {
	for i, n := range s.nodes[projectID] {
		if n["node_id"] == nodeID {
			return i, n, true
		}
	}
	writeMessage(w, http.StatusNotFound, "Node ID %s doesn't exist", nodeID)
	return 0, nil, false
}

// settle applies the status transitions that are due (s.mu held).
func (s *Server) settle() {
	now := s.now()
	for id, t := range s.pending {
		if now.Before(t.at) {
			continue
		}
		delete(s.pending, id)
		for _, nodes := range s.nodes {
			for _, n := range nodes {
				if n["node_id"] == id {
					n["status"] = t.status
				}
			}
		}
	}
}

// freeConsole returns the lowest TCP port from 5000 that no node uses for
// its console or aux, as the compute's port manager allocates them.
func (s *Server) freeConsole() int {
	used := map[int]bool{}
	for _, nodes := range s.nodes {
		for _, n := range nodes {
			for _, k := range []string{"console", "aux"} {
				if p := num(n, k, 0); p > 0 {
					used[p] = true
				}
			}
		}
	}
	p := 5000
	for used[p] {
		p++
	}
	return p
}

var replacementField = regexp.MustCompile(`\{([^{}]*)\}`)

// allocateName follows Project.update_allocated_node_name: spaces removed;
// a name already taken has its trailing digits replaced by {0}; a name
// with {0} or {id} takes the first free number from 1; a plain name taken
// gets a number appended. taken is the set of the project's other names.
// On failure it returns GNS3's message (answered with 409).
func allocateName(base string, taken map[string]bool) (name, failure string) {
	base = strings.ReplaceAll(base, " ", "")
	if taken[base] {
		base = regexp.MustCompile(`[0-9]+$`).ReplaceAllString(base, "{0}")
	}
	if strings.Contains(base, "{0}") || strings.Contains(base, "{id}") {
		for _, m := range replacementField.FindAllStringSubmatch(base, -1) {
			switch m[1] {
			case "0", "id", "name":
			case "":
				return "", fmt.Sprintf("%s is not a valid replacement string in the node name", base)
			default:
				return "", fmt.Sprintf("{%s} is not a valid replacement string in the node name", m[1])
			}
		}
		for i := 1; i < 1000000; i++ {
			n := strings.NewReplacer("{0}", fmt.Sprint(i), "{id}", fmt.Sprint(i), "{name}", "Node").Replace(base)
			if !taken[n] {
				return n, ""
			}
		}
	} else {
		if !taken[base] {
			return base, ""
		}
		for i := 1; i < 1000000; i++ {
			if n := base + fmt.Sprint(i); !taken[n] {
				return n, ""
			}
		}
	}
	return "", "A node name could not be allocated (node limit reached?)"
}

// takenNames returns the names of the project's nodes but except.
func (s *Server) takenNames(projectID, except string) map[string]bool {
	taken := map[string]bool{}
	for _, n := range s.nodes[projectID] {
		if n["node_id"] != except {
			taken[str(n, "name")] = true
		}
	}
	return taken
}

func (s *Server) listTemplates(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]map[string]any, 0, len(s.templates))
	for _, builtin := range []bool{false, true} { // database templates first, as GNS3 lists them
		for _, t := range s.templates {
			if (t["builtin"] == true) == builtin {
				out = append(out, t)
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) template(id string) map[string]any {
	for _, t := range s.templates {
		if t["template_id"] == id {
			return t
		}
	}
	return nil
}

// createNodeFromTemplate is POST /v3/projects/{p}/templates/{t}.
func (s *Server) createNodeFromTemplate(w http.ResponseWriter, r *http.Request) {
	pid, tid := r.PathValue("project_id"), r.PathValue("template_id")
	if !validID(w, "project_id", pid) || !validID(w, "template_id", tid) {
		return
	}
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	x, okX := intField(body, "x")
	y, okY := intField(body, "y")
	if !okX || !okY {
		validationError(w, "body -> x", "field required (type=value_error.missing)")
		return
	}
	computeID, _ := body["compute_id"].(string)

	s.mu.Lock()
	defer s.mu.Unlock()
	tmpl := s.template(tid)
	if tmpl == nil { // GNS3 looks the template up first
		writeMessage(w, http.StatusNotFound, "Template '%s' not found", tid)
		return
	}
	if _, ok := s.lockedProject(w, r, true); !ok {
		return
	}
	if computeID == "" {
		computeID = str(tmpl, "compute_id")
	}
	if computeID != "" && computeID != "local" {
		writeMessage(w, http.StatusNotFound, "Compute ID %s doesn't exist", computeID)
		return
	}
	format := str(tmpl, "default_name_format")
	if format == "" {
		format = "{name}-{0}"
	}
	name, failure := allocateName(strings.ReplaceAll(format, "{name}", str(tmpl, "name")), s.takenNames(pid, ""))
	if failure != "" {
		writeMessage(w, http.StatusConflict, "%s", failure)
		return
	}
	s.macs++
	path, _ := s.projects[pid]["path"].(string)
	node := nodeFromTemplate(pid, path, uuid.NewString(), name, tmpl, x, y, s.freeConsole(), s.macs)
	s.nodes[pid] = append(s.nodes[pid], node)
	writeJSON(w, http.StatusCreated, node)
}

// Node fields PUT may change (NodeUpdate); the others are ignored.
var updatableNodeFields = map[string]bool{
	"console": true, "console_type": true, "console_auto_start": true, "aux": true, "aux_type": true,
	"label": true, "symbol": true, "x": true, "y": true, "z": true, "locked": true, "port_name_format": true,
	"port_segment_size": true, "first_port_name": true, "custom_adapters": true, "tags": true,
}

// portFields change the node's ports when updated.
var portFields = map[string]bool{
	"port_name_format": true, "port_segment_size": true, "first_port_name": true, "custom_adapters": true, "properties": true,
}

// updateNode is PUT /v3/projects/{p}/nodes/{n}.
func (s *Server) updateNode(w http.ResponseWriter, r *http.Request) {
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	if v, ok := body["name"]; ok {
		if _, isStr := v.(string); !isStr {
			validationError(w, "body -> name", "str type expected (type=type_error.str)")
			return
		}
	}
	for _, k := range []string{"x", "y", "z"} {
		if v, ok := body[k]; ok {
			if _, isInt := v.(int); !isInt {
				validationError(w, "body -> "+k, "value is not a valid integer (type=type_error.integer)")
				return
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, ok := s.lockedProject(w, r, true)
	if !ok {
		return
	}
	nid := r.PathValue("item_id")
	if !validID(w, "node_id", nid) {
		return
	}
	_, node, ok := s.lockedNode(w, pid, nid)
	if !ok {
		return
	}
	s.settle()
	if v, ok := body["name"]; ok && v != node["name"] {
		newName := v.(string)
		if node["status"] == "started" && !alwaysRunning(str(node, "node_type")) {
			writeMessage(w, http.StatusConflict, msgRenameOnline)
			return
		}
		if newName != "" {
			var failure string
			if newName, failure = allocateName(newName, s.takenNames(pid, nid)); failure != "" {
				writeMessage(w, http.StatusConflict, "%s", failure)
				return
			}
		}
		node["name"] = newName
		if l, ok := node["label"].(map[string]any); ok && l["text"] != newName {
			l["text"], l["x"] = newName, nil
		}
	}
	ports := false
	for k, v := range body {
		switch {
		case k == "properties":
			props, _ := node["properties"].(map[string]any)
			if props == nil {
				props = map[string]any{}
				node["properties"] = props
			}
			if m, ok := v.(map[string]any); ok {
				for pk, pv := range m {
					props[pk] = pv
				}
			}
		case updatableNodeFields[k]:
			node[k] = v
		default:
			continue
		}
		ports = ports || portFields[k]
	}
	if ports {
		node["ports"] = listPorts(node)
	}
	writeJSON(w, http.StatusOK, node)
}

// deleteNode is DELETE /v3/projects/{p}/nodes/{n}: the node and its links.
func (s *Server) deleteNode(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, ok := s.lockedProject(w, r, true)
	if !ok {
		return
	}
	nid := r.PathValue("item_id")
	if !validID(w, "node_id", nid) {
		return
	}
	i, node, ok := s.lockedNode(w, pid, nid)
	if !ok {
		return
	}
	if node["locked"] == true {
		writeMessage(w, http.StatusConflict, "Node %s cannot be deleted because it is locked", str(node, "name"))
		return
	}
	s.removeNodeLinks(pid, nid)
	s.nodes[pid] = append(s.nodes[pid][:i:i], s.nodes[pid][i+1:]...)
	delete(s.pending, nid)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) removeNodeLinks(projectID, nodeID string) {
	kept := s.links[projectID][:0:0]
	for _, l := range s.links[projectID] {
		if !linkUses(l, nodeID, -1, -1) {
			kept = append(kept, l)
		}
	}
	s.links[projectID] = kept
}

// linkEnds returns the node ends of a link payload.
func linkEnds(l map[string]any) []map[string]any {
	var out []map[string]any
	switch ends := l["nodes"].(type) {
	case []any:
		for _, e := range ends {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
	case []map[string]any:
		out = ends
	}
	return out
}

// linkUses reports whether a link ends on the node (adapter and port < 0:
// any port of it).
func linkUses(l map[string]any, nodeID string, adapter, port int) bool {
	for _, e := range linkEnds(l) {
		if e["node_id"] == nodeID && (adapter < 0 || (num(e, "adapter_number", -1) == adapter && num(e, "port_number", -1) == port)) {
			return true
		}
	}
	return false
}

// nodeAction is POST /v3/projects/{p}/nodes/{n}/{start|stop|suspend|reload}:
// 204, the status changing after the node's transition delay. Built-in
// node types do nothing; suspend does nothing for VPCS and IOU (GNS3 v3
// swallows the compute's 405) and for a node that is not started.
func (s *Server) nodeAction(w http.ResponseWriter, r *http.Request) {
	action := r.PathValue("action")
	switch action {
	case "start", "stop", "suspend", "reload":
	default:
		notFoundRoute(w, r)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, ok := s.lockedProject(w, r, true)
	if !ok {
		return
	}
	nid := r.PathValue("item_id")
	if !validID(w, "node_id", nid) {
		return
	}
	_, node, ok := s.lockedNode(w, pid, nid)
	if !ok {
		return
	}
	s.settle()
	typ := str(node, "node_type")
	if alwaysRunning(typ) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	current := str(node, "status")
	if t, ok := s.pending[nid]; ok {
		current = t.status
	}
	target := current
	switch action {
	case "start", "reload":
		target = "started"
	case "stop":
		target = "stopped"
	case "suspend":
		if canSuspend(typ) && current == "started" {
			target = "suspended"
		}
	}
	if target != current || action == "reload" {
		d, ok := s.delays[nid]
		if !ok {
			d = s.defaultDelay
		}
		if d <= 0 {
			delete(s.pending, nid)
			node["status"] = target
		} else {
			s.pending[nid] = transition{status: target, at: s.now().Add(d)}
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// createLink is POST /v3/projects/{p}/links, checked as Link.add_node
// checks each end in turn.
func (s *Server) createLink(w http.ResponseWriter, r *http.Request) {
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	raw, _ := body["nodes"].([]any)
	if len(raw) != 2 {
		validationError(w, "body -> nodes", fmt.Sprintf("List should have exactly 2 items after validation, not %d", len(raw)))
		return
	}
	type end struct {
		nodeID         string
		adapter, port  int
		label          any
		node, portData map[string]any
	}
	ends := make([]end, 0, 2)
	for i, e := range raw {
		m, _ := e.(map[string]any)
		nodeID, _ := m["node_id"].(string)
		if _, err := uuid.Parse(nodeID); err != nil {
			validationError(w, fmt.Sprintf("body -> nodes -> %d -> node_id", i), "value is not a valid uuid (type=type_error.uuid)")
			return
		}
		a, okA := intField(m, "adapter_number")
		p, okP := intField(m, "port_number")
		if !okA || !okP {
			validationError(w, fmt.Sprintf("body -> nodes -> %d -> adapter_number", i), "value is not a valid integer (type=type_error.integer)")
			return
		}
		ends = append(ends, end{nodeID: nodeID, adapter: a, port: p, label: m["label"]})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, ok := s.lockedProject(w, r, true)
	if !ok {
		return
	}
	for i := range ends {
		e := &ends[i]
		_, node, ok := s.lockedNode(w, pid, e.nodeID)
		if !ok {
			return
		}
		e.node = node
		ports, _ := node["ports"].([]any)
		for _, p := range ports {
			if pm, ok := p.(map[string]any); ok && num(pm, "adapter_number", -1) == e.adapter && num(pm, "port_number", -1) == e.port {
				e.portData = pm
				break
			}
		}
		if e.portData == nil {
			writeMessage(w, http.StatusNotFound, "Port %d/%d for %s not found", e.adapter, e.port, str(node, "name"))
			return
		}
		for _, l := range s.links[pid] {
			if linkUses(l, e.nodeID, e.adapter, e.port) {
				writeMessage(w, http.StatusConflict, msgPortUsed)
				return
			}
		}
		if i == 1 {
			other := ends[0]
			if other.nodeID == e.nodeID {
				writeMessage(w, http.StatusConflict, msgSelfLink)
				return
			}
			ot, t := str(other.node, "node_type"), str(node, "node_type")
			if (t == "nat" || t == "cloud") && (ot == "nat" || ot == "cloud") {
				writeMessage(w, http.StatusConflict, "Connecting a %s to a %s is not allowed", ot, t)
				return
			}
			if olt, lt := str(other.portData, "link_type"), str(e.portData, "link_type"); olt != lt {
				writeMessage(w, http.StatusConflict, "Connecting a %s interface to a %s interface is not allowed", olt, lt)
				return
			}
		}
	}
	link := LinkPayload(pid, ends[0].nodeID, ends[0].adapter, ends[0].port, "", ends[1].nodeID, ends[1].adapter, ends[1].port, "")
	for i, e := range linkEnds(link) {
		if l, ok := ends[i].label.(map[string]any); ok {
			e["label"] = l
		} else {
			e["label"] = map[string]any{"text": fmt.Sprintf("%d/%d", ends[i].adapter, ends[i].port), "style": labelStyle}
		}
	}
	link["link_type"] = str(ends[0].portData, "link_type")
	s.links[pid] = append(s.links[pid], link)
	writeJSON(w, http.StatusCreated, link)
}

// deleteLink is DELETE /v3/projects/{p}/links/{l}.
func (s *Server) deleteLink(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, ok := s.lockedProject(w, r, true)
	if !ok {
		return
	}
	lid := r.PathValue("item_id")
	if !validID(w, "link_id", lid) {
		return
	}
	for i, l := range s.links[pid] {
		if l["link_id"] == lid {
			s.links[pid] = append(s.links[pid][:i:i], s.links[pid][i+1:]...)
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	writeMessage(w, http.StatusNotFound, "Link ID %s doesn't exist", lid)
}

// AddTemplate adds (or replaces, by template_id) a template payload, as
// GET /v3/templates lists it, and returns its id (a new one when
// template_id is missing or empty). Nodes created from it follow its
// template_type, default_name_format and type fields (see QemuTemplate,
// C7200Template, IOUL3Template, DockerTemplate).
func (s *Server) AddTemplate(t map[string]any) string {
	t = copyMap(t)
	id, _ := t["template_id"].(string)
	if id == "" {
		id = uuid.NewString()
		t["template_id"] = id
	}
	normalize(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, old := range s.templates {
		if old["template_id"] == id {
			s.templates[i] = t
			return id
		}
	}
	s.templates = append(s.templates, t)
	return id
}

// RemoveTemplate removes a template (built-in ones too); GNS3 then
// answers 404 for it.
func (s *Server) RemoveTemplate(templateID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, t := range s.templates {
		if t["template_id"] == templateID {
			s.templates = append(s.templates[:i:i], s.templates[i+1:]...)
			return
		}
	}
}

// Templates returns copies of the templates.
func (s *Server) Templates() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]map[string]any, 0, len(s.templates))
	for _, t := range s.templates {
		out = append(out, copyMap(t))
	}
	return out
}

// Nodes returns copies of a project's nodes, as GET .../nodes would.
func (s *Server) Nodes(projectID string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	out := make([]map[string]any, 0, len(s.nodes[projectID]))
	for _, n := range s.nodes[projectID] {
		out = append(out, copyMap(n))
	}
	return out
}

// Node returns a copy of one node, or nil.
func (s *Server) Node(projectID, nodeID string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	for _, n := range s.nodes[projectID] {
		if n["node_id"] == nodeID {
			return copyMap(n)
		}
	}
	return nil
}

// Links returns copies of a project's links.
func (s *Server) Links(projectID string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]map[string]any, 0, len(s.links[projectID]))
	for _, l := range s.links[projectID] {
		out = append(out, copyMap(l))
	}
	return out
}

// SetNodeStatus sets a node's status at once ("started", "stopped",
// "suspended"), dropping any transition under way.
func (s *Server) SetNodeStatus(projectID, nodeID, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, nodeID)
	for _, n := range s.nodes[projectID] {
		if n["node_id"] == nodeID {
			n["status"] = status
		}
	}
}

// SetTransitionDelay makes start, stop and suspend of the node take d: the
// request answers at once, and the node shows its old status until d has
// passed (a node still booting). d <= 0 means immediate; it overrides
// SetDefaultTransitionDelay for that node.
func (s *Server) SetTransitionDelay(nodeID string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delays[nodeID] = d
}

// SetDefaultTransitionDelay is SetTransitionDelay for every node without
// its own delay (0 by default: immediate).
func (s *Server) SetDefaultTransitionDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.defaultDelay = d
}

// SetClock replaces the clock of transition delays (time.Now by default).
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

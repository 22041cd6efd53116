package gns3test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// filterNodeTypes are the node types whose emulator applies link filters
// (gns3server/controller/link.py _get_filter_node).
var filterNodeTypes = map[string]bool{
	"vpcs": true, "vmware": true, "dynamips": true, "qemu": true, "iou": true,
	"cloud": true, "nat": true, "virtualbox": true, "docker": true,
}

// AvailableFilters is GNS3 v3's answer to GET .../links/{l}/available_filters
// for a link with a node that applies filters (FILTERS of
// gns3server/controller/link.py).
func AvailableFilters() []map[string]any {
	param := func(name string, lo, hi int, unit string) map[string]any {
		return map[string]any{"name": name, "minimum": lo, "maximum": hi, "type": "int", "unit": unit}
	}
	return []map[string]any{
		{"type": "frequency_drop", "name": "Frequency drop",
			"description": "It will drop everything with a -1 frequency, drop every Nth packet with a positive frequency, or drop nothing",
			"parameters":  []any{param("Frequency", -1, 32767, "th packet")}},
		{"type": "packet_loss", "name": "Packet loss",
			"description": "The percentage represents the chance for a packet to be lost",
			"parameters":  []any{param("Chance", 0, 100, "%")}},
		{"type": "delay", "name": "Delay",
			"description": "Delay packets in milliseconds. You can add jitter in milliseconds (+/-) of the delay",
			"parameters":  []any{param("Latency", 0, 32767, "ms"), param("Jitter (-/+)", 0, 32767, "ms")}},
		{"type": "corrupt", "name": "Corrupt",
			"description": "The percentage represents the chance for a packet to be corrupted",
			"parameters":  []any{param("Chance", 0, 100, "%")}},
		{"type": "bpf", "name": "Berkeley Packet Filter (BPF)",
			"description": "This filter will drop any packet matching a BPF expression. Put one expression per line",
			"parameters":  []any{map[string]any{"name": "Filters", "type": "text"}}},
	}
}

// captureState is what the fake knows of link captures and updates.
type captureState struct {
	sources map[string]func() io.Reader // link id -> the pcap bytes its capture streams
	updates map[string][]map[string]any // link id -> the PUT bodies received
	streams map[string]int              // link id -> streams open now
}

func newCaptureState() *captureState {
	return &captureState{sources: map[string]func() io.Reader{}, updates: map[string][]map[string]any{}, streams: map[string]int{}}
}

// registerLinkRoutes adds the link update, filter and capture routes.
func (s *Server) registerLinkRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v3/projects/{project_id}/links/{item_id}/available_filters", s.availableFilters)
	mux.HandleFunc("PUT /v3/projects/{project_id}/links/{item_id}", s.updateLink)
	mux.HandleFunc("POST /v3/projects/{project_id}/links/{item_id}/capture/start", s.startCapture)
	mux.HandleFunc("POST /v3/projects/{project_id}/links/{item_id}/capture/stop", s.stopCapture)
	mux.HandleFunc("GET /v3/projects/{project_id}/links/{item_id}/capture/stream", s.streamCapture)
}

// lockedLink finds the link of the request with s.mu held, or answers
// the error as GNS3 does.
func (s *Server) lockedLink(w http.ResponseWriter, r *http.Request, mustBeOpen bool) (string, map[string]any, bool) {
	pid, ok := s.lockedProject(w, r, mustBeOpen)
	if !ok {
		return "", nil, false
	}
	lid := r.PathValue("item_id")
	if !validID(w, "link_id", lid) {
		return "", nil, false
	}
	s.settle()
	for _, l := range s.links[pid] {
		if l["link_id"] == lid {
			return pid, l, true
		}
	}
	writeMessage(w, http.StatusNotFound, "Link ID %s doesn't exist", lid)
	return "", nil, false
}

// linkNodes returns the nodes at the ends of l (s.mu held).
func (s *Server) linkNodes(pid string, l map[string]any) []map[string]any {
	var out []map[string]any
	for _, e := range linkEnds(l) {
		for _, n := range s.nodes[pid] {
			if n["node_id"] == e["node_id"] {
				out = append(out, n)
			}
		}
	}
	return out
}

func (s *Server) availableFilters(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, l, ok := s.lockedLink(w, r, false)
	if !ok {
		return
	}
	for _, n := range s.linkNodes(pid, l) {
		if filterNodeTypes[str(n, "node_type")] {
			writeJSON(w, http.StatusOK, AvailableFilters())
			return
		}
	}
	writeJSON(w, http.StatusOK, []any{})
}

// updateLink is PUT /v3/projects/{p}/links/{l}: filters (as
// Link.update_filters keeps them: strings trimmed, numbers made integers,
// a filter whose first value is 0 or "" dropped), suspend, link_style and
// show_filters_icon; other fields are ignored, as pydantic does.
func (s *Server) updateLink(w http.ResponseWriter, r *http.Request) {
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	var filters map[string]any
	if raw, present := body["filters"]; present && raw != nil {
		m, isMap := raw.(map[string]any)
		if !isMap {
			validationError(w, "body -> filters", "value is not a valid dict (type=type_error.dict)")
			return
		}
		filters = map[string]any{}
		for name, vals := range m {
			list, isList := vals.([]any)
			if !isList {
				writeMessage(w, http.StatusInternalServerError, "Internal Server Error")
				return
			}
			kept := make([]any, 0, len(list))
			for _, v := range list {
				switch x := v.(type) {
				case string:
					kept = append(kept, strings.Trim(x, "\n "))
				case int:
					kept = append(kept, x)
				case float64:
					kept = append(kept, int(x))
				default:
					writeMessage(w, http.StatusInternalServerError, "Internal Server Error")
					return
				}
			}
			if len(kept) != 0 && kept[0] != 0 && kept[0] != "" {
				filters[name] = kept
			}
		}
	}
	for _, k := range []string{"suspend", "show_filters_icon"} {
		if v, present := body[k]; present && v != nil {
			if _, isBool := v.(bool); !isBool {
				validationError(w, "body -> "+k, "value could not be parsed to a boolean (type=type_error.bool)")
				return
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, l, ok := s.lockedLink(w, r, true)
	if !ok {
		return
	}
	s.captures.updates[str(l, "link_id")] = append(s.captures.updates[str(l, "link_id")], copyMap(body))
	if filters != nil {
		l["filters"] = filters
	}
	for _, k := range []string{"suspend", "show_filters_icon"} {
		if v, isBool := body[k].(bool); isBool {
			l[k] = v
		}
	}
	if st, isMap := body["link_style"].(map[string]any); isMap {
		l["link_style"] = st
	}
	writeJSON(w, http.StatusOK, l)
}

var unsafeFileChars = regexp.MustCompile(`[^0-9A-Za-z_-]`)

// startCapture is POST .../links/{l}/capture/start {capture_file_name?,
// data_link_type?, wireshark?}: 409 when no node of the link is started
// or a capture runs already; 201 with the link, now capturing.
func (s *Server) startCapture(w http.ResponseWriter, r *http.Request) {
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	if v, present := body["data_link_type"]; present {
		if _, isStr := v.(string); !isStr {
			validationError(w, "body -> data_link_type", "str type expected (type=type_error.str)")
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, l, ok := s.lockedLink(w, r, true)
	if !ok {
		return
	}
	if l["capturing"] == true {
		writeMessage(w, http.StatusConflict, "Packet capture is already activated on adapter 0")
		return
	}
	nodes := s.linkNodes(pid, l)
	running := false
	for _, n := range nodes {
		running = running || str(n, "status") == "started"
	}
	if !running {
		writeMessage(w, http.StatusConflict, "Cannot capture because there is no running device on this link")
		return
	}
	name, _ := body["capture_file_name"].(string)
	if name == "" {
		ends := linkEnds(l)
		parts := make([]string, 0, 2)
		for i, e := range ends {
			nodeName := ""
			if i < len(nodes) {
				nodeName = str(nodes[i], "name")
			}
			parts = append(parts, fmt.Sprintf("%s_%d-%d", nodeName, num(e, "adapter_number", 0), num(e, "port_number", 0)))
		}
		name = unsafeFileChars.ReplaceAllString(strings.Join(parts, "_to_"), "") + ".pcap"
	}
	l["capturing"] = true
	l["capture_file_name"] = name
	l["capture_file_path"] = "/home/gns3/GNS3/projects/" + pid + "/project-files/captures/" + name
	l["capture_compute_id"] = "local"
	writeJSON(w, http.StatusCreated, l)
}

// stopCapture is POST .../links/{l}/capture/stop: 204, also when no
// capture runs.
func (s *Server) stopCapture(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, l, ok := s.lockedLink(w, r, true); ok {
		l["capturing"] = false
		l["capture_compute_id"] = nil
		w.WriteHeader(http.StatusNoContent)
	}
}

// streamCapture is GET .../links/{l}/capture/stream: 409 without a
// capture; else the pcap bytes SetCaptureSource gave for the link, then,
// as GNS3 follows a growing capture file, nothing more until the capture
// stops, the client goes or the test ends.
func (s *Server) streamCapture(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	_, l, ok := s.lockedLink(w, r, false)
	if !ok {
		s.mu.Unlock()
		return
	}
	lid := str(l, "link_id")
	if l["capturing"] != true {
		s.mu.Unlock()
		writeMessage(w, http.StatusConflict, "This link has no active packet capture")
		return
	}
	src := s.captures.sources[lid]
	s.captures.streams[lid]++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.captures.streams[lid]--
		s.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "application/vnd.tcpdump.pcap")
	w.WriteHeader(http.StatusOK)
	if f, isFlusher := w.(http.Flusher); isFlusher {
		f.Flush() // the headers leave at once, as GNS3's StreamingResponse sends them
	}
	if src != nil {
		if _, err := io.Copy(flushWriter{w}, src()); err != nil {
			return
		}
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		capturing := l["capturing"] == true
		s.mu.Unlock()
		if !capturing {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case <-tick.C:
		}
	}
}

// flushWriter flushes every write, so that the client reads the pcap as
// it comes.
type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
	return n, err
}

// SetCaptureSource makes a capture of the link stream the bytes src
// returns (called once per stream): a pcap file, which the test writes
// with gopacket's pcapgo.Writer. Without a source a stream sends nothing.
func (s *Server) SetCaptureSource(linkID string, src func() io.Reader) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.captures.sources[linkID] = src
}

// SetCapturing marks a link capturing or not, as a capture the user
// started in the web UI.
func (s *Server) SetCapturing(projectID, linkID string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.links[projectID] {
		if l["link_id"] == linkID {
			l["capturing"] = on
			if on {
				l["capture_file_name"] = "user.pcap"
				l["capture_compute_id"] = "local"
			}
		}
	}
}

// Link returns a copy of one link of a project, nil when missing.
func (s *Server) Link(projectID, linkID string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.links[projectID] {
		if l["link_id"] == linkID {
			return copyMap(l)
		}
	}
	return nil
}

// LinkUpdates returns the bodies of the PUTs the link received (served
// ones only), oldest first.
func (s *Server) LinkUpdates(linkID string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]map[string]any, 0, len(s.captures.updates[linkID]))
	for _, b := range s.captures.updates[linkID] {
		out = append(out, copyMap(b))
	}
	return out
}

// OpenStreams returns how many capture streams of the link are open.
func (s *Server) OpenStreams(linkID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.captures.streams[linkID]
}

// Package gns3test runs a fake GNS3 v3 controller on httptest for tests:
// projects, templates, nodes and links held in memory and served with the
// JSON shapes, status codes and messages a real GNS3 v3 controller
// returns; nodes created from templates, renamed, started, stopped,
// suspended (with an optional delay before the new status shows), deleted;
// links checked as GNS3 checks them, their filters (available_filters,
// PUT) and packet captures (start, stop, and a stream of the pcap bytes a
// test gives, see SetCaptureSource); users and user groups (GET
// /v3/access/users/me from the bearer token, a user's groups behind the
// Group.Audit privilege); bearer-token and per-request authorization
// hooks, a hanging mode, and request counters.
package gns3test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// Authorizer decides a request from its bearer token ("" when absent) and
// the project it addresses ("" for non-project routes): it returns
// http.StatusOK to serve it, or the status to refuse it with (401, 403).
type Authorizer func(token, projectID string) int

// AcceptTokens is an Authorizer that serves requests bearing one of tokens
// and answers 401 to any other.
func AcceptTokens(tokens ...string) Authorizer {
	ok := map[string]bool{}
	for _, t := range tokens {
		ok[t] = true
	}
	return func(token, _ string) int {
		if token != "" && ok[token] {
			return http.StatusOK
		}
		return http.StatusUnauthorized
	}
}

// RequestAuthorizer decides a request from the request itself (method,
// path), its bearer token ("" when absent) and the project it addresses
// ("" for non-project routes): http.StatusOK serves it, another status
// refuses it (403 answers GNS3's "Permission denied (privilege ... is
// required)" for the route's privilege, see Privilege).
type RequestAuthorizer func(r *http.Request, token, projectID string) int

// DenyChanges is a RequestAuthorizer under which tokens may read (GET)
// but get 403 for any other method: a user who may look at the lab but
// not change it. Other tokens are served.
func DenyChanges(tokens ...string) RequestAuthorizer {
	deny := map[string]bool{}
	for _, t := range tokens {
		deny[t] = true
	}
	return func(r *http.Request, token, _ string) int {
		if r.Method != http.MethodGet && deny[token] {
			return http.StatusForbidden
		}
		return http.StatusOK
	}
}

// DenyPrivileges is a RequestAuthorizer that answers 403 to every request
// whose route requires one of privileges (for example "Node.PowerMgmt",
// "Link.Allocate"; see Privilege) and serves the others.
func DenyPrivileges(privileges ...string) RequestAuthorizer {
	deny := map[string]bool{}
	for _, p := range privileges {
		deny[p] = true
	}
	return func(r *http.Request, _, _ string) int {
		if deny[Privilege(r)] {
			return http.StatusForbidden
		}
		return http.StatusOK
	}
}

// Server is a fake GNS3 v3 controller. Its methods are safe for concurrent
// use with the requests it serves.
type Server struct {
	*httptest.Server

	mu           sync.Mutex
	authorize    Authorizer
	reqAuthorize RequestAuthorizer
	projects     map[string]map[string]any
	order        []string
	nodes        map[string][]map[string]any
	links        map[string][]map[string]any
	templates    []map[string]any
	hits         map[string]int
	total        int
	lastAuth     string
	hang         bool
	latency      time.Duration // before each answer, see SetLatency
	conns        int           // connections accepted
	done         chan struct{} // closed when the test ends: releases hung requests
	now          func() time.Time
	delays       map[string]time.Duration // per node id
	defaultDelay time.Duration
	pending      map[string]transition // node id -> status to come
	macs         int
	users        map[string]*User  // by username
	groups       map[string]*Group // by id
	groupOrder   []string
	tokens       map[string]string // token -> username
	captures     *captureState
	snaps        *snapshotState
}

// transition is a node status that shows from at on.
type transition struct {
	status string
	at     time.Time
}

// NewServer starts a fake controller, closed when the test ends. authorize
// nil serves every request, with or without a token.
func NewServer(t testing.TB, authorize Authorizer) *Server {
	t.Helper()
	s, closeServer := Start(authorize)
	t.Cleanup(closeServer)
	return s
}

// Start starts a fake controller outside a test (a helper program, such as
// the one the web console's browser tests run) and returns it with the
// func that closes it: hung requests return, then the server stops.
// authorize nil serves every request, with or without a token.
func Start(authorize Authorizer) (*Server, func()) {
	s := &Server{
		authorize: authorize,
		projects:  map[string]map[string]any{},
		nodes:     map[string][]map[string]any{},
		links:     map[string][]map[string]any{},
		templates: BuiltinTemplates(),
		hits:      map[string]int{},
		done:      make(chan struct{}),
		now:       time.Now,
		delays:    map[string]time.Duration{},
		pending:   map[string]transition{},
		users:     map[string]*User{},
		groups:    map[string]*Group{},
		tokens:    map[string]string{},
		captures:  newCaptureState(),
		snaps:     newSnapshotState(),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v3/projects", s.listProjects)
	mux.HandleFunc("GET /v3/projects/{project_id}", s.getProject)
	mux.HandleFunc("DELETE /v3/projects/{project_id}", s.deleteProject)
	mux.HandleFunc("POST /v3/projects/{project_id}/open", s.setStatusRoute("opened"))
	mux.HandleFunc("POST /v3/projects/{project_id}/close", s.setStatusRoute("closed"))
	mux.HandleFunc("GET /v3/projects/{project_id}/nodes", s.listItems(s.nodes))
	mux.HandleFunc("GET /v3/projects/{project_id}/nodes/{item_id}", s.getItem(s.nodes, "node_id", "Node"))
	mux.HandleFunc("GET /v3/projects/{project_id}/links", s.listItems(s.links))
	mux.HandleFunc("GET /v3/projects/{project_id}/links/{item_id}", s.getItem(s.links, "link_id", "Link"))
	mux.HandleFunc("GET /v3/templates", s.listTemplates)
	mux.HandleFunc("POST /v3/projects/{project_id}/templates/{template_id}", s.createNodeFromTemplate)
	mux.HandleFunc("PUT /v3/projects/{project_id}/nodes/{item_id}", s.updateNode)
	mux.HandleFunc("DELETE /v3/projects/{project_id}/nodes/{item_id}", s.deleteNode)
	mux.HandleFunc("POST /v3/projects/{project_id}/nodes/{item_id}/{action}", s.nodeAction)
	mux.HandleFunc("POST /v3/projects/{project_id}/links", s.createLink)
	mux.HandleFunc("DELETE /v3/projects/{project_id}/links/{item_id}", s.deleteLink)
	s.registerLinkRoutes(mux)
	s.registerSnapshotRoutes(mux)
	mux.HandleFunc("GET /v3/access/users/me", s.getMe)
	mux.HandleFunc("GET /v3/access/users/{user_id}/groups", s.getUserGroups)
	s.registerAccessRoutes(mux)
	mux.HandleFunc("/", notFoundRoute)
	s.Server = httptest.NewUnstartedServer(s.guard(mux))
	s.Server.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
		}
	}
	s.Server.Start()
	var once sync.Once
	return s, func() {
		once.Do(func() {
			close(s.done) // first: hung requests return
			s.Close()
		})
	}
}

// notFoundRoute is FastAPI's answer to an unknown route.
func notFoundRoute(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Not Found"})
}

// guard counts requests and applies the Authorizer.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		token := ""
		if scheme, cred, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") {
			token = strings.TrimSpace(cred)
		}
		projectID := ""
		if rest, ok := strings.CutPrefix(r.URL.Path, "/v3/projects/"); ok {
			projectID, _, _ = strings.Cut(rest, "/")
		}
		s.mu.Lock()
		s.hits[r.Method+" "+r.URL.Path]++
		s.total++
		s.lastAuth = h
		authorize, reqAuthorize, hang, latency := s.authorize, s.reqAuthorize, s.hang, s.latency
		s.mu.Unlock()
		if hang || latency > 0 {
			// A hanging controller waits without end (a nil channel): only
			// the client giving up or the test ending returns, unanswered.
			var answer <-chan time.Time
			if !hang {
				t := time.NewTimer(latency)
				defer t.Stop()
				answer = t.C
			}
			select {
			case <-answer:
			case <-r.Context().Done():
				return
			case <-s.done:
				return
			}
		}
		st := http.StatusOK
		if authorize != nil {
			st = authorize(token, projectID)
		}
		if st == http.StatusOK && reqAuthorize != nil {
			st = reqAuthorize(r, token, projectID)
		}
		switch st {
		case http.StatusOK:
			next.ServeHTTP(w, r)
		case http.StatusUnauthorized:
			w.Header().Set("WWW-Authenticate", "Bearer")
			writeJSON(w, st, map[string]any{"message": "Could not validate credentials"})
		case http.StatusForbidden:
			priv := Privilege(r)
			if priv == "" {
				priv = "Project.Audit"
			}
			writeJSON(w, st, map[string]any{"message": fmt.Sprintf("Permission denied (privilege %s is required)", priv)})
		default:
			writeJSON(w, st, map[string]any{"message": http.StatusText(st)})
		}
	})
}

// Privilege returns the GNS3 v3 privilege the route of r requires (as its
// has_privilege dependency in gns3server/api/routes/controller), for
// example "Node.PowerMgmt" for POST .../nodes/{n}/start, or "" for a route
// that only needs a logged-in user (GET /v3/templates) or that the fake
// does not know.
func Privilege(r *http.Request) string {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) < 2 || parts[0] != "v3" {
		return ""
	}
	m := r.Method
	switch {
	case parts[1] == "templates":
		switch m {
		case http.MethodGet:
			return ""
		case http.MethodPut:
			return "Template.Modify"
		}
		return "Template.Allocate"
	case parts[1] == "access":
		return accessPrivilege(m, parts[2:])
	case parts[1] != "projects":
		return ""
	case len(parts) <= 3:
		switch {
		case m == http.MethodGet:
			return "Project.Audit"
		case m == http.MethodPut:
			return "Project.Modify"
		}
		return "Project.Allocate"
	}
	switch parts[3] {
	case "open", "close":
		return "Project.Allocate"
	case "templates":
		return "Node.Allocate"
	case "nodes":
		switch {
		case m == http.MethodGet && len(parts) == 7 && parts[6] == "links":
			return "Link.Audit"
		case m == http.MethodGet:
			return "Node.Audit"
		case m == http.MethodPut:
			return "Node.Modify"
		case m == http.MethodDelete:
			return "Node.Allocate"
		case len(parts) == 4:
			return "Node.Allocate"
		}
		switch parts[len(parts)-1] {
		case "start", "stop", "suspend", "reload":
			return "Node.PowerMgmt"
		case "isolate", "unisolate":
			return "Link.Modify"
		case "duplicate":
			return "Node.Allocate"
		}
		return "Node.Modify"
	case "snapshots":
		return snapshotPrivilege(m, parts)
	case "links":
		if len(parts) >= 7 && parts[5] == "capture" {
			return "Link.Capture"
		}
		switch m {
		case http.MethodGet:
			return "Link.Audit"
		case http.MethodPut:
			return "Link.Modify"
		}
		return "Link.Allocate"
	}
	return "Project.Audit"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// validID answers 422 as GNS3 v3 does for a path id that is not a UUID.
func validID(w http.ResponseWriter, name, id string) bool {
	if _, err := uuid.Parse(id); err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
			"message": fmt.Sprintf("1 validation error for Request\npath -> %s\n  value is not a valid uuid (type=type_error.uuid)", name),
		})
		return false
	}
	return true
}

func projectNotFound(w http.ResponseWriter, id string) {
	writeJSON(w, http.StatusNotFound, map[string]any{"message": fmt.Sprintf("Project ID %s doesn't exist", id)})
}

// project returns the project of the request, or answers the error.
func (s *Server) project(w http.ResponseWriter, r *http.Request) (string, map[string]any, bool) {
	id := r.PathValue("project_id")
	if !validID(w, "project_id", id) {
		return "", nil, false
	}
	s.mu.Lock()
	p, ok := s.projects[id]
	s.mu.Unlock()
	if !ok {
		projectNotFound(w, id)
		return "", nil, false
	}
	return id, p, true
}

func (s *Server) listProjects(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	out := make([]map[string]any, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.projects[id])
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getProject(w http.ResponseWriter, r *http.Request) {
	if _, p, ok := s.project(w, r); ok {
		s.mu.Lock()
		defer s.mu.Unlock()
		writeJSON(w, http.StatusOK, p)
	}
}

func (s *Server) deleteProject(w http.ResponseWriter, r *http.Request) {
	if id, _, ok := s.project(w, r); ok {
		s.DeleteProject(id)
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Server) setStatusRoute(status string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if id, p, ok := s.project(w, r); ok {
			s.SetStatus(id, status)
			s.mu.Lock()
			defer s.mu.Unlock()
			code := http.StatusCreated // GNS3 answers 201 to open
			if status == "closed" {
				code = http.StatusOK
			}
			writeJSON(w, code, p)
		}
	}
}

func (s *Server) listItems(items map[string][]map[string]any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if id, _, ok := s.project(w, r); ok {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.settle()
			out := items[id]
			if out == nil {
				out = []map[string]any{}
			}
			writeJSON(w, http.StatusOK, out)
		}
	}
}

func (s *Server) getItem(items map[string][]map[string]any, idField, kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		pid, _, ok := s.project(w, r)
		if !ok {
			return
		}
		itemID := r.PathValue("item_id")
		if !validID(w, strings.ToLower(kind)+"_id", itemID) {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.settle()
		for _, it := range items[pid] {
			if it[idField] == itemID {
				writeJSON(w, http.StatusOK, it)
				return
			}
		}
		writeJSON(w, http.StatusNotFound, map[string]any{"message": fmt.Sprintf("%s ID %s doesn't exist", kind, itemID)})
	}
}

// SetAuthorizer replaces the Authorizer (nil serves everything).
func (s *Server) SetAuthorizer(a Authorizer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authorize = a
}

// SetRequestAuthorizer sets a RequestAuthorizer (nil: none), asked after
// the Authorizer accepted the request.
func (s *Server) SetRequestAuthorizer(a RequestAuthorizer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqAuthorize = a
}

// SetHang makes every request (while on) block without an answer until
// the client gives up (its request context ends) or the test ends: a
// controller that hangs. Requests are still counted.
func (s *Server) SetHang(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hang = on
}

// SetLatency makes every request wait d (0: none) before it is served,
// as a real controller takes its time to answer; a client that gives up
// meanwhile gets no answer. Requests are still counted at once.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// AddProject adds a project with a new id and the given status ("opened"
// or "closed") and returns the id.
func (s *Server) AddProject(name, status string) string {
	id := uuid.NewString()
	s.AddProjectWithID(id, name, status)
	return id
}

// AddProjectWithID adds (or replaces) a project, with the payload GNS3 v3
// returns for a project created with default settings.
func (s *Server) AddProjectWithID(id, name, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.projects[id]; !ok {
		s.order = append(s.order, id)
	}
	s.projects[id] = map[string]any{
		"auto_close":            true,
		"auto_open":             false,
		"auto_start":            false,
		"drawing_grid_size":     25,
		"filename":              name + ".gns3",
		"grid_size":             75,
		"name":                  name,
		"path":                  "/home/gns3/GNS3/projects/" + id,
		"project_id":            id,
		"scene_height":          1000,
		"scene_width":           2000,
		"show_grid":             false,
		"show_interface_labels": false,
		"show_layers":           false,
		"snap_to_grid":          false,
		"status":                status,
		"supplier":              nil,
		"variables":             nil,
		"zoom":                  100,
	}
}

// SetStatus changes a project's status ("opened", "closed").
func (s *Server) SetStatus(projectID, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.projects[projectID]; ok {
		p["status"] = status
	}
}

// DeleteProject removes a project with its nodes and links; GNS3 then
// answers 404 for it.
func (s *Server) DeleteProject(projectID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.projects, projectID)
	for _, n := range s.nodes[projectID] {
		delete(s.pending, str(n, "node_id"))
	}
	delete(s.nodes, projectID)
	delete(s.links, projectID)
	for i, id := range s.order {
		if id == projectID {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

// AddNode adds a raw node payload to a project (node_id and project_id are
// filled when missing) and returns its node_id.
func (s *Server) AddNode(projectID string, node map[string]any) string {
	return s.addItem(s.nodes, projectID, "node_id", node)
}

// AddLink adds a raw link payload to a project and returns its link_id.
func (s *Server) AddLink(projectID string, link map[string]any) string {
	return s.addItem(s.links, projectID, "link_id", link)
}

func (s *Server) addItem(items map[string][]map[string]any, projectID, idField string, it map[string]any) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, _ := it[idField].(string)
	if id == "" {
		id = uuid.NewString()
		it[idField] = id
	}
	it["project_id"] = projectID
	items[projectID] = append(items[projectID], it)
	return id
}

// Hits returns how many requests "METHOD /path" received (refused ones
// included), for example Hits("GET /v3/projects/<id>").
func (s *Server) Hits(methodAndPath string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[methodAndPath]
}

// Requests returns the number of requests received.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// Conns returns how many connections the server has accepted: a client
// that keeps its connections open dials once per request it sends at the
// same time.
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// ConnsOfRounds sends rounds rounds of atOnce requests at once (each a
// call of send, which sends one to the server) and returns how many
// connections the server accepted meanwhile: a client that keeps its
// connections dials at most atOnce. A failed send fails t.
func (s *Server) ConnsOfRounds(t testing.TB, atOnce, rounds int, send func() error) int {
	t.Helper()
	before := s.Conns()
	for range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, atOnce)
		for range atOnce {
			wg.Go(func() {
				if err := send(); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	return s.Conns() - before
}

// LastAuthorization returns the Authorization header of the last request.
func (s *Server) LastAuthorization() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastAuth
}

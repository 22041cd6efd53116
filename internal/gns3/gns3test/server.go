// Package gns3test runs a fake GNS3 v3 controller on httptest for tests:
// projects, nodes and links held in memory and served with the JSON shapes
// a real GNS3 v3 controller returns, a bearer-token hook, and request
// counters (to observe caching).
package gns3test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

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

// Server is a fake GNS3 v3 controller. Its methods are safe for concurrent
// use with the requests it serves.
type Server struct {
	*httptest.Server

	mu        sync.Mutex
	authorize Authorizer
	projects  map[string]map[string]any
	order     []string
	nodes     map[string][]map[string]any
	links     map[string][]map[string]any
	hits      map[string]int
	total     int
	lastAuth  string
}

// NewServer starts a fake controller, closed when the test ends. authorize
// nil serves every request, with or without a token.
func NewServer(t testing.TB, authorize Authorizer) *Server {
	t.Helper()
	s := &Server{
		authorize: authorize,
		projects:  map[string]map[string]any{},
		nodes:     map[string][]map[string]any{},
		links:     map[string][]map[string]any{},
		hits:      map[string]int{},
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
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Not Found"})
	})
	s.Server = httptest.NewServer(s.guard(mux))
	t.Cleanup(s.Close)
	return s
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
		authorize := s.authorize
		s.mu.Unlock()
		if authorize != nil {
			switch st := authorize(token, projectID); st {
			case http.StatusOK:
			case http.StatusUnauthorized:
				w.Header().Set("WWW-Authenticate", "Bearer")
				writeJSON(w, st, map[string]any{"message": "Could not validate credentials"})
				return
			case http.StatusForbidden:
				writeJSON(w, st, map[string]any{"message": "Permission denied (privilege Project.Audit is required)"})
				return
			default:
				writeJSON(w, st, map[string]any{"message": http.StatusText(st)})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
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

// LastAuthorization returns the Authorization header of the last request.
func (s *Server) LastAuthorization() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastAuth
}

package localserver

import (
	"encoding/json"
	"net/http"
	"testing"

	"agentchat/internal/gns3"
)

// TestConsoleProjectList: the local server mounts the console's project
// list, which asks GNS3 with the caller's token, and answers 204 (nothing
// to list) without GNS3_URL.
func TestConsoleProjectList(t *testing.T) {
	l := newCopilotLab(t, false)
	closed := l.gns3.AddProject("archive", gns3.StatusClosed)
	status, body := l.do(http.MethodGet, "/v3/copilot/projects", nil)
	var got []struct {
		ProjectID string `json:"project_id"`
		Name      string `json:"name"`
		Status    string `json:"status"`
	}
	if err := json.Unmarshal(body, &got); status != http.StatusOK || err != nil {
		t.Fatalf("GET /v3/copilot/projects: %d %s", status, body)
	}
	if len(got) != 2 || got[0].Name != "lab" || got[0].Status != gns3.StatusOpened || got[1].ProjectID != closed {
		t.Errorf("projects = %+v, want lab (opened) then archive (closed)", got)
	}
	if a := l.gns3.LastAuthorization(); a != "Bearer "+l.token {
		t.Errorf("GNS3 got Authorization %q, want alice's token", a)
	}
	if status, body := sendJSON(t, l.url, "not-a-jwt", http.MethodGet, "/v3/copilot/projects", nil); status != http.StatusUnauthorized {
		t.Errorf("bad token: %d %s", status, body)
	}

	noGNS3 := newCopilotLab(t, true)
	status, body = noGNS3.do(http.MethodGet, "/v3/copilot/projects", nil)
	if status != http.StatusNoContent || len(body) != 0 {
		t.Errorf("without GNS3_URL: %d %s", status, body)
	}
}

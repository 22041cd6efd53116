package localserver

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"agentchat/internal/auth"
)

// TestTokenRefusedByGNS3: a token with a valid signature that the GNS3
// controller refuses (as GNS3 3.0 does once a logout bumped the user's
// token version, the ver claim) is a 401 on every route that asks GNS3
// about it (the project check), never a 404 or a 500. Routes that do not
// call GNS3 (LLM configurations under "me") cannot know the current
// version and keep accepting the token until its exp.
func TestTokenRefusedByGNS3(t *testing.T) {
	l := newCopilotLab(t, false)
	v, err := auth.NewJWTVerifier([]byte(copilotSecret), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	// Another token of alice: the fake controller accepts only l.token.
	stale, err := v.Issue("alice", 2*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ method, path, msg string }{
		{http.MethodGet, "/v3/projects/" + l.project + "/chat/sessions", "Could not validate credentials"},
		{http.MethodGet, "/v3/copilot/projects/" + l.project + "/chat/sessions", "Could not validate credentials"},
		{http.MethodPost, "/v3/projects/" + l.project + "/chat/stream", "Could not validate credentials"},
		{http.MethodGet, "/v3/copilot/projects", "GNS3 did not accept the user's credentials"},
	} {
		status, body := sendJSON(t, l.url, stale, tc.method, tc.path, map[string]any{"message": "hi"})
		if status != http.StatusUnauthorized || !strings.Contains(string(body), tc.msg) {
			t.Errorf("%s %s with a token GNS3 refuses: %d %s", tc.method, tc.path, status, body)
		}
	}
	// The accepted token still works there.
	if status, body := l.do(http.MethodGet, "/v3/projects/"+l.project+"/chat/sessions", nil); status != http.StatusOK {
		t.Fatalf("accepted token: %d %s", status, body)
	}
	// No GNS3 call on the user's own LLM configurations: the token works.
	if status, body := sendJSON(t, l.url, stale, http.MethodGet, "/v3/access/users/me/llm-model-configs/own", nil); status != http.StatusOK {
		t.Fatalf("llm configs with a token GNS3 refuses: %d %s", status, body)
	}
}

package chat

import (
	"net/http"
	"strings"

	"agentchat/internal/agents"
	"agentchat/internal/httpapi"
)

// PathInject is the path of the fault-injection route.
const PathInject = "/v3/projects/{project_id}/chat/inject"

// inject serves POST /inject: the body and the answer of /stream, but the
// turn always opens a new session in troubleshooting_injection mode (a
// session_id and a copilot_mode in the body are ignored), and an empty
// message asks for one fault.
func (h *Handlers) inject(w http.ResponseWriter, r *http.Request) error {
	var body Request
	if err := httpapi.DecodeJSON(w, r, &body, httpapi.DecodeOptions{}); err != nil {
		return err
	}
	if body.Message == nil || strings.TrimSpace(*body.Message) == "" {
		msg := agents.DefaultInjectionRequest
		body.Message = &msg
	}
	body.SessionID, body.CopilotMode = "", ""
	req, err := body.validate()
	if err != nil {
		return err
	}
	req.mode = agents.ModeTroubleshootingInjection
	return h.run(w, r, req)
}

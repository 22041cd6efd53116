package gateway

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/budget"
	"agentchat/internal/contextwin"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/openaierr"
	"agentchat/internal/llm"
	"agentchat/internal/store"
)

var (
	errNoRegistry = errors.New("gateway: no agent registry configured")
	errNoRuntime  = errors.New("gateway: no agent runtime configured")
	// errDeadline is the cancel cause of a run that outlived Options.Timeout.
	errDeadline = errors.New("gateway: request deadline exceeded")
)

// codeAgentError is the code of a run failure that runError does not know
// (max steps, ...).
const codeAgentError = "agent_error"

// internalError is the answer to an unexpected failure (a panic, a bug):
// the same before a stream started and inside it.
func internalError(message string) *openaierr.Error {
	return &openaierr.Error{Status: http.StatusInternalServerError, Message: message, Code: "internal_server_error"}
}

// fail answers err: an *openaierr.Error or *httpapi.StatusError as it is (a 422
// becomes 400, the status OpenAI uses for every invalid request), anything
// else as a logged 500.
func (g *Gateway) fail(w http.ResponseWriter, r *http.Request, err error) {
	if ae := knownError(err); ae != nil {
		openaierr.Write(w, ae)
		return
	}
	g.logger(r).ErrorContext(r.Context(), "gateway request failed", "err", err)
	openaierr.Write(w, internalError("Internal server error"))
}

// knownError is err as an *openaierr.Error when it is one or an
// *httpapi.StatusError, else nil.
func knownError(err error) *openaierr.Error {
	var ae *openaierr.Error
	if errors.As(err, &ae) {
		c := *ae
		return &c
	}
	var se *httpapi.StatusError
	if errors.As(err, &se) {
		st := se.Status
		if st == http.StatusUnprocessableEntity {
			st = http.StatusBadRequest
		}
		return &openaierr.Error{Status: st, Message: se.Message, RetryAfter: se.RetryAfter}
	}
	return nil
}

// codeTooManyTurns is the code of the 429 answered to a user who already
// runs agent.Options.MaxTurnsPerUser turns at once.
const codeTooManyTurns = "too_many_concurrent_requests"

// runFailure is the one mapping of a failed run to its OpenAI error: the
// same failure gets the same status, type, code and param wherever it is
// reported, answered before a stream started (failRun), as the error
// event inside a stream (streamer.fail, which sends the same error
// object), or as the answer of a non-streamed run that failed late
// (failLate). err is the error RunStateless returned or the Err of its
// result. human is the result's Error text, the message of a failure
// runError does not know (a 500 agent_error); for one it knows, its own
// message is kept (the same on every path). known is false for a failure
// that neither this mapping nor the run explained (no human text), which
// the caller logs as an error.
func runFailure(err error, human string) (ae *openaierr.Error, known bool) {
	if ae := runError(err); ae != nil {
		return ae, true
	}
	if ae := knownError(err); ae != nil {
		return ae, true
	}
	if human == "" {
		return &openaierr.Error{Status: http.StatusInternalServerError, Message: "Internal server error", Code: codeAgentError}, false
	}
	return &openaierr.Error{Status: http.StatusInternalServerError, Message: human, Code: codeAgentError}, true
}

// runError maps an error of RunStateless: one returned before anything was
// emitted (nothing ran: a retry is safe unless said otherwise), or the Err
// of a failed result (the caller adds NoRetry when a side effect
// happened). It returns nil for an error it does not know.
func runError(err error) *openaierr.Error {
	var le *llm.Error
	var tce *agent.ToolChoiceError
	var ce *llm.ConfigError
	var tle *contextwin.TooLargeError
	var full *store.TurnSlotsFullError
	var spent *budget.ExceededError
	switch {
	case errors.As(err, &spent):
		// OpenAI's answer to a spent quota: a 429 that retrying cannot help.
		return &openaierr.Error{Status: http.StatusTooManyRequests, Type: "insufficient_quota", Code: "insufficient_quota",
			Message: spent.Error(), NoRetry: true}
	case errors.As(err, &full):
		// Nothing ran: the SDKs' own retry of a 429 (after Retry-After)
		// is welcome.
		return &openaierr.Error{Status: http.StatusTooManyRequests, Message: agent.TooManyTurnsMessage(full.Slots), Code: codeTooManyTurns,
			RetryAfter: full.RetryAfter(time.Now())}
	case errors.As(err, &tle):
		return &openaierr.Error{Status: http.StatusBadRequest, Message: tle.Error(), Param: "messages", Code: "context_length_exceeded", NoRetry: true}
	case errors.As(err, &ce):
		return &openaierr.Error{Status: http.StatusBadRequest, Message: ce.Message, Code: "llm_config_invalid", NoRetry: true}
	case errors.Is(err, llm.ErrNotConfigured):
		return &openaierr.Error{Status: http.StatusBadRequest, Message: llm.UserMessage(err), Code: "llm_not_configured", NoRetry: true}
	case errors.As(err, &tce):
		if tce.Function == "" {
			return openaierr.Invalid("tool_choice", "Invalid value for 'tool_choice': 'required' needs a tool, and neither 'tools' nor agent %q offers one.", tce.AgentID)
		}
		return openaierr.Invalid("tool_choice", "Invalid value for 'tool_choice': function %q is neither one of the request's 'tools' nor a tool of agent %q.",
			tce.Function, tce.AgentID)
	case errors.Is(err, agent.ErrInvalidRequest):
		msg := strings.TrimPrefix(err.Error(), agent.ErrInvalidRequest.Error()+": ")
		return &openaierr.Error{Status: http.StatusBadRequest, Message: "Invalid request: " + msg}
	case errors.As(err, &le):
		return llmError(le)
	case errors.Is(err, errDeadline), errors.Is(err, context.DeadlineExceeded):
		return &openaierr.Error{Status: http.StatusGatewayTimeout, Message: "The request took too long and was stopped."}
	case errors.Is(err, context.Canceled):
		// The client went away (or the server is shutting down): not a
		// server failure, and nobody reads the answer.
		return &openaierr.Error{Status: httpapi.StatusClientClosed, Message: "The request was cancelled.", Code: codeClientClosed}
	}
	return nil
}

// codeClientClosed is the error code of a run cancelled because its client
// went away (httpapi.StatusClientClosed).
const codeClientClosed = "client_closed_request"

// llmError maps an LLM provider failure: the provider's throttling is the
// client's 429, its refusal of the request a 400 (with the param it named,
// e.g. a response_format or seed it does not support), anything else a
// 502/504 (the gateway's upstream failed).
func llmError(le *llm.Error) *openaierr.Error {
	e := &openaierr.Error{Message: le.UserMessage(), Code: "llm_" + string(le.Kind), Param: le.Param}
	switch le.Kind {
	case llm.KindRateLimit:
		e.Status, e.RetryAfter = http.StatusTooManyRequests, le.RetryAfter
	case llm.KindQuota:
		e.Status, e.Type, e.NoRetry = http.StatusTooManyRequests, "insufficient_quota", true
	case llm.KindBadRequest:
		e.Status = http.StatusBadRequest
	case llm.KindTimeout:
		e.Status = http.StatusGatewayTimeout
	case llm.KindAuth:
		// The server's provider key was refused: not the client's fault,
		// and retrying will not help.
		e.Status, e.NoRetry = http.StatusBadGateway, true
	default:
		e.Status = http.StatusBadGateway
	}
	return e
}

// Package chat serves the streaming project chat: POST /stream runs one
// turn of the gns3-copilot agent and encodes its events as the project SSE
// contract. (Aborting a turn is a session route: package sessions.)
package chat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"agentchat/internal/agent"
	"agentchat/internal/agents"
	"agentchat/internal/approval"
	"agentchat/internal/auth"
	"agentchat/internal/budget"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/views"
	"agentchat/internal/llm"
	"agentchat/internal/store"
	"agentchat/internal/turnlog"
)

// PathStream is the path of the stream route.
const PathStream = "/v3/projects/{project_id}/chat/stream"

// MaxMessageBytes bounds a chat message.
const MaxMessageBytes = 32 << 10

// MsgLLMNotConfigured is the 400 message when no LLM applies to the user.
const MsgLLMNotConfigured = "LLM configuration not found. Please configure your LLM settings first."

// Options configure the chat handlers.
type Options struct {
	// Runtime runs turns; needed by the stream route.
	Runtime *agent.Runtime
	// Heartbeat is the idle gap before a heartbeat event (0: 15s).
	Heartbeat time.Duration
	// OpenWithin bounds how long the headers and opening comment of a
	// stream wait for the turn's first request to the network or its first
	// event (0: DefaultOpenWithin).
	OpenWithin time.Duration
	// AgentID is the agent of the project chat (default gns3-copilot).
	AgentID string
	// Logger receives handler logs; the request logger is used when nil.
	Logger *slog.Logger
	// Store, when it is a store.SessionRoom (or wraps one), is asked
	// before a turn without session_id whether the user may have one more
	// session: that turn creates its session beside its first LLM call,
	// so the store's own refusal would only end the stream. Nil: no check
	// ahead (the store still enforces the limit).
	Store store.Store
	// TurnLogs, when set, logs the events of every streamed turn
	// (package turnlog), serves the rejoin route (GET
	// .../sessions/{session_id}/stream), and keeps a streamed turn running
	// when its client leaves (unless the request says "on_disconnect":
	// "cancel"): the client comes back for the rest.
	TurnLogs store.TurnLogs
	// TurnLogKeep is how long a logged batch is kept after it is written
	// (0: store.TurnLogKeep); give the turn timeout plus an hour, so that
	// the whole log of a turn outlives its end by an hour.
	TurnLogKeep time.Duration
	// Hub wakes the followers of this process when a batch of a turn it
	// runs is logged (nil: they poll).
	Hub *turnlog.Hub
	// Follow tunes how rejoined streams follow a running turn.
	Follow turnlog.Follower
}

// DefaultOpenWithin is Options.OpenWithin when unset.
const DefaultOpenWithin = 50 * time.Millisecond

// Handlers serves the chat routes.
type Handlers struct{ o Options }

// New returns the chat handlers.
func New(o Options) *Handlers {
	if o.Heartbeat <= 0 {
		o.Heartbeat = 15 * time.Second
	}
	if o.OpenWithin <= 0 {
		o.OpenWithin = DefaultOpenWithin
	}
	if o.AgentID == "" {
		o.AgentID = agents.GNS3Copilot
	}
	if o.TurnLogs != nil && o.Hub == nil {
		o.Hub = &turnlog.Hub{}
	}
	return &Handlers{o: o}
}

// Routes returns the stream, inject, approvals and rejoin routes.
func (h *Handlers) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: http.MethodPost, Path: PathStream, Handler: httpapi.HandlerFunc(h.stream).ServeHTTP, Project: true},
		{Method: http.MethodPost, Path: PathInject, Handler: httpapi.HandlerFunc(h.inject).ServeHTTP, Project: true},
		{Method: http.MethodPost, Path: PathApprovals, Handler: httpapi.HandlerFunc(h.approvals).ServeHTTP, Project: true},
		{Method: http.MethodGet, Path: PathRejoin, Handler: httpapi.HandlerFunc(h.rejoin).ServeHTTP, Project: true},
	}
}

// Request is the body of POST /stream.
type Request struct {
	Message     *string  `json:"message"`
	SessionID   string   `json:"session_id"`
	Stream      *bool    `json:"stream"`
	Temperature *float64 `json:"temperature"`
	Mode        string   `json:"mode"`
	CopilotMode string   `json:"copilot_mode"`
	// Approval is the approval policy for this turn and, recorded, the
	// session's next ones: off, changes or all.
	Approval string `json:"approval"`
	// ApprovalDecision "reject_all" declines the calls that await a
	// decision, so that the message can be sent.
	ApprovalDecision string `json:"approval_decision"`
	// OnDisconnect is what happens to the turn when the client leaves:
	// "continue" (the default when turns are logged: rejoin the stream to
	// see the rest) or "cancel" (the turn stops, as an abort; the default
	// otherwise).
	OnDisconnect string `json:"on_disconnect"`
	// MultitaskStrategy is what happens when the session is answering:
	// reject (the default: 409), enqueue, interrupt or rollback.
	MultitaskStrategy string `json:"multitask_strategy"`
}

// validated is a checked Request.
type validated struct {
	message     string
	sessionID   string
	stream      bool
	temperature *float32
	mode        string
	approval    string
	rejectAll   bool
	// onDisconnect is the on_disconnect asked for ("" when none).
	onDisconnect string
	// strategy is the multitask_strategy.
	strategy string
}

// Validate checks the request and returns its normalized form.
func (req *Request) validate() (*validated, error) {
	v := &validated{stream: true}
	if req.Stream != nil {
		v.stream = *req.Stream
	}
	switch {
	case req.Message == nil:
		return nil, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'message' is required")
	case strings.TrimSpace(*req.Message) == "":
		return nil, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'message' must not be blank")
	case len(*req.Message) > MaxMessageBytes:
		return nil, httpapi.Errorf(http.StatusRequestEntityTooLarge, "Field 'message' must be at most %d bytes (got %d)", MaxMessageBytes, len(*req.Message))
	case !utf8.ValidString(*req.Message):
		return nil, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'message' must be valid UTF-8")
	}
	v.message = *req.Message
	if req.SessionID != "" {
		if err := httpapi.ValidateUUID("session_id", req.SessionID); err != nil {
			return nil, err
		}
		v.sessionID = httpapi.NormalizeUUID(req.SessionID)
	}
	if req.Temperature != nil {
		t := *req.Temperature
		if t < 0 || t > 2 {
			return nil, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'temperature' must be between 0 and 2")
		}
		f := float32(t)
		v.temperature = &f
	}
	if req.Mode != "" && req.Mode != "text" {
		return nil, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'mode' must be \"text\"")
	}
	if req.CopilotMode != "" {
		// Empty: the session's recorded mode, else the default, applies.
		mode, err := agents.ParseMode(req.CopilotMode)
		if err != nil {
			return nil, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'copilot_mode' must be one of: %s", strings.Join(agents.Modes(), ", "))
		}
		v.mode = mode
	}
	p, err := approval.Parse(req.Approval)
	if err != nil {
		return nil, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'approval' must be one of: off, changes, all")
	}
	v.approval = string(p)
	switch req.ApprovalDecision {
	case "":
	case approvalRejectAll:
		v.rejectAll = true
	default:
		return nil, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'approval_decision' must be \"reject_all\"")
	}
	switch req.OnDisconnect {
	case "", onDisconnectContinue, onDisconnectCancel:
		v.onDisconnect = req.OnDisconnect
	default:
		return nil, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'on_disconnect' must be one of: continue, cancel")
	}
	switch req.MultitaskStrategy {
	case "", strategyReject, strategyEnqueue, strategyInterrupt, strategyRollback:
		v.strategy = req.MultitaskStrategy
	default:
		return nil, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'multitask_strategy' must be one of: reject, enqueue, interrupt, rollback")
	}
	if v.strategy == strategyEnqueue && !v.stream {
		return nil, httpapi.Errorf(http.StatusUnprocessableEntity, "Field 'multitask_strategy' \"enqueue\" needs a streamed answer (\"stream\": true)")
	}
	return v, nil
}

// approvalRejectAll is the approval_decision that declines every pending
// call.
const approvalRejectAll = "reject_all"

func (h *Handlers) stream(w http.ResponseWriter, r *http.Request) error {
	var body Request
	if err := httpapi.DecodeJSON(w, r, &body, httpapi.DecodeOptions{}); err != nil {
		return err
	}
	req, err := body.validate()
	if err != nil {
		return err
	}
	return h.run(w, r, req)
}

// run starts the turn of a validated request and answers it, streamed or
// as one JSON object.
func (h *Handlers) run(w http.ResponseWriter, r *http.Request, req *validated) error {
	id, _ := auth.FromContext(r.Context())
	if h.o.Runtime == nil {
		return errors.New("chat runtime is not configured")
	}
	if req.sessionID == "" {
		if err := h.checkSessionRoom(r.Context(), id.UserID); err != nil {
			return startError(req.sessionID, err)
		}
	}
	tr := agent.TurnRequest{
		Key:         store.Key{ProjectID: r.PathValue("project_id"), UserID: id.UserID, ThreadID: req.sessionID},
		AgentID:     h.o.AgentID,
		Message:     req.message,
		Temperature: req.temperature,
		Mode:        req.mode,
		Approval:    req.approval,
		// Declining pending calls: only with a message.
		RejectPending: req.rejectAll,
		KeyID:         id.KeyID,
		KeyBudget:     id.KeyLimits.Budget,
	}
	if id.KeyID != "" && id.KeyLimits.MaxParallel > 0 {
		// An API key's own max_parallel replaces the user's turn cap.
		tr.SlotPool, tr.MaxTurns = agent.KeySlotPool(id.KeyID), id.KeyLimits.MaxParallel
	}
	turn, opened, err := h.startTurn(w, r, tr, req)
	switch {
	case err != nil:
		return startError(req.sessionID, err)
	case turn == nil:
		return nil // a queued message that could not start: its stream said why
	}
	sessionID := turn.Session().ThreadID
	if !req.stream {
		w.Header().Set("X-Session-Id", sessionID)
		h.collect(w, r, turn, sessionID)
		return nil
	}
	if opened == nil {
		w.Header().Set("X-Session-Id", sessionID)
	}
	h.sse(w, r, turn, sessionID, req.onDisconnect, opened)
	return nil
}

// checkSessionRoom asks the store whether userID may have one more
// session (store.SessionRoom), when it can tell.
func (h *Handlers) checkSessionRoom(ctx context.Context, userID string) error {
	if h.o.Store == nil {
		return nil
	}
	room, ok := store.Capability[store.SessionRoom](h.o.Store)
	if !ok {
		return nil
	}
	return room.CheckSessionRoom(ctx, userID)
}

// startError maps a StartTurn failure to its status. A busy session (409)
// and a user at the cap of turns at once (429) say with Retry-After when
// to try again.
func startError(sessionID string, err error) error {
	var (
		ce   *llm.ConfigError
		held *store.LeaseHeldError
		full *store.TurnSlotsFullError
		over *budget.ExceededError
	)
	switch {
	case errors.As(err, &over):
		// 402, not 429: nothing will change by waiting a moment (no
		// Retry-After to honour), and the GNS3 web UI shows the message of
		// any failed status as it is.
		return httpapi.Errorf(http.StatusPaymentRequired, "%s", over.Error())
	case errors.As(err, &ce):
		return httpapi.Errorf(http.StatusBadRequest, "%s", ce.Message)
	case errors.Is(err, llm.ErrNotConfigured):
		return httpapi.Errorf(http.StatusBadRequest, MsgLLMNotConfigured)
	case errors.Is(err, store.ErrLimitReached):
		if se := httpapi.LimitFailure(err); se != nil {
			return se
		}
		return fmt.Errorf("start turn: %w", err)
	case errors.Is(err, store.ErrNotFound):
		return httpapi.Errorf(http.StatusNotFound, "Session '%s' not found", sessionID)
	case errors.As(err, &full):
		return &httpapi.StatusError{Status: http.StatusTooManyRequests, Message: agent.TooManyTurnsMessage(full.Slots), RetryAfter: full.RetryAfter(time.Now())}
	case errors.Is(err, store.ErrLeaseHeld):
		se := httpapi.Errorf(http.StatusConflict, "A response is already being generated in this session. Wait for it to finish or abort it.")
		se.RetryAfter = time.Second
		if errors.As(err, &held) {
			se.RetryAfter = held.RetryAfter(time.Now())
		}
		return se
	case errors.Is(err, agent.ErrApprovalPending):
		return httpapi.Errorf(http.StatusConflict, "This session is waiting for your decision on the tool calls it asked for: approve or decline them (POST .../sessions/%s/approvals), or send your message with \"approval_decision\": \"reject_all\" to decline them all.", sessionID)
	case errors.Is(err, agent.ErrNothingPending):
		return httpapi.Errorf(http.StatusConflict, "No tool call of this session awaits a decision (none was asked for, or it was already decided).")
	case errors.Is(err, agent.ErrBadDecisions):
		return httpapi.Errorf(http.StatusUnprocessableEntity, "%s", strings.TrimPrefix(err.Error(), agent.ErrBadDecisions.Error()+": "))
	case errors.Is(err, agent.ErrInvalidRequest):
		return httpapi.Errorf(http.StatusUnprocessableEntity, "%s", strings.TrimPrefix(err.Error(), agent.ErrInvalidRequest.Error()+": "))
	case errors.Is(err, context.Canceled):
		return httpapi.Errorf(httpapi.StatusClientClosed, "The request was cancelled.")
	default:
		return fmt.Errorf("start turn: %w", err)
	}
}

// Reply is the body answered to a request with "stream": false.
type Reply struct {
	SessionID    string                `json:"session_id"`
	MessageID    string                `json:"message_id,omitempty"`
	Content      string                `json:"content"`
	ToolMessages []views.OpenAIMessage `json:"tool_messages,omitempty"`
	Error        string                `json:"error,omitempty"`
}

// collect runs the turn without streaming and answers one JSON object.
func (h *Handlers) collect(w http.ResponseWriter, r *http.Request, turn *agent.Turn, sessionID string) {
	var b strings.Builder
	out := Reply{SessionID: sessionID}
	turn.Run(r.Context(), func(ev agent.Event) {
		switch ev.Type {
		case agent.EventContent:
			if out.MessageID != "" && ev.MessageID != out.MessageID && b.Len() > 0 {
				b.WriteString(agent.StepSeparator)
			}
			b.WriteString(ev.Content)
			out.MessageID = ev.MessageID
		case agent.EventToolEnd:
			out.ToolMessages = append(out.ToolMessages, views.OpenAIMessage{Role: store.RoleTool, Name: ev.ToolName, ToolCallID: ev.ToolCallID, Content: ev.ToolOutput})
		case agent.EventError:
			out.Error = ev.Error
		}
	})
	out.Content = b.String()
	if out.Error != "" && out.Content == "" {
		// Nothing was answered: an error in the API's own shape.
		httpapi.Error(w, r, http.StatusBadGateway, out.Error)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

package chat

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/auth"
	"agentchat/internal/httpapi"
	"agentchat/internal/sse"
	"agentchat/internal/store"
	"agentchat/internal/turnlog"
)

// PathRejoin is the path of the route that rejoins a session's stream.
const PathRejoin = "/v3/projects/{project_id}/chat/sessions/{session_id}/stream"

// Values of Request.OnDisconnect.
const (
	onDisconnectContinue = "continue"
	onDisconnectCancel   = "cancel"
)

// maxEventNumber bounds the number of a Last-Event-ID.
const maxEventNumber = 1 << 40

// interruptedText is the error of a rejoined stream whose turn stopped
// without its last event.
const interruptedText = "The response stopped before its end (the server running it went away). Send your message again."

// record starts the turn log of a streamed turn and tees the stream's
// numbered events into it; nil when turns are not logged.
func (h *Handlers) record(ctx context.Context, s *sse.Stream, turn *agent.Turn) *turnlog.Recorder {
	if h.o.TurnLogs == nil {
		return nil
	}
	rec := turnlog.Start(ctx, h.o.TurnLogs, turn.Session().Key(), turn.ID(), turnlog.Options{
		Hub: h.o.Hub, Logger: httpapi.Logger(ctx), Stored: turn.SessionStored, Keep: h.o.TurnLogKeep,
	})
	s.Tee(rec.Add)
	return rec
}

// rejoin serves GET .../sessions/{session_id}/stream: the events of the
// session's turn after the Last-Event-ID header (or ?after=; neither: the
// latest turn from its first event), replayed from the turn log, then
// followed live until the turn's last event. 204 when the session has no
// logged turn, or with ?running=true when its latest turn is not running
// (a page that loads the history first asks so). The X-Turn-Id header
// names the turn: a client drops from the history it shows the messages
// of that turn (metadata.turn_id) the replay brings again.
func (h *Handlers) rejoin(w http.ResponseWriter, r *http.Request) error {
	sid := r.PathValue("session_id")
	if err := httpapi.ValidateUUID("session_id", sid); err != nil {
		return err
	}
	sid = httpapi.NormalizeUUID(sid)
	turn, after, err := lastEventID(r)
	if err != nil {
		return err
	}
	runningOnly := false
	switch v := r.URL.Query().Get("running"); v {
	case "", "false":
	case "true":
		runningOnly = true
	default:
		return httpapi.Errorf(http.StatusBadRequest, "running must be true or false (got %q)", clip(v, 20))
	}
	if h.o.TurnLogs == nil {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	id, _ := auth.FromContext(r.Context())
	k := store.Key{ProjectID: r.PathValue("project_id"), UserID: id.UserID, ThreadID: sid}
	page, err := h.readNamed(r.Context(), k, turn, after)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return httpapi.Errorf(http.StatusNotFound, "Session '%s' not found", sid)
	case err != nil:
		return err
	case page.Turn == "", runningOnly && (!page.Live || page.Final):
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	if len(page.Events) == 0 {
		page.First = after + 1
	}
	w.Header().Set("X-Session-Id", sid)
	w.Header().Set("X-Turn-Id", page.Turn)
	s := sse.Start(w)
	defer s.Close()
	s.Heartbeat(h.o.Heartbeat, heartbeat(sid))
	f := h.o.Follow
	f.Logs, f.Hub = h.o.TurnLogs, h.o.Hub
	outcome, err := f.Follow(r.Context(), k, page, func(seq int64, payload []byte) error {
		// The event's own number: the same id line as the first time.
		s.NumberEventsAfter(page.Turn, seq-1)
		return s.Data(payload)
	})
	if err != nil {
		httpapi.Logger(r.Context()).WarnContext(r.Context(), "follow a turn log", "session", sid, "turn", page.Turn, "err", err)
	}
	if outcome == turnlog.Interrupted {
		// Not part of the log: unnumbered, so that a client coming back
		// again asks from the last real event.
		s.End()
		_ = s.UnnumberedJSON(event{Type: "error", Error: interruptedText, SessionID: sid})
		_ = s.UnnumberedJSON(event{Type: "done", SessionID: sid})
	}
	return nil
}

// namedTurnPoll is how often readNamed reads again a turn not found.
const namedTurnPoll = 50 * time.Millisecond

// readNamed reads the log of session k after event after of turn ("" the
// latest). A client that names a turn received events of it: when the
// store knows no such turn, its last batch is being written (the turn
// released the session's lease, which tells a running turn, a moment
// before), so it is read again for up to the follower's grace before the
// turn counts as gone.
func (h *Handlers) readNamed(ctx context.Context, k store.Key, turn string, after int64) (*store.TurnEvents, error) {
	page, err := h.o.TurnLogs.ReadTurnEvents(ctx, k, turn, after)
	if err != nil || turn == "" || page.Turn != "" {
		return page, err
	}
	grace := h.o.Follow.Grace
	if grace <= 0 {
		grace = turnlog.DefaultGrace
	}
	deadline := time.Now().Add(grace)
	for page.Turn == "" && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(namedTurnPoll):
		}
		if page, err = h.o.TurnLogs.ReadTurnEvents(ctx, k, turn, after); err != nil {
			return nil, err
		}
	}
	return page, nil
}

// lastEventID reads the event a rejoining client received last: the
// Last-Event-ID header, else the after query parameter, as
// "<turn id>:<number>"; neither gives the latest turn from its start.
func lastEventID(r *http.Request) (turn string, after int64, err error) {
	name, v := "Last-Event-ID", r.Header.Get("Last-Event-ID")
	if v == "" {
		name, v = "after", r.URL.Query().Get("after")
	}
	if v == "" {
		return "", 0, nil
	}
	bad := httpapi.Errorf(http.StatusBadRequest, "%s must be an event id of this stream, \"<turn id>:<number>\" (got %q)", name, clip(v, 80))
	turn, n, ok := strings.Cut(v, ":")
	if !ok || httpapi.ValidateUUID(name, turn) != nil {
		return "", 0, bad
	}
	after, perr := strconv.ParseInt(n, 10, 64)
	if perr != nil || after < 0 || after > maxEventNumber {
		return "", 0, bad
	}
	return httpapi.NormalizeUUID(turn), after, nil
}

// clip cuts s to at most n bytes for an error message.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

package chat

import (
	"context"
	"errors"
	"net/http"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/httpapi"
	"agentchat/internal/sse"
	"agentchat/internal/store"

	"github.com/google/uuid"
)

// Values of Request.MultitaskStrategy: what a message sent while its
// session is answering does.
const (
	// strategyReject refuses it: 409 with Retry-After (the default).
	strategyReject = "reject"
	// strategyEnqueue makes it wait for the running turn, then run; its
	// stream says "queued" first. One message at most waits per session.
	strategyEnqueue = "enqueue"
	// strategyInterrupt aborts the running turn (what it completed stays)
	// and runs at once.
	strategyInterrupt = "interrupt"
	// strategyRollback aborts the running turn, removes its messages and
	// runs at once.
	strategyRollback = "rollback"
)

// Timing of the strategies.
const (
	// queuePoll is how often a queued message looks whether the running
	// turn ended, when no batch of its log wakes it.
	queuePoll = 250 * time.Millisecond
	// queueTTL is how long a queued message's place lasts unless renewed
	// (a crashed instance frees it by then).
	queueTTL = 30 * time.Second
	// interruptPoll is queuePoll for an interrupting message.
	interruptPoll = 50 * time.Millisecond
	// interruptWithin bounds the wait for an aborted turn to stop: a live
	// one stops at its next safe point, a dead one loses its lease
	// AbortGrace after the abort.
	interruptWithin = store.AbortGrace + 5*time.Second
)

// queueLock names the store lock (store.DeviceLocks, a named lease of the
// project) held by the message queued on a session.
func queueLock(threadID string) string { return "chat-queue/" + threadID }

// msgQueueFull is the 409 of a second message queued on a session.
const msgQueueFull = "A message is already waiting for the response being generated in this session. Wait for it to start, or abort the response."

// msgInterruptSlow is the 409 of an interrupt whose turn did not stop.
const msgInterruptSlow = "The response being generated in this session did not stop in time. Try again in a moment."

// startTurn starts the turn of tr as the request's multitask strategy
// says when the session is answering. For enqueue, the stream may be
// opened (with its "queued" event) before the turn starts: it is
// returned then, and a failure to start after that is written to it (the
// returned error is nil and so is the turn).
func (h *Handlers) startTurn(w http.ResponseWriter, r *http.Request, tr agent.TurnRequest, req *validated) (*agent.Turn, *sse.Stream, error) {
	ctx := r.Context()
	turn, err := h.o.Runtime.StartTurn(ctx, tr)
	var held *store.LeaseHeldError
	if !errors.As(err, &held) || tr.Key.ThreadID == "" {
		return turn, nil, err
	}
	switch req.strategy {
	case strategyInterrupt, strategyRollback:
		if h.o.Store == nil {
			return nil, nil, err
		}
		if req.strategy == strategyRollback {
			tr.RollBack = held.Owner
		}
		if aerr := h.o.Store.RequestAbort(ctx, tr.Key); aerr != nil {
			return nil, nil, aerr
		}
		deadline := time.Now().Add(interruptWithin)
		for {
			if werr := h.waitLease(ctx, tr.Key, held.Owner, interruptPoll); werr != nil {
				return nil, nil, werr
			}
			turn, err = h.o.Runtime.StartTurn(ctx, tr)
			if !errors.As(err, &held) {
				return turn, nil, err
			}
			if time.Now().After(deadline) {
				return nil, nil, httpapi.Errorf(http.StatusConflict, msgInterruptSlow)
			}
		}
	case strategyEnqueue:
		return h.enqueue(w, r, tr, held)
	}
	return nil, nil, err
}

// enqueue holds the session's queue, opens the stream with a "queued"
// event and starts the turn once the running one ended.
func (h *Handlers) enqueue(w http.ResponseWriter, r *http.Request, tr agent.TurnRequest, held *store.LeaseHeldError) (*agent.Turn, *sse.Stream, error) {
	ctx := r.Context()
	if h.o.Store == nil {
		return nil, nil, held
	}
	k, owner := tr.Key, uuid.NewString()
	lock := func() error {
		return h.o.Store.AcquireDeviceLock(ctx, k.ProjectID, queueLock(k.ThreadID), owner, queueTTL)
	}
	if err := lock(); err != nil {
		if errors.Is(err, store.ErrLeaseHeld) {
			se := httpapi.Errorf(http.StatusConflict, msgQueueFull)
			se.RetryAfter = held.RetryAfter(time.Now())
			return nil, nil, se
		}
		return nil, nil, err
	}
	defer func() {
		_ = h.o.Store.ReleaseDeviceLock(context.WithoutCancel(ctx), k.ProjectID, queueLock(k.ThreadID), owner)
	}()
	w.Header().Set("X-Session-Id", k.ThreadID)
	s := sse.Start(w)
	_ = s.JSON(event{Type: "queued", SessionID: k.ThreadID})
	s.Heartbeat(h.o.Heartbeat, heartbeat(k.ThreadID))
	locked := time.Now()
	for {
		if err := h.waitLease(ctx, k, held.Owner, queuePoll); err != nil {
			h.failQueued(s, k.ThreadID, err)
			return nil, s, nil
		}
		if time.Since(locked) > queueTTL/3 {
			if err := lock(); err != nil {
				h.failQueued(s, k.ThreadID, err)
				return nil, s, nil
			}
			locked = time.Now()
		}
		turn, err := h.o.Runtime.StartTurn(ctx, tr)
		if errors.As(err, &held) {
			continue
		}
		if err != nil {
			h.failQueued(s, k.ThreadID, startError(k.ThreadID, err))
			return nil, s, nil
		}
		return turn, s, nil
	}
}

// failQueued ends the stream of a queued message that could not start.
func (h *Handlers) failQueued(s *sse.Stream, sessionID string, err error) {
	msg := "The queued message could not be sent."
	var se *httpapi.StatusError
	switch {
	case errors.As(err, &se):
		msg = se.Message
	case errors.Is(err, context.Canceled):
		msg = "The request was cancelled."
	}
	s.End()
	_ = s.JSON(event{Type: "error", Error: msg, SessionID: sessionID})
	_ = s.JSON(event{Type: "done", SessionID: sessionID})
	s.Close()
}

// waitLease returns once the session's lease may no longer be owner's:
// its turn log says the turn does not hold it (not Live: the store tells
// a running turn by its lease even before its first batch), read again
// when the turn writes a batch in this process and every poll. Without
// turn logs, it returns after one poll.
func (h *Handlers) waitLease(ctx context.Context, k store.Key, owner string, poll time.Duration) error {
	timer := time.NewTimer(poll)
	defer timer.Stop()
	if h.o.TurnLogs == nil || owner == "" {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return nil
		}
	}
	woken, stop := h.o.Hub.Subscribe(owner)
	defer stop()
	for {
		p, err := h.o.TurnLogs.ReadTurnEvents(ctx, k, owner, maxEventNumber)
		switch {
		case err != nil:
			return err
		case !p.Live:
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-woken:
		case <-timer.C:
		}
		timer.Reset(poll)
	}
}

package llm

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// bound names one of the time bounds of a call.
type bound int

// The bounds of a call.
const (
	// boundCall: a non-streamed call as a whole (CallTimeout).
	boundCall bound = iota
	// boundFirst: a streamed call until its first token (CallTimeout).
	boundFirst
	// boundIdle: the silence between two chunks once a stream has
	// started (IdleTimeout).
	boundIdle
)

// boundError is the cancel cause of a call that hit one of its bounds.
type boundError struct {
	bound bound
	d     time.Duration
}

// Error describes the bound for logs.
func (e *boundError) Error() string { return "llm " + e.detail() }

// detail is the Detail of the call's Error.
func (e *boundError) detail() string {
	switch e.bound {
	case boundFirst:
		return "no first token within " + formatBound(e.d)
	case boundIdle:
		return "no chunk for " + formatBound(e.d) + " after the answer started"
	}
	return "no answer within " + formatBound(e.d)
}

// llmError is the Error of a call that hit the bound. Its user message
// names the setting that sets the bound, so that whoever runs the server
// knows which one to raise. It is never retryable: the first bound holds
// every attempt of the call, and the idle bound only applies once tokens
// were delivered.
func (e *boundError) llmError() *Error {
	le := &Error{Kind: KindTimeout, Detail: e.detail(), cause: context.DeadlineExceeded}
	d := formatBound(e.d)
	switch e.bound {
	case boundFirst:
		le.user = fmt.Sprintf("The LLM provider did not answer in time: no first token within %s (LLM_TIMEOUT_SECONDS).", d)
	case boundIdle:
		le.user = fmt.Sprintf("The LLM provider stopped answering: it sent nothing for %s (LLM_IDLE_TIMEOUT_SECONDS).", d)
	default:
		le.user = fmt.Sprintf("The LLM provider did not answer in time: no answer within %s (LLM_TIMEOUT_SECONDS).", d)
	}
	return le
}

// formatBound writes whole seconds as "120s" (as the settings are given),
// anything else as time.Duration does.
func formatBound(d time.Duration) string {
	if d >= time.Second && d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

// watch enforces the bounds of one call by cancelling the call's context
// with a *boundError as the cause. From the call's start its first bound
// runs (a stream's first token, or a non-streamed call's whole answer),
// over every attempt; once a stream delivered its first token, the idle
// bound runs while the next chunk is awaited and not while a chunk is
// handled, so that a slow consumer (onDelta) is not taken for a silent
// model. The caller's context stays the overall bound.
//
// The idle bound costs no timer operation per chunk: waiting and arrived
// only note when the current wait began, and one timer, armed at the first
// wait, checks that when it fires and sets itself again for what is left
// (a full idle period while a chunk is handled).
//
// The call's goroutine calls token, waiting, arrived and stop; the timers
// only read the wait and cancel the context.
type watch struct {
	cancel context.CancelCauseFunc
	first  *time.Timer
	idle   time.Duration
	// idleT is nil until the first wait after the first token; atomic for
	// its timer, which sets itself again.
	idleT   atomic.Pointer[time.Timer]
	started bool      // the first token was delivered
	base    time.Time // the watch's start, for waitFrom
	// waitFrom is when the current wait for a chunk began, as time since
	// base plus one; 0 while no wait runs.
	waitFrom atomic.Int64
	stopped  atomic.Bool
}

// startWatch starts the first bound (first, after d) of a call whose
// context cancel cancels; idle is the idle bound of a stream.
func startWatch(cancel context.CancelCauseFunc, first bound, d, idle time.Duration) *watch {
	cause := &boundError{bound: first, d: d}
	return &watch{
		cancel: cancel,
		first:  time.AfterFunc(d, func() { cancel(cause) }),
		idle:   idle,
		base:   time.Now(),
	}
}

// token notes that a token is being delivered: the first bound is over.
func (w *watch) token() {
	if w == nil || w.started {
		return
	}
	w.started = true
	w.first.Stop()
}

// waiting notes that the next chunk is awaited (once the stream has
// started), arming the idle timer the first time.
func (w *watch) waiting() {
	if w == nil || !w.started {
		return
	}
	w.waitFrom.Store(int64(time.Since(w.base)) + 1)
	if w.idleT.Load() == nil {
		// Made stopped, stored, then started: checkIdle always finds it.
		t := time.AfterFunc(time.Hour, w.checkIdle)
		t.Stop()
		w.idleT.Store(t)
		t.Reset(w.idle)
	}
}

// arrived notes that the wait is over: a chunk (or the end) was read.
func (w *watch) arrived() {
	if w != nil {
		w.waitFrom.Store(0)
	}
}

// checkIdle runs when the idle timer fires: it ends the call when the
// current wait has lasted the idle bound, else sets the timer again for
// what is left of it.
func (w *watch) checkIdle() {
	if w.stopped.Load() {
		return
	}
	next := w.idle
	if from := w.waitFrom.Load(); from != 0 {
		waited := time.Since(w.base) - time.Duration(from-1)
		if waited >= w.idle {
			w.cancel(&boundError{bound: boundIdle, d: w.idle})
			return
		}
		next = w.idle - waited
	}
	w.idleT.Load().Reset(next)
}

// stop ends the watch when the call returns.
func (w *watch) stop() {
	if w == nil {
		return
	}
	w.stopped.Store(true)
	w.first.Stop()
	w.arrived()
	if t := w.idleT.Load(); t != nil {
		t.Stop()
	}
}

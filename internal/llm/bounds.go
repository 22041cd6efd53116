package llm

import (
	"context"
	"fmt"
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
// bound runs while the next chunk is awaited and is disarmed while a chunk
// is handled, so that a slow consumer (onDelta) is not taken for a silent
// model. The caller's context stays the overall bound.
//
// A watch is used by the goroutine of its call only; its timers only
// cancel the context.
type watch struct {
	cancel  context.CancelCauseFunc
	first   *time.Timer
	idle    time.Duration
	idleT   *time.Timer // nil until the first wait after the first token
	started bool        // the first token was delivered
}

// startWatch starts the first bound (first, after d) of a call whose
// context cancel cancels; idle is the idle bound of a stream.
func startWatch(cancel context.CancelCauseFunc, first bound, d, idle time.Duration) *watch {
	cause := &boundError{bound: first, d: d}
	return &watch{
		cancel: cancel,
		first:  time.AfterFunc(d, func() { cancel(cause) }),
		idle:   idle,
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

// waiting arms the idle bound before the next chunk is read (once the
// stream has started).
func (w *watch) waiting() {
	if w == nil || !w.started {
		return
	}
	if w.idleT == nil {
		cause := &boundError{bound: boundIdle, d: w.idle}
		w.idleT = time.AfterFunc(w.idle, func() { w.cancel(cause) })
		return
	}
	w.idleT.Reset(w.idle)
}

// arrived disarms the idle bound: a chunk (or the end) was read.
func (w *watch) arrived() {
	if w != nil && w.idleT != nil {
		w.idleT.Stop()
	}
}

// stop ends the watch when the call returns.
func (w *watch) stop() {
	if w == nil {
		return
	}
	w.first.Stop()
	w.arrived()
}

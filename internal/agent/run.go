package agent

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"agentchat/internal/store"
	"agentchat/internal/telemetry"

	openai "github.com/sashabaranov/go-openai"
)

// Running a started turn: its context (deadline, abort, lease), the
// history and the agent's preparation, the loop, and the error text the
// turn reports. Persistence is in record.go, the abort/lease watch in
// watch.go.

// userAppendDelay is the longest the user message waits for the first
// event of the LLM before it is stored anyway.
const userAppendDelay = 50 * time.Millisecond

// errTurnTimeout ends a turn (or a stateless run) past TurnTimeout; the
// other causes of a turn context's end, besides the client's own
// cancellation, are given by the watch (watch.go), the user message's
// append (record.go) and the creation of a new session (start.go).
var errTurnTimeout = errors.New("turn deadline exceeded")

// turnRun is the state of one Run.
type turnRun struct {
	t    *Turn
	base context.Context // the caller's context
	ctx  context.Context // base + TurnTimeout + abort/lease cancellation
	// cancel ends ctx with a cause (errSessionGone, errUserNotSent, ...);
	// the first cause given wins.
	cancel context.CancelCauseFunc
	em     *emitter
	// used is what the loop used (LLM calls, tokens, tools), once it ran.
	used runResult

	// userSaved receives the result of the append of the user message,
	// which runs beside the first LLM call once userKick is closed (first
	// event, first store write, or userAppendDelay), so that it does not
	// delay the first token.
	userSaved chan error
	userKick  chan struct{}
	kickOnce  sync.Once
	userErr   error
	userDone  bool
	// stepSaved receives the result of the last append started by
	// saveBeside (a step's tool messages, a reading step's call), which
	// runs beside what follows it (nil: none pending); stepErr is the
	// first such append's failure.
	stepSaved chan error
	stepErr   error

	stats store.TurnStats

	// final is the final answer, stored by finish with the statistics and
	// the release of the lease (store.FinishTurn: one write when the store
	// has it).
	final *store.Message
	// newTitle is the session's generated title (empty: none), stored by
	// finish too (store.FinishTitledTurn).
	newTitle string

	// snapTried: the turn's snapshot was attempted (beforeChange);
	// snapshotID is the one taken, empty when none.
	snapTried  bool
	snapshotID string
}

// Run executes the turn, calling emit for each event in order and from one
// goroutine at a time. It always ends with EventDone (also after
// EventError) and returns once everything is persisted: the messages of each
// completed step, the statistics (once) and the released lease.
//
// A user abort (store.RequestAbort, polled every AbortPoll), the caller's
// cancellation or the deletion of the session stop the turn at the next
// safe point without an EventError; the turn deadline, a lost lease, an LLM
// failure, a store failure and MaxSteps end it with an EventError.
func (t *Turn) Run(ctx context.Context, emit func(Event)) {
	ctx, emit, endSpan := t.r.traceTurn(ctx, t.req.AgentID, t.req.Key.ThreadID, emit)
	defer endSpan()
	tr := &turnRun{t: t, base: ctx, stats: store.TurnStats{Turns: 1}, userKick: make(chan struct{})}
	em := &emitter{fn: func(e Event) {
		tr.kickUser()
		emit(e)
	}}
	tr.em = em
	if t.started.Swap(true) {
		em.emit(Event{Type: EventError, Error: "This turn has already run."})
		em.emit(Event{Type: EventDone})
		return
	}
	// finish releases the slot; this is for a panic that skips it.
	defer t.slot.release(ctx)
	o := t.r.o
	o.Metrics.TurnStarted()
	tctx, cancelTimeout := context.WithTimeoutCause(ctx, o.TurnTimeout, errTurnTimeout)
	defer cancelTimeout()
	tctx, cancel := context.WithCancelCause(tctx)
	defer cancel(nil)

	tr.ctx, tr.cancel = tctx, cancel
	// What the agent began reading for the turn ends with it, or as soon
	// as it is stopped.
	defer t.stopPrep()
	defer context.AfterFunc(tctx, t.stopPrep)()
	// An abort requested in this process wakes the watch at once (polling
	// finds the others, another instance's): subscribed here, before the
	// turn can emit anything, so that no abort made after its first event
	// waits for the next poll.
	var notified <-chan struct{}
	if n, ok := o.Store.(store.AbortNotifier); ok {
		ch, stop := n.WatchAbort(t.req.Key)
		defer stop()
		notified = ch
	}
	var watch sync.WaitGroup
	watch.Go(func() {
		if t.createErr() != nil {
			cancel(errNotCreated)
			return
		}
		t.watch(tctx, cancel, notified)
	})

	var errMsg string
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.r.log.ErrorContext(ctx, "agent turn panicked", "session", t.req.Key.ThreadID, "panic", p, "stack", string(debug.Stack()))
				errMsg = "An internal error stopped the turn."
			}
		}()
		errMsg = tr.run()
	}()

	cancel(nil)
	watch.Wait()
	errMsg = tr.finish(errMsg)
	o.Metrics.TurnEnded(turnOutcome(errMsg, tr.stats))
	if errMsg != "" {
		em.emit(Event{Type: EventError, Error: errMsg})
	}
	em.emit(Event{Type: EventDone})
}

// turnOutcome is how a turn ended, for the turn metrics: failed when it
// reports an error, aborted when it was stopped without one (a user abort,
// the client gone, the session deleted), completed otherwise.
func turnOutcome(errMsg string, stats store.TurnStats) string {
	switch {
	case errMsg != "":
		return telemetry.TurnFailed
	case stats.AbortedTurns > 0:
		return telemetry.TurnAborted
	}
	return telemetry.TurnCompleted
}

// run is the body of the turn; it returns the error text to report, if any.
func (tr *turnRun) run() string {
	t, o := tr.t, tr.t.r.o
	ctx, log := tr.ctx, tr.t.r.log

	// History and the agent's preparation are independent: run both at once.
	var hist []store.Message
	var histErr error
	var wg sync.WaitGroup
	switch {
	case t.opened == nil: // created beside the turn: no history
	case t.opened.HistoryLoaded():
		hist, histErr = t.opened.History(ctx)
	default:
		wg.Go(func() { hist, histErr = t.opened.History(ctx) })
	}
	su, perr := t.r.finishPreparing(ctx, t.agent, t.prep, t.mode)
	wg.Wait()

	now := o.Now().UTC()
	user := store.Message{ID: o.NewID(), Role: store.RoleUser, Content: t.req.Message, CreatedAt: now}
	if t.seed != nil {
		user = *t.seed // written with the session (createBeside)
	}
	var (
		history []openai.ChatCompletionMessage
		repairs []store.Message
	)
	build := func() { history, repairs = buildHistory(trimHistory(hist), o.NewID, now) }
	if histErr == nil && len(t.awaiting) == 0 {
		// With calls awaiting a decision, the history is built once they
		// are answered (they are no crash to repair).
		build()
	}
	// The repairs and the user message are stored in one append: beside the
	// first LLM call, or right away when the turn ends before it. Decisions
	// (a continuation) bring no user message.
	continuation := len(t.req.Decisions) > 0
	pendingMsgs := func() []store.Message {
		p := append([]store.Message(nil), repairs...)
		if !continuation {
			p = append(p, user)
		}
		return p
	}
	pending := pendingMsgs()

	if stop := tr.stopText(); stop != "" || ctx.Err() != nil {
		tr.saveEarly(pending)
		return stop
	}
	if histErr != nil {
		if errors.Is(histErr, store.ErrNotFound) {
			tr.cancel(errSessionGone)
			return ""
		}
		log.ErrorContext(ctx, "load history", "session", t.req.Key.ThreadID, "err", histErr)
		tr.saveEarly(pending)
		return "Could not load the conversation history."
	}
	if perr != nil {
		log.ErrorContext(ctx, "prepare agent", "session", t.req.Key.ThreadID, "agent", t.agent.ID, "err", perr)
		tr.saveEarly(pending)
		return "Could not prepare the agent for this turn."
	}

	tr.recordPolicy()
	l := newLoop(t.r, t.llm.Client, su, tr.em, tr)
	l.prices, l.budget = t.llm.Prices, t.budget
	l.policy, l.canPause = t.policy, true
	if len(t.awaiting) > 0 {
		// Decide the calls that awaited a decision (or decline them all),
		// store their results, and build the history with them.
		dm, err := tr.settle(ctx, l)
		if err != nil {
			log.ErrorContext(ctx, "settle pending approvals", "session", t.req.Key.ThreadID, "err", err)
			tr.saveEarly(pending)
			return saveFailedText
		}
		hist = append(hist, dm...)
		build()
		pending = pendingMsgs()
	}
	msgs := make([]openai.ChatCompletionMessage, 0, len(history)+2)
	if su.system != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: su.system})
	}
	msgs = append(msgs, history...)
	if !continuation {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: t.req.Message})
	}
	l.req.Messages = msgs
	l.req.Temperature = t.req.Temperature
	if l.req.Temperature == nil {
		l.req.Temperature = t.llm.Temperature
	}
	l.req.MaxTokens = t.llm.MaxTokens
	l.window = t.r.newWindow(t.llm, l.req.MaxTokens, msgs, len(msgs)-1)

	tr.appendUser(pending)
	tr.used = l.run(ctx)
	out, res, err := tr.used.out, tr.used.last, tr.used.err
	uerr := tr.waitUser()
	serr := tr.waitSaved()
	if tr.gone() {
		return ""
	}
	if uerr != nil {
		if errors.Is(uerr, errNotCreated) {
			return notCreatedText
		}
		return "Could not save your message."
	}
	if serr != nil {
		log.ErrorContext(ctx, "save a step's messages", "session", t.req.Key.ThreadID, "err", serr)
		return saveFailedText
	}
	switch out {
	case outFinal:
		if tr.wantsTitle() {
			tr.title(firstUserMessage(hist, t.req.Message), t.req.Message, res.Content)
		}
		return ""
	case outPaused:
		return ""
	case outMaxSteps:
		return maxStepsText(o.MaxSteps)
	case outStopped:
		return tr.stopText()
	case outClientTools:
		return "The model called a tool that is not available."
	}
	if stop := tr.stopText(); stop != "" {
		return stop
	}
	log.WarnContext(ctx, "turn failed", "session", t.req.Key.ThreadID, "err", err)
	return humanError(err)
}

// trimHistory drops the messages before the first user message of a
// history window (the last MaxHistory messages), so that the window does
// not start with tool results or an assistant step cut from its request.
func trimHistory(hist []store.Message) []store.Message {
	for i, m := range hist {
		if m.Role == store.RoleUser {
			return hist[i:]
		}
	}
	return nil
}

// wantsTitle reports whether the turn generates the session's title once
// its answer is final: the session still has the default title, which the
// user did not set.
func (tr *turnRun) wantsTitle() bool {
	s := tr.t.session
	return s.Title == store.DefaultTitle && !s.TitleSetByUser
}

// gone reports whether the session was deleted during the turn.
func (tr *turnRun) gone() bool {
	return errors.Is(context.Cause(tr.ctx), errSessionGone)
}

// stopText explains why the turn's context ended; empty for a user abort,
// a client that left, a deleted session or a context still running.
func (tr *turnRun) stopText() string {
	if tr.ctx.Err() == nil {
		return ""
	}
	cause := context.Cause(tr.ctx)
	switch {
	case errors.Is(cause, errSessionGone):
		return ""
	case errors.Is(cause, errAborted):
		tr.stats.AbortedTurns = 1
		return ""
	case errors.Is(cause, errLeaseLost):
		return "The turn was stopped because another turn took over this session."
	case errors.Is(cause, errUserNotSent):
		return "Could not save your message."
	case errors.Is(cause, errStepNotSaved):
		return saveFailedText
	case errors.Is(cause, errNotCreated):
		return notCreatedText
	case errors.Is(cause, errTurnTimeout), errors.Is(cause, context.DeadlineExceeded):
		return fmt.Sprintf("The turn took longer than the %s limit and was stopped.", tr.t.r.o.TurnTimeout)
	}
	// The caller went away (client disconnect).
	tr.stats.AbortedTurns = 1
	return ""
}

// firstUserMessage is the session's first user message (the current one
// when the history has none).
func firstUserMessage(hist []store.Message, current string) string {
	for _, m := range hist {
		if m.Role == store.RoleUser {
			return m.Content
		}
	}
	return current
}

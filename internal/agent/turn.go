package agent

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"agentchat/internal/llm"
	"agentchat/internal/store"

	openai "github.com/sashabaranov/go-openai"
)

// userAppendDelay is the longest the user message waits for the first
// event of the LLM before it is stored anyway.
const userAppendDelay = 50 * time.Millisecond

// Causes of a turn context's end, besides the client's own cancellation.
var (
	errAborted     = errors.New("turn aborted by request")
	errLeaseLost   = errors.New("turn lease lost")
	errTurnTimeout = errors.New("turn deadline exceeded")
	errUserNotSent = errors.New("user message not saved")
	// errSessionGone: the session (or its project) was deleted during the
	// turn; the turn ends quietly and writes nothing more.
	errSessionGone = errors.New("session deleted during the turn")
	// errNotCreated: the new session of the turn could not be created
	// (see Turn.createBeside); nothing of the turn is stored.
	errNotCreated = errors.New("session not created")
)

// notCreatedText is the error a turn reports when its new session could
// not be created.
const notCreatedText = "Could not start the conversation."

// TurnRequest asks for one turn of the persisted project chat.
type TurnRequest struct {
	// Key is the session and its owner. An empty ThreadID creates a new
	// session with a generated id; an unknown one creates the session with
	// that (client-made) id; another user's is store.ErrNotFound.
	Key store.Key
	// AgentID selects the agent (the registry's fallback when unknown).
	AgentID string
	// Message is the user's message.
	Message string
	// Temperature overrides the configured temperature for this turn.
	Temperature *float32
	// Mode is the agent mode asked for (copilot_mode), or empty: the mode
	// of the user's default LLM configuration, else the session's recorded
	// mode, else the agent's default, applies. It must be
	// one of the agent's Modes (ignored for an agent without modes).
	Mode string
}

// Turn is a started turn: the session exists (a new one is being created,
// see createBeside) and its lease (and one of the user's turn slots) is
// held by this turn until Run (or Release) returns.
type Turn struct {
	r     *Runtime
	req   TurnRequest
	agent *Agent
	// llm is the user's LLM configuration for the turn.
	llm     llm.Resolved
	session *store.Session
	// created: the session was made by StartTurn, so it has no history.
	created bool
	// pending is the creation of a new session running beside the turn's
	// first LLM call (nil once it is not: an existing session).
	pending *pendingCreate
	// opened is the session opened by store.OpenTurn (nil while pending),
	// which gives its history.
	opened *store.OpenedTurn
	owner  string
	// mode is the turn's resolved agent mode (empty without modes).
	mode    string
	started atomic.Bool
	// slot is the user's turn slot held by the turn (nil: no cap).
	slot *turnSlot
	// ready waits for the agent, the LLM and the slot of StartTurn and
	// returns the first failure among them; create calls it first.
	ready func() error
}

// Session returns the session as it was when the turn started.
func (t *Turn) Session() *store.Session { return t.session }

// Mode returns the turn's agent mode: the requested one, else the user's
// configured one, else the session's, else the agent's default (empty for an agent without modes).
func (t *Turn) Mode() string { return t.mode }

// StartTurn does everything that can fail with a clean status before any
// streaming: it resolves the agent and the user's LLM (llm.ErrNotConfigured),
// takes one of the user's turn slots (a *store.TurnSlotsFullError when the
// user already runs MaxTurnsPerUser turns), creates the session when it is
// new or loads it (store.ErrNotFound when it belongs to someone else), and
// takes the session's lease (a *store.LeaseHeldError when a turn is
// already running). The LLM resolution, the slot (usually one write; taken
// inline when the store counts slots in memory) and the opening of the
// session (store.OpenTurn: one write, or the session read and the lease
// at once) run in parallel: an existing session costs one round trip of
// store calls. A missing session is created once the LLM and the slot are
// known to be there, with its lease; one with a generated id in one write
// beside the turn's first LLM call (see createBeside).
func (r *Runtime) StartTurn(ctx context.Context, req TurnRequest) (*Turn, error) {
	if r.o.Store == nil {
		return nil, errors.New("agent runtime: no store configured")
	}
	switch {
	case req.Key.ProjectID == "":
		return nil, fmt.Errorf("%w: project id is empty", ErrInvalidRequest)
	case req.Key.UserID == "":
		return nil, fmt.Errorf("%w: user id is empty", ErrInvalidRequest)
	case req.Message == "":
		return nil, fmt.Errorf("%w: message is empty", ErrInvalidRequest)
	}
	t := &Turn{r: r, req: req, owner: r.o.NewID()}
	// The user's LLM, the user's turn slot and the session (its read and
	// its lease) do not depend on one another: they are asked for at once,
	// so that on an existing session they cost one round trip of store
	// calls. A session is only created once the first two succeeded
	// (t.ready), so that a refused turn leaves nothing behind.
	resolved := make(chan error, 1)
	resolve := func() {
		a, res, err := r.resolve(ctx, req.AgentID, req.Key.UserID)
		if err == nil && req.Mode != "" && len(a.Modes) > 0 && !a.HasMode(req.Mode) {
			err = fmt.Errorf("%w: agent %s has no mode %q", ErrInvalidRequest, a.ID, req.Mode)
		}
		t.agent, t.llm = a, res
		resolved <- err
	}
	waitSlot := r.startTurnSlot(ctx, req.Key.UserID, t.owner)
	if req.Key.ThreadID == "" {
		// A new session waits for both before anything else: the LLM is
		// resolved here, beside the slot, not on a third goroutine.
		resolve()
	} else {
		go resolve()
	}
	var (
		once       sync.Once
		rerr, serr error
	)
	t.ready = func() error {
		once.Do(func() {
			rerr = <-resolved
			t.slot, serr = waitSlot()
		})
		if rerr != nil {
			return rerr
		}
		return serr
	}
	oerr := t.open(ctx)
	if err := t.ready(); err != nil {
		if oerr == nil {
			t.release(ctx) // the lease of an existing session
		}
		t.slot.release(ctx)
		return nil, err
	}
	if oerr != nil {
		t.slot.release(ctx)
		return nil, oerr
	}
	t.mode = t.agent.resolveMode(req.Mode, t.session, t.llm.CopilotMode)
	return t, nil
}

// open opens the turn on its session with store.OpenTurn: it loads or
// creates the session and takes its lease. The creation of a missing
// session waits for t.ready (inside the store's write when it has one),
// so that a refused turn leaves nothing behind. A new session with a
// generated id is created beside the turn (createBeside).
func (t *Turn) open(ctx context.Context) error {
	k := &t.req.Key
	if k.ThreadID == "" {
		k.ThreadID = t.r.o.NewID()
		return t.createBeside(ctx)
	}
	o, err := store.OpenTurn(ctx, t.r.o.Store, t.opening(func() (*store.Session, error) {
		if err := t.ready(); err != nil {
			return nil, err
		}
		return t.newSession(), nil
	}))
	if err != nil {
		return err
	}
	t.opened, t.session, t.created = o, o.Session, o.Created
	return nil
}

// opening is the store.OpenTurn of the turn; newSession makes the session
// to create when it is missing.
func (t *Turn) opening(newSession func() (*store.Session, error)) store.TurnOpening {
	return store.TurnOpening{
		Key: t.req.Key, Owner: t.owner, TTL: t.r.o.LeaseTTL,
		HistoryLimit: t.r.o.MaxHistory, NewSession: newSession,
	}
}

// newSession is the session a turn creates (once t.ready succeeded).
func (t *Turn) newSession() *store.Session {
	k := t.req.Key
	now := t.r.o.Now().UTC()
	s := &store.Session{
		ThreadID: k.ThreadID, UserID: k.UserID, ProjectID: k.ProjectID,
		Title: store.DefaultTitle, CreatedAt: now, UpdatedAt: now, Metadata: map[string]any{},
	}
	if m := t.agent.resolveMode(t.req.Mode, nil, t.llm.CopilotMode); m != "" {
		s.Metadata[store.MetadataCopilotMode] = m
	}
	return s
}

// pendingCreate is the creation of a turn's new session, running beside
// the turn.
type pendingCreate struct {
	done chan struct{} // closed once the write returned
	err  error
}

// createBeside starts the creation of the turn's new session, with its
// lease, once the agent, the LLM and the slot are there (a refused turn
// leaves nothing behind). The session's id was just generated, so no other
// turn, abort or listing can know it yet: the turn does not wait for the
// write before its first LLM call, only before its first store access
// (createErr: the watch, every write, the end of the turn). A failed
// creation stops the turn with notCreatedText and nothing stored.
func (t *Turn) createBeside(ctx context.Context) error {
	if err := t.ready(); err != nil {
		return err
	}
	s := t.newSession()
	t.session, t.created = s, true
	p := &pendingCreate{done: make(chan struct{})}
	t.pending = p
	op := t.opening(func() (*store.Session, error) { return s, nil })
	op.Fresh = true
	go func() {
		defer close(p.done)
		// The write outlives the request's cancellation: the turn ends
		// (and releases the lease) either way.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
		defer cancel()
		if _, err := store.OpenTurn(wctx, t.r.o.Store, op); err != nil {
			p.err = fmt.Errorf("%w: %w", errNotCreated, err)
		}
	}()
	return nil
}

// createErr waits for the creation of the turn's new session, if one
// runs, and returns its failure (wrapping errNotCreated).
func (t *Turn) createErr() error {
	if t.pending == nil {
		return nil
	}
	<-t.pending.done
	return t.pending.err
}

// Release frees the turn's lease without running it. Call it when a
// started turn will not be Run; Run releases the lease itself.
func (t *Turn) Release(ctx context.Context) error {
	if t.started.Swap(true) {
		return nil
	}
	defer t.slot.release(ctx)
	if err := t.createErr(); err != nil {
		t.r.log.ErrorContext(ctx, "create session", "session", t.req.Key.ThreadID, "err", err)
		return nil // no session, no lease
	}
	return t.r.o.Store.ReleaseLease(context.WithoutCancel(ctx), t.req.Key, t.owner)
}

// release frees the lease taken by open when StartTurn fails after
// taking it, or when the session was deleted during the turn; ctx gives
// the values of the request (its cancellation is ignored).
func (t *Turn) release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	if err := t.r.o.Store.ReleaseLease(ctx, t.req.Key, t.owner); err != nil {
		t.r.log.ErrorContext(ctx, "release session lease", "session", t.req.Key.ThreadID, "err", err)
	}
}

// turnRun is the state of one Run.
type turnRun struct {
	t    *Turn
	base context.Context // the caller's context
	ctx  context.Context // base + TurnTimeout + abort/lease cancellation
	// cancel ends ctx with a cause (errSessionGone, errUserNotSent, ...);
	// the first cause given wins.
	cancel context.CancelCauseFunc
	l      *loop
	em     *emitter

	// userSaved receives the result of the append of the user message,
	// which runs beside the first LLM call once userKick is closed (first
	// event, first store write, or userAppendDelay), so that it does not
	// delay the first token.
	userSaved chan error
	userKick  chan struct{}
	kickOnce  sync.Once
	userErr   error
	userDone  bool

	stats store.TurnStats

	// final is the final answer, stored by finish with the statistics and
	// the release of the lease (store.FinishTurn: one write when the store
	// has it).
	final *store.Message
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
	tctx, cancelTimeout := context.WithTimeoutCause(ctx, o.TurnTimeout, errTurnTimeout)
	defer cancelTimeout()
	tctx, cancel := context.WithCancelCause(tctx)
	defer cancel(nil)

	tr.ctx, tr.cancel = tctx, cancel
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
	if errMsg != "" {
		em.emit(Event{Type: EventError, Error: errMsg})
	}
	em.emit(Event{Type: EventDone})
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
	su, perr := t.r.prepare(ctx, t.agent, TurnInfo{ProjectID: t.req.Key.ProjectID, UserID: t.req.Key.UserID, Mode: t.mode})
	wg.Wait()

	now := o.Now().UTC()
	user := store.Message{ID: o.NewID(), Role: store.RoleUser, Content: t.req.Message, CreatedAt: now}
	var (
		history []openai.ChatCompletionMessage
		repairs []store.Message
	)
	if histErr == nil {
		history, repairs = buildHistory(trimHistory(hist), o.NewID, now)
	}
	// The repairs and the user message are stored in one append: beside the
	// first LLM call, or right away when the turn ends before it.
	pending := append(repairs, user)

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

	l := newLoop(t.r, t.llm.Client, su, tr.em)
	tr.l = l
	msgs := make([]openai.ChatCompletionMessage, 0, len(history)+2)
	if su.system != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: su.system})
	}
	msgs = append(msgs, history...)
	msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: t.req.Message})
	l.req.Messages = msgs
	l.req.Temperature = t.req.Temperature
	if l.req.Temperature == nil {
		l.req.Temperature = t.llm.Temperature
	}
	l.req.MaxTokens = t.llm.MaxTokens
	l.window = t.r.newWindow(t.llm, l.req.MaxTokens, msgs, len(msgs)-1)
	l.saveAssistant = tr.saveAssistant
	l.saveTools = tr.saveTools

	// A failure of the user message's append stops the turn.
	tr.userSaved = make(chan error, 1)
	go func() {
		timer := time.NewTimer(userAppendDelay)
		select {
		case <-tr.userKick:
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
		err := tr.persist(pending)
		switch {
		case errors.Is(err, errNotCreated):
			tr.cancel(errNotCreated)
		case err != nil:
			tr.cancel(errUserNotSent)
		}
		tr.userSaved <- err
	}()

	out, res, err := l.run(ctx)
	uerr := tr.waitUser()
	if tr.gone() {
		return ""
	}
	if uerr != nil {
		if errors.Is(uerr, errNotCreated) {
			return notCreatedText
		}
		return "Could not save your message."
	}
	switch out {
	case outFinal:
		if tr.wantsTitle() {
			tr.title(firstUserMessage(hist, t.req.Message), t.req.Message, res.Content)
		}
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

// saveEarly stores the user message (with the history's repairs) of a turn
// that ends before its LLM call, so that the session keeps what the user
// sent. Nothing is stored when the session is gone or another turn took it
// over.
func (tr *turnRun) saveEarly(msgs []store.Message) {
	if c := context.Cause(tr.ctx); errors.Is(c, errSessionGone) || errors.Is(c, errLeaseLost) {
		return
	}
	if err := tr.persist(msgs); err != nil && !tr.gone() {
		tr.t.r.log.ErrorContext(tr.ctx, "save user message", "session", tr.t.req.Key.ThreadID, "err", err)
	}
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
	case errors.Is(cause, errNotCreated):
		return notCreatedText
	case errors.Is(cause, errTurnTimeout), errors.Is(cause, context.DeadlineExceeded):
		return fmt.Sprintf("The turn took longer than the %s limit and was stopped.", tr.t.r.o.TurnTimeout)
	}
	// The caller went away (client disconnect).
	tr.stats.AbortedTurns = 1
	return ""
}

// kickUser lets the append of the user message start.
func (tr *turnRun) kickUser() { tr.kickOnce.Do(func() { close(tr.userKick) }) }

// waitUser waits for the append of the user message once.
func (tr *turnRun) waitUser() error {
	if tr.userSaved == nil || tr.userDone {
		return tr.userErr
	}
	tr.kickUser()
	tr.userErr = <-tr.userSaved
	tr.userDone = true
	return tr.userErr
}

// saveFailedText is the error a turn reports when a step of the
// conversation could not be stored.
const saveFailedText = "Could not save the conversation."

// persistCtx bounds a store write that must happen even when the turn's
// context ended (client gone, abort, deadline).
func (tr *turnRun) persistCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(tr.base), persistTimeout)
}

// persist appends msgs with a context that outlives the turn's, so that a
// completed step is stored even when the client leaves, and counts them.
func (tr *turnRun) persist(msgs []store.Message) error {
	if err := tr.t.createErr(); err != nil {
		return &userError{msg: notCreatedText, err: err}
	}
	ctx, cancel := tr.persistCtx()
	defer cancel()
	if _, err := tr.t.r.o.Store.AppendMessages(ctx, tr.t.req.Key, msgs); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			// Deleted before the watcher noticed: stop the turn quietly.
			tr.cancel(errSessionGone)
		}
		return &userError{msg: saveFailedText, err: fmt.Errorf("append messages to session %s: %w", tr.t.req.Key.ThreadID, err)}
	}
	// Only the turn's goroutine and the user-message goroutine (which
	// finishes before any other append) get here.
	tr.stats.Messages += int64(len(msgs))
	if at := msgs[len(msgs)-1].CreatedAt; at.After(tr.stats.LastMessageAt) {
		tr.stats.LastMessageAt = at
	}
	return nil
}

func (tr *turnRun) saveAssistant(id string, res *llm.Result, interrupted bool) error {
	if err := tr.waitUser(); err != nil {
		return err
	}
	m := store.Message{ID: id, Role: store.RoleAssistant, Content: res.Content, CreatedAt: tr.t.r.o.Now().UTC()}
	meta := map[string]any{}
	if interrupted {
		meta["interrupted"] = true
	} else {
		m.ToolCalls = toStoreCalls(res.ToolCalls)
	}
	if res.Reasoning != "" {
		meta["reasoning"] = res.Reasoning
	}
	if res.FinishReason == string(openai.FinishReasonLength) {
		meta["finish_reason"] = res.FinishReason
	}
	if tr.t.mode != "" {
		meta[store.MetadataCopilotMode] = tr.t.mode
	}
	if len(meta) > 0 {
		m.Metadata = meta
	}
	if !interrupted && len(res.ToolCalls) == 0 && !tr.wantsTitle() {
		// The final answer: finish stores it (unless a title is made
		// first, an LLM call that the answer is not kept waiting for).
		tr.final = &m
		return nil
	}
	return tr.persist([]store.Message{m})
}

func (tr *turnRun) saveTools(results []toolResult) error {
	if err := tr.waitUser(); err != nil {
		return err
	}
	now := tr.t.r.o.Now().UTC()
	msgs := make([]store.Message, len(results))
	for i, r := range results {
		msgs[i] = store.Message{
			ID: tr.t.r.o.NewID(), Role: store.RoleTool, Content: r.output,
			Name: r.call.Function.Name, ToolCallID: r.call.ID, CreatedAt: now,
		}
		if r.failed {
			msgs[i].Metadata = map[string]any{"error": true}
		}
	}
	return tr.persist(msgs)
}

// finish writes the turn's statistics once, with the final answer when it
// waits in tr.final, and releases the lease (store.FinishTurn), with a
// context that outlives the turn's, and returns the error text to report:
// errMsg, or a failure to store the final answer. A deleted session gets
// no statistics.
func (tr *turnRun) finish(errMsg string) string {
	t, log := tr.t, tr.t.r.log
	tr.waitUser()
	if l := tr.l; l != nil {
		l.mu.Lock()
		tr.stats.LLMCalls = l.llmCalls
		tr.stats.InputTokens = int64(l.usage.PromptTokens)
		tr.stats.OutputTokens = int64(l.usage.CompletionTokens)
		if len(l.toolCalls) > 0 {
			tr.stats.ToolCalls = l.toolCalls
		}
		l.mu.Unlock()
	}
	ctx, cancel := tr.persistCtx()
	defer cancel()
	// Before the done event: a client that saw it may start another turn.
	defer t.slot.release(ctx)
	if err := t.createErr(); err != nil {
		// Nothing of the turn exists to finish.
		log.ErrorContext(ctx, "create session", "session", t.req.Key.ThreadID, "err", err)
		return notCreatedText
	}
	deleted := func() {
		log.InfoContext(ctx, "session deleted during the turn; statistics not written", "session", t.req.Key.ThreadID)
	}
	if tr.gone() {
		deleted()
		t.release(ctx)
		return errMsg
	}
	var msgs []store.Message
	if m := tr.final; m != nil {
		msgs = []store.Message{*m}
	}
	stats := tr.stats
	if errMsg != "" {
		stats.Errors = 1
	}
	out, err := store.FinishTurn(ctx, t.r.o.Store, t.req.Key, t.owner, msgs, stats)
	switch {
	case errors.Is(err, store.ErrNotFound):
		deleted()
	case err != nil:
		log.ErrorContext(ctx, "finish turn", "session", t.req.Key.ThreadID, "err", err)
		if len(msgs) > 0 && out == nil && errMsg == "" {
			errMsg = saveFailedText
		}
	}
	return errMsg
}

// watch polls the abort flag (and reads it at once when the store notifies
// an abort, see store.AbortNotifier) and renews the lease until ctx ends;
// an abort, a lost lease or a deleted session (store.ErrNotFound) cancels
// the turn.
// notified receives the store's notifications of an abort of the session
// (nil: the store sends none).
func (t *Turn) watch(ctx context.Context, cancel context.CancelCauseFunc, notified <-chan struct{}) {
	o, log := t.r.o, t.r.log
	poll := time.NewTicker(o.AbortPoll)
	defer poll.Stop()
	renew := time.NewTicker(max(o.LeaseTTL/3, time.Millisecond))
	defer renew.Stop()
	gone := func() {
		log.InfoContext(ctx, "session deleted during the turn; stopping it", "session", t.req.Key.ThreadID)
		cancel(errSessionGone)
	}
	// checkAbort reads the flag; it reports whether the turn was stopped.
	checkAbort := func() bool {
		aborted, err := o.Store.AbortRequested(ctx, t.req.Key)
		switch {
		case errors.Is(err, store.ErrNotFound):
			gone()
			return true
		case err != nil:
			if ctx.Err() == nil {
				log.WarnContext(ctx, "read abort flag", "session", t.req.Key.ThreadID, "err", err)
			}
		case aborted:
			cancel(errAborted)
			return true
		}
		return false
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-notified:
			poll.Reset(o.AbortPoll)
			if checkAbort() {
				return
			}
		case <-poll.C:
			if checkAbort() {
				return
			}
		case <-renew.C:
			err := o.Store.RenewLease(ctx, t.req.Key, t.owner, o.LeaseTTL)
			switch {
			case errors.Is(err, store.ErrNotFound):
				gone()
				return
			case errors.Is(err, store.ErrLeaseLost):
				log.WarnContext(ctx, "session lease lost", "session", t.req.Key.ThreadID)
				cancel(errLeaseLost)
				return
			case err != nil && ctx.Err() == nil:
				log.WarnContext(ctx, "renew session lease", "session", t.req.Key.ThreadID, "err", err)
			}
		}
	}
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

package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"agentchat/internal/llm"
	"agentchat/internal/store"

	openai "github.com/sashabaranov/go-openai"
)

// A turn's persistence: turnRun is the loop's recorder (each step's
// messages appended as it completes: its tool messages beside the next
// LLM call, a reading step's call beside its tools), the user message is
// appended beside the first LLM call, and finish ends the turn with
// store.FinishTurn (the final answer, the statistics and the release of
// the lease).

var _ recorder = (*turnRun)(nil)

// errUserNotSent ends a turn whose user message could not be stored.
var errUserNotSent = errors.New("user message not saved")

// errStepNotSaved ends a turn whose messages of a step, stored beside
// what followed them, could not be stored.
var errStepNotSaved = errors.New("step not saved")

// appendUser starts the append of the user message (with the history's
// repairs, msgs) beside the first LLM call: once the turn emits its first
// event or makes its first store write (kickUser), or after
// userAppendDelay. Its failure stops the turn; waitUser returns it.
func (tr *turnRun) appendUser(msgs []store.Message) {
	tr.userSaved = make(chan error, 1)
	go func() {
		timer := time.NewTimer(userAppendDelay)
		select {
		case <-tr.userKick:
		case <-timer.C:
		case <-tr.ctx.Done():
		}
		timer.Stop()
		err := tr.persistUser(msgs)
		switch {
		case errors.Is(err, errNotCreated):
			tr.cancel(errNotCreated)
		case err != nil:
			tr.cancel(errUserNotSent)
		}
		tr.userSaved <- err
	}()
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

// waitSaved waits for the appends that run beside what follows them: the
// user message's, then the last one saveBeside started; it returns the
// first failure.
func (tr *turnRun) waitSaved() error {
	if err := tr.waitUser(); err != nil {
		return err
	}
	if tr.stepSaved != nil {
		if err := <-tr.stepSaved; err != nil && tr.stepErr == nil {
			tr.stepErr = err
		}
		tr.stepSaved = nil
	}
	return tr.stepErr
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
	if len(msgs) == 0 {
		return nil
	}
	if err := tr.t.createErr(); err != nil {
		return &userError{msg: notCreatedText, err: err}
	}
	tr.t.tag(msgs)
	ctx, cancel := tr.persistCtx()
	defer cancel()
	if _, err := tr.t.r.o.Store.AppendMessages(ctx, tr.t.req.Key, msgs); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			// Deleted before the watcher noticed: stop the turn quietly.
			tr.cancel(errSessionGone)
		}
		return &userError{msg: saveFailedText, err: fmt.Errorf("append messages to session %s: %w", tr.t.req.Key.ThreadID, err)}
	}
	tr.count(msgs)
	return nil
}

// count adds msgs, stored, to the turn's statistics. Only the turn's
// goroutine and the goroutines of the appends beside an LLM call (each
// finishes before any other append starts, see waitSaved) call it.
func (tr *turnRun) count(msgs []store.Message) {
	tr.stats.Messages += int64(len(msgs))
	if at := msgs[len(msgs)-1].CreatedAt; at.After(tr.stats.LastMessageAt) {
		tr.stats.LastMessageAt = at
	}
}

// persistUser stores the user message (msgs: with the history's repairs)
// as persist does, unless the creation of the session stored it already
// (Turn.seed): it is then only counted, once that write returned.
func (tr *turnRun) persistUser(msgs []store.Message) error {
	t := tr.t
	if t.pending != nil && t.seed != nil && len(msgs) == 1 && msgs[0].ID == t.seed.ID {
		if err := t.createErr(); err != nil {
			return &userError{msg: notCreatedText, err: err}
		}
		if t.pending.seeded {
			tr.count(msgs)
			return nil
		}
	}
	return tr.persist(msgs)
}

// assistant implements recorder: the final answer waits for finish
// (unless a title is made first, an LLM call that the answer is not kept
// waiting for), the others are appended at once.
func (tr *turnRun) assistant(id string, res *llm.Result, interrupted bool) error {
	if err := tr.waitSaved(); err != nil {
		return err
	}
	m := tr.assistantMessage(id, res, interrupted)
	if !interrupted && len(res.ToolCalls) == 0 && !tr.wantsTitle() {
		tr.final = &m
		return nil
	}
	return tr.persist([]store.Message{m})
}

// readingStep implements recorder: the assistant message of a step whose
// calls only read is appended beside the run of its tools (see
// saveBeside).
func (tr *turnRun) readingStep(id string, res *llm.Result) error {
	return tr.saveBeside([]store.Message{tr.assistantMessage(id, res, false)})
}

// assistantMessage is the stored message of an LLM step: its text, its
// tool calls (none when interrupted: the stream failed after the text was
// shown) and what the metadata says of it.
func (tr *turnRun) assistantMessage(id string, res *llm.Result, interrupted bool) store.Message {
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
	return m
}

// tools implements recorder: the step's tool messages are appended beside
// the next LLM call (see saveBeside); the step's lab changes are audited
// at once.
func (tr *turnRun) tools(results []toolResult) error {
	if err := tr.saveBeside(tr.toolMessages(results)); err != nil {
		return err
	}
	tr.audit(results)
	return nil
}

// saveBeside starts the append of msgs once the appends before it are
// done, and returns, so that what follows (the next LLM call, a step's
// reading tools) does not wait for it. A failure ends the turn
// (errStepNotSaved); the next append, a pause and the end of the turn wait
// for it (waitSaved), so the stored order is the turn's.
func (tr *turnRun) saveBeside(msgs []store.Message) error {
	if err := tr.waitSaved(); err != nil {
		return err
	}
	saved := make(chan error, 1)
	tr.stepSaved = saved
	go func() {
		err := tr.persist(msgs)
		if err != nil {
			tr.cancel(errStepNotSaved)
		}
		saved <- err
	}()
	return nil
}

// toolMessages are the tool messages of results.
func (tr *turnRun) toolMessages(results []toolResult) []store.Message {
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
	return msgs
}

// finish writes the turn's statistics once, with the final answer when it
// waits in tr.final and the generated title when there is one, and
// releases the lease (store.FinishTitledTurn), with a
// context that outlives the turn's, and returns the error text to report:
// errMsg, or a failure to store the final answer. A deleted session gets
// no statistics.
func (tr *turnRun) finish(errMsg string) string {
	t, log := tr.t, tr.t.r.log
	tr.waitSaved()
	u := tr.used
	tr.stats.LLMCalls = u.llmCalls
	tr.stats.InputTokens = int64(u.usage.PromptTokens)
	tr.stats.OutputTokens = int64(u.usage.CompletionTokens)
	tr.stats.ToolCalls = u.toolCalls
	tr.stats.CostNanos, tr.stats.UnpricedCalls = u.costNanos, u.unpriced
	ctx, cancel := tr.persistCtx()
	defer cancel()
	// The ledger beside the session's statistics, both before the done
	// event; it counts a deleted session's calls too (they were billed).
	ledgered := make(chan struct{})
	go func() {
		defer close(ledgered)
		t.r.recordUsage(ctx, store.UsageKey{UserID: t.req.Key.UserID, Model: t.llm.Client.Model(), KeyID: t.req.KeyID,
			ProjectID: t.req.Key.ProjectID, SessionID: t.req.Key.ThreadID}, u.tally)
	}()
	defer func() { <-ledgered }()
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
	t.tag(msgs)
	out, err := store.FinishTitledTurn(ctx, t.r.o.Store, t.req.Key, t.owner, msgs, stats, tr.newTitle)
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

// tag marks msgs as stored by the turn (store.MetadataTurnID), so that a
// turn that interrupts it may remove them (store.TurnRollbacks).
func (t *Turn) tag(msgs []store.Message) {
	for i := range msgs {
		m := make(map[string]any, len(msgs[i].Metadata)+1)
		for k, v := range msgs[i].Metadata {
			m[k] = v
		}
		m[store.MetadataTurnID] = t.owner
		msgs[i].Metadata = m
	}
}

// saveEarly stores the user message (with the history's repairs) of a turn
// that ends before its LLM call, so that the session keeps what the user
// sent. Nothing is stored when the session is gone or another turn took it
// over.
func (tr *turnRun) saveEarly(msgs []store.Message) {
	if c := context.Cause(tr.ctx); errors.Is(c, errSessionGone) || errors.Is(c, errLeaseLost) {
		return
	}
	if err := tr.persistUser(msgs); err != nil && !tr.gone() {
		tr.t.r.log.ErrorContext(tr.ctx, "save user message", "session", tr.t.req.Key.ThreadID, "err", err)
	}
}

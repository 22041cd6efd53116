package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"agentchat/internal/approval"
	"agentchat/internal/budget"
	"agentchat/internal/llm"
	"agentchat/internal/store"
)

// Starting a turn of the project chat: the request checked, the agent,
// the user's LLM, a turn slot and the session (opened or created with its
// lease, store.OpenTurn) obtained at once, before anything is streamed.

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
	// SlotPool and MaxTurns, both set, make the turn take one of the
	// MaxTurns turn slots of SlotPool (an API key's own max_parallel:
	// KeySlotPool) instead of one of the user's MaxTurnsPerUser.
	SlotPool string
	MaxTurns int
	// KeyID is the API key the caller presented (empty: none): the usage
	// ledger counts the turn's LLM calls under it; KeyBudget is that key's
	// budget.
	KeyID     string
	KeyBudget store.Budget
	// Approval is the approval policy asked for by the request ("off",
	// "changes", "all"; empty: the session's, else the user's LLM
	// configuration's, else off); a policy set here is recorded on the
	// session.
	Approval string
	// RejectPending declines the calls that await a decision (the
	// request's approval_decision "reject_all"), so that Message can be
	// sent; without it a session with pending calls is ErrApprovalPending.
	RejectPending bool
	// Decisions decide the session's pending calls (all of them, once
	// each): the turn runs the approved ones, answers the declined ones
	// and lets the model go on. Message is then empty; the session must
	// exist.
	Decisions []Decision
	// RollBack is the id of a turn this one interrupts whose messages are
	// removed before this one reads the history (the multitask strategy
	// "rollback"); empty: none.
	RollBack string
}

// Turn is a started turn: the session exists (a new one is being created,
// see createBeside) and its lease (and one of the user's turn slots) is
// held by this turn until Run (or Release) returns.
type Turn struct {
	r     *Runtime
	req   TurnRequest
	agent *Agent
	// llm is the user's LLM configuration for the turn; budget the
	// tightest budget that applies to it (the zero Limit: none).
	llm     llm.Resolved
	budget  budget.Limit
	session *store.Session
	// created: the session was made by StartTurn, so it has no history.
	created bool
	// pending is the creation of a new session running beside the turn's
	// first LLM call (nil once it is not: an existing session).
	pending *pendingCreate
	// opened is the session opened by store.OpenTurn (nil while pending),
	// which gives its history.
	opened *store.OpenedTurn
	// seed is the user message of a turn that creates its session beside
	// its first LLM call: stored with the session when the store can
	// (pendingCreate.seeded), else appended as on any turn.
	seed  *store.Message
	owner string
	// mode is the turn's resolved agent mode (empty without modes).
	mode    string
	started atomic.Bool
	// slot is the user's turn slot held by the turn (nil: no cap).
	slot *turnSlot
	// prep completes the agent's preparation, begun by StartTurn (see
	// Agent.Begin); stopPrep ends what it began (when the turn ends or is
	// refused).
	prep     Preparer
	stopPrep context.CancelFunc
	// ready waits for the LLM, the slot and the budget of StartTurn and
	// returns the first failure among them; create calls it first.
	ready func() error
	// policy is the turn's approval policy; awaiting are the calls that
	// awaited a decision when the turn opened the session.
	policy   approval.Policy
	awaiting []store.PendingApproval
}

// Session returns the session as it was when the turn started.
func (t *Turn) Session() *store.Session { return t.session }

// ID is the turn's id, unique among all turns (its lease owner): the
// prefix of its stream's event ids.
func (t *Turn) ID() string { return t.owner }

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
// beside the turn's first LLM call (see createBeside). The agent's own
// reads for the turn (Agent.Begin, the copilot's topology) start first,
// beside all of that; they end when the turn does, or when it is refused.
func (r *Runtime) StartTurn(ctx context.Context, req TurnRequest) (_ *Turn, err error) {
	if r.o.Store == nil {
		return nil, errors.New("agent runtime: no store configured")
	}
	switch {
	case req.Key.ProjectID == "":
		return nil, fmt.Errorf("%w: project id is empty", ErrInvalidRequest)
	case req.Key.UserID == "":
		return nil, fmt.Errorf("%w: user id is empty", ErrInvalidRequest)
	case req.Message == "" && len(req.Decisions) == 0:
		return nil, fmt.Errorf("%w: message is empty", ErrInvalidRequest)
	case len(req.Decisions) > 0 && (req.Message != "" || req.Key.ThreadID == ""):
		return nil, fmt.Errorf("%w: decisions continue an existing session, without a message", ErrInvalidRequest)
	}
	requested, err := approval.Parse(req.Approval)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	a, err := r.agentOf(req.AgentID)
	if err != nil {
		return nil, err
	}
	t := &Turn{r: r, req: req, owner: r.o.NewTurnID(), agent: a}
	// The agent's own reads for the turn (Begin) start first and run
	// beside everything below; they end with the turn, or now when it is
	// refused.
	bctx, stopBegun := context.WithCancel(context.WithoutCancel(ctx))
	t.prep, t.stopPrep = r.begin(bctx, a, TurnInfo{ProjectID: req.Key.ProjectID, UserID: req.Key.UserID}), stopBegun
	defer func() {
		if err != nil {
			stopBegun()
		}
	}()
	// The user's LLM, the user's turn slot and the session (its read and
	// its lease) do not depend on one another: they are asked for at once,
	// so that on an existing session they cost one round trip of store
	// calls. A session is only created once the first two succeeded
	// (t.ready), so that a refused turn leaves nothing behind.
	resolved := make(chan error, 1)
	resolve := func() {
		res, err := r.llmOf(ctx, req.Key.UserID)
		if err == nil && req.Mode != "" && len(a.Modes) > 0 && !a.HasMode(req.Mode) {
			err = fmt.Errorf("%w: agent %s has no mode %q", ErrInvalidRequest, a.ID, req.Mode)
		}
		t.llm = res
		resolved <- err
	}
	pool, n := r.slotsOf(req.Key.UserID, req.SlotPool, req.MaxTurns)
	waitSlot := r.startTurnSlot(ctx, pool, t.owner, n)
	waitBudget := r.startBudget(ctx, req.Key.UserID, req.KeyID, req.KeyBudget)
	if req.Key.ThreadID == "" {
		// A new session waits for both before anything else: the LLM is
		// resolved here, beside the slot, not on a third goroutine.
		resolve()
	} else {
		go resolve()
	}
	var (
		once             sync.Once
		rerr, serr, berr error
	)
	t.ready = func() error {
		once.Do(func() {
			rerr = <-resolved
			t.slot, serr = waitSlot()
			t.budget, berr = waitBudget()
		})
		return cmp.Or(rerr, serr, berr)
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
	t.policy = approval.Resolve(requested, approval.FromValue(t.session.Metadata[approval.MetadataKey]), approval.FromValue(t.llm.Approval))
	if err := t.checkPending(); err != nil {
		t.release(ctx)
		t.slot.release(ctx)
		return nil, err
	}
	return t, nil
}

// checkPending refuses a turn on a session whose calls await a decision,
// unless it decides them (Decisions, checked here) or declines them
// (RejectPending); and a turn with decisions on a session without any.
func (t *Turn) checkPending() error {
	if t.opened != nil {
		t.awaiting = t.session.PendingApprovals()
	}
	switch {
	case len(t.req.Decisions) > 0:
		return checkDecisions(t.awaiting, t.req.Decisions)
	case len(t.awaiting) > 0 && !t.req.RejectPending:
		return fmt.Errorf("%w (%d call(s))", ErrApprovalPending, len(t.awaiting))
	}
	return nil
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
	newSession := func() (*store.Session, error) {
		if err := t.ready(); err != nil {
			return nil, err
		}
		return t.newSession(), nil
	}
	if len(t.req.Decisions) > 0 {
		newSession = nil // decisions never create a session
	}
	o, err := store.OpenTurn(ctx, t.r.o.Store, t.opening(newSession))
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
		HistoryLimit: t.r.o.MaxHistory, NewSession: newSession, RollBack: t.req.RollBack,
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
	if p := approval.FromValue(t.req.Approval); p != "" {
		s.Metadata[approval.MetadataKey] = string(p)
	}
	return s
}

// errNotCreated ends a turn whose new session could not be created (see
// Turn.createBeside); nothing of the turn is stored.
var errNotCreated = errors.New("session not created")

// notCreatedText is the error a turn reports when its new session could
// not be created.
const notCreatedText = "Could not start the conversation."

// pendingCreate is the creation of a turn's new session, running beside
// the turn.
type pendingCreate struct {
	done chan struct{} // closed once the write returned
	err  error
	// seeded: the write stored the turn's user message (Turn.seed) too.
	seeded bool
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
	if len(t.req.Decisions) == 0 {
		// The user message goes with the session, in its write, when the
		// store can (one write less per new session).
		t.seed = &store.Message{ID: t.r.o.NewID(), Role: store.RoleUser, Content: t.req.Message, CreatedAt: s.CreatedAt}
		op.Seed = []store.Message{*t.seed}
		t.tag(op.Seed)
	}
	go func() {
		defer close(p.done)
		// The write outlives the request's cancellation: the turn ends
		// (and releases the lease) either way.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
		defer cancel()
		o, err := store.OpenTurn(wctx, t.r.o.Store, op)
		if err != nil {
			p.err = fmt.Errorf("%w: %w", errNotCreated, err)
			return
		}
		p.seeded = len(o.Seeded) > 0
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

// SessionStored waits until the turn's session is in the store: at once
// unless the session is being created beside the turn's first LLM call.
// It returns the failure of that creation (the turn then stores nothing).
func (t *Turn) SessionStored() error { return t.createErr() }

// Release frees the turn's lease without running it. Call it when a
// started turn will not be Run; Run releases the lease itself.
func (t *Turn) Release(ctx context.Context) error {
	if t.started.Swap(true) {
		return nil
	}
	defer t.slot.release(ctx)
	t.stopPrep()
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

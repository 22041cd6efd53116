package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"agentchat/internal/budget"
	"agentchat/internal/llm"
	"agentchat/internal/store"
	"agentchat/internal/telemetry"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"
)

// Runtime defaults applied by NewRuntime to zero Options fields.
const (
	DefaultMaxSteps    = 25
	DefaultToolTimeout = 60 * time.Second
	DefaultTurnTimeout = 10 * time.Minute
	DefaultLeaseTTL    = 60 * time.Second
	DefaultAbortPoll   = time.Second
	DefaultMaxHistory  = 200
	// DefaultToolMaxOutputBytes caps one tool output (64 KiB).
	DefaultToolMaxOutputBytes = 64 << 10
	// persistTimeout bounds each store write made after the turn's context
	// may have ended (completed steps, statistics, lease release).
	persistTimeout = 15 * time.Second
	// titleTimeout bounds the title call, which holds back the turn's done
	// event and its lease.
	titleTimeout = 15 * time.Second
)

// ErrInvalidRequest means a turn request is incomplete or inconsistent; the
// wrapped message says what is wrong.
var ErrInvalidRequest = errors.New("invalid turn request")

// Options configure a Runtime. Store, Agents and LLM are required (StartTurn
// and RunStateless report their absence as errors); the rest have defaults.
type Options struct {
	Store  store.Store
	Agents *Registry
	LLM    llm.Resolver
	// Logger receives operational logs; nil means slog.Default().
	Logger *slog.Logger
	// MaxSteps bounds the LLM calls of one turn (default 25).
	MaxSteps int
	// ToolTimeout bounds one tool run (default 60s).
	ToolTimeout time.Duration
	// ToolMaxOutputBytes caps one tool output (default
	// DefaultToolMaxOutputBytes; negative: no cap): a longer output is
	// cut at a UTF-8 boundary and ends with a note saying so, and that is
	// what is streamed, stored and sent to the model.
	ToolMaxOutputBytes int
	// TurnTimeout bounds a whole turn (default 10m). In Lambda a client
	// disconnect does not cancel the context, so this is the real bound.
	TurnTimeout time.Duration
	// LeaseTTL is the session lease duration, renewed every TTL/3 while the
	// turn runs (default 60s), so that a crashed turn frees the session.
	LeaseTTL time.Duration
	// AbortPoll is how often the abort flag is read (default 1s: one
	// read a second of an open stream; an abort requested through a store
	// that notifies, store.AbortNotifier, is read at once).
	AbortPoll time.Duration
	// MaxHistory is how many stored messages a turn loads as its history
	// (default 200): the last ones, from the first user message among
	// them, so that long sessions keep fitting the model's context.
	MaxHistory int
	// MaxTurnsPerUser caps the turns one user runs at once, project chat
	// turns and stateless runs together, on every instance (counted in
	// Store, see store.TurnSlots); one more is refused with an error
	// wrapping a *store.TurnSlotsFullError. Zero means
	// DefaultMaxTurnsPerUser; a negative value, no cap.
	MaxTurnsPerUser int
	// Now returns the current time (default time.Now).
	Now func() time.Time
	// NewID returns a new unique id for messages (default a random UUID).
	NewID func() string
	// NewTurnID returns the id of a new turn: its lease owner and the
	// prefix of its stream's event ids (default NewTurnID, a UUIDv7). The
	// ids of a session's turns must increase with time: a turn log's
	// reader takes the greatest as the latest (store.TurnLogs).
	NewTurnID func() string
	// Snapshots, when set, takes a GNS3 snapshot before the first lab
	// change of a project chat turn in the modes it applies to.
	Snapshots Snapshotter
	// Tracer, when set, adds a span per tool call (see startToolSpan);
	// TraceContent records their arguments and outputs too
	// (OTEL_GENAI_CAPTURE_CONTENT=true).
	Tracer       trace.Tracer
	TraceContent bool
	// Metrics, when set, counts turns (started, and ended by outcome) and
	// tool calls (METRICS=on).
	Metrics *telemetry.Metrics
	// Budgets, when set, refuses a turn whose user or API key has spent
	// its budget (an error wrapping a *budget.ExceededError, before any
	// LLM call), and stops a turn that spends what was left after the
	// LLM call that crossed it.
	Budgets BudgetChecker
}

// BudgetChecker tells what is left of the budgets that apply to a turn
// (package budget's Checker).
type BudgetChecker interface {
	Left(ctx context.Context, userID, keyID string, key store.Budget) (budget.Limit, error)
}

// Runtime runs agent turns: the persisted project chat (StartTurn, Run) and
// the stateless gateway path (RunStateless). It is safe for concurrent use.
type Runtime struct {
	o   Options
	log *slog.Logger
	// titleTimeout bounds the title call (titleTimeout; tests shorten it).
	titleTimeout time.Duration
	// counters are the token counters of the context windows, per model.
	counters counters
}

// NewRuntime returns a runtime with the defaults applied to o.
func NewRuntime(o Options) *Runtime {
	if o.MaxSteps <= 0 {
		o.MaxSteps = DefaultMaxSteps
	}
	if o.ToolTimeout <= 0 {
		o.ToolTimeout = DefaultToolTimeout
	}
	if o.ToolMaxOutputBytes == 0 {
		o.ToolMaxOutputBytes = DefaultToolMaxOutputBytes
	}
	if o.TurnTimeout <= 0 {
		o.TurnTimeout = DefaultTurnTimeout
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.AbortPoll <= 0 {
		o.AbortPoll = DefaultAbortPoll
	}
	if o.MaxHistory <= 0 {
		o.MaxHistory = DefaultMaxHistory
	}
	if o.MaxTurnsPerUser == 0 {
		o.MaxTurnsPerUser = DefaultMaxTurnsPerUser
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NewID == nil {
		o.NewID = uuid.NewString
	}
	if o.NewTurnID == nil {
		o.NewTurnID = NewTurnID
	}
	lg := o.Logger
	if lg == nil {
		lg = slog.Default()
	}
	return &Runtime{o: o, log: lg, titleTimeout: titleTimeout}
}

// resolve finds the agent and the user's LLM configuration; errors wrap
// ErrInvalidRequest or llm.ErrNotConfigured.
func (r *Runtime) resolve(ctx context.Context, agentID, userID string) (*Agent, llm.Resolved, error) {
	a, err := r.agentOf(agentID)
	if err != nil {
		return nil, llm.Resolved{}, err
	}
	res, err := r.llmOf(ctx, userID)
	if err != nil {
		return nil, llm.Resolved{}, err
	}
	return a, res, nil
}

// agentOf finds the agent of agentID (the registry's fallback for an
// unknown one); errors wrap ErrInvalidRequest.
func (r *Runtime) agentOf(agentID string) (*Agent, error) {
	if r.o.Agents == nil || r.o.LLM == nil {
		return nil, errors.New("agent runtime: agent registry and LLM resolver are required")
	}
	a := r.o.Agents.Resolve(agentID)
	if a == nil {
		return nil, fmt.Errorf("%w: unknown agent %q and no fallback agent", ErrInvalidRequest, agentID)
	}
	return a, nil
}

// llmOf resolves the user's LLM configuration; errors wrap
// llm.ErrNotConfigured when the user has none.
func (r *Runtime) llmOf(ctx context.Context, userID string) (llm.Resolved, error) {
	res, err := r.o.LLM.Resolve(ctx, userID)
	if err == nil && res.Client == nil {
		err = llm.ErrNotConfigured
	}
	if err != nil {
		return llm.Resolved{}, fmt.Errorf("resolve llm for user: %w", err)
	}
	return res, nil
}

// setup is an agent prepared for one turn.
type setup struct {
	system string
	tools  []Tool
	// refuse and refresh are the Preparation's (nil when unset); refresh
	// returns the whole system prompt anew.
	refuse  func(name string) string
	refresh func(ctx context.Context) (string, error)
}

// refusal is the answer to a call of name, a tool not offered: the
// Preparation's Refuse, or "" (the loop says "unknown tool").
func (s setup) refusal(name string) string {
	if s.refuse == nil {
		return ""
	}
	return s.refuse(name)
}

// refreshes reports whether the system prompt may change during the run.
func (s setup) refreshes() bool { return s.refresh != nil }

// begin starts the agent's preparation for a turn: Begin's reads start
// now; for an agent with Prepare (or neither) the whole preparation runs
// when the returned Preparer is called. A panic in Begin, or a nil
// Preparer, is the error the Preparer returns.
func (r *Runtime) begin(ctx context.Context, a *Agent, info TurnInfo) Preparer {
	if a.Begin == nil {
		return func(ctx context.Context, mode string) (Preparation, error) {
			info.Mode = mode
			return a.Prepared(ctx, info)
		}
	}
	var p Preparer
	err := r.unpanicked(ctx, a, func() (err error) {
		p, err = a.begin(ctx, info)
		return err
	})
	if err != nil {
		return func(context.Context, string) (Preparation, error) { return Preparation{}, err }
	}
	return p
}

// prepare prepares the agent for a turn whose mode is known (the
// stateless gateway): Begin and its Preparer in a row, or Prepare.
func (r *Runtime) prepare(ctx context.Context, a *Agent, info TurnInfo) (setup, error) {
	return r.finishPreparing(ctx, a, r.begin(ctx, a, info), info.Mode)
}

// finishPreparing runs p (recovering a panic) and returns the system
// prompt and the tools of the turn.
func (r *Runtime) finishPreparing(ctx context.Context, a *Agent, p Preparer, mode string) (setup, error) {
	var prep Preparation
	err := r.unpanicked(ctx, a, func() (err error) {
		prep, err = p(ctx, mode)
		return err
	})
	if err != nil {
		return setup{}, fmt.Errorf("prepare agent %s: %w", a.ID, err)
	}
	s := setup{system: systemPrompt(a.SystemPrompt, prep.Skills, prep.Prompt), tools: Tools(prep.Skills), refuse: prep.Refuse}
	if prep.Refresh != nil {
		skills := prep.Skills
		s.refresh = func(ctx context.Context) (string, error) {
			extra, err := prep.Refresh(ctx)
			if err != nil {
				return "", err
			}
			return systemPrompt(a.SystemPrompt, skills, extra), nil
		}
	}
	return s, nil
}

// unpanicked runs f, a step of a's preparation, and returns its error or,
// when it panics, the panic as an error (logged with its stack).
func (r *Runtime) unpanicked(ctx context.Context, a *Agent, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			r.log.ErrorContext(ctx, "agent prepare panicked", "agent", a.ID, "panic", v, "stack", string(debug.Stack()))
			err = fmt.Errorf("agent %s: prepare panicked: %v", a.ID, v)
		}
	}()
	return f()
}

// resolveMode returns the mode of a turn of agent a: the requested one, else
// the mode of the user's current default LLM configuration, else the
// session's recorded one, else the agent's default. An unknown recorded or
// configured mode falls back to the next.
func (a *Agent) resolveMode(requested string, session *store.Session, configured string) string {
	if len(a.Modes) == 0 {
		return ""
	}
	if requested != "" {
		return requested
	}
	// The user's default configuration comes before the session: the GNS3
	// web UI's mode switch edits that configuration and expects the open
	// session's next message to follow it.
	if a.HasMode(configured) {
		return configured
	}
	if session != nil {
		if m := session.CopilotMode(); a.HasMode(m) {
			return m
		}
	}
	return a.DefaultMode()
}

// emitter serializes the events of one run (tools emit from their own
// goroutines) and remembers whether anything was emitted.
type emitter struct {
	mu      sync.Mutex
	fn      func(Event)
	emitted bool
}

func (e *emitter) emit(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.emitted = true
	if e.fn != nil {
		e.fn(ev)
	}
}

func (e *emitter) any() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.emitted
}

// userError is an error with a sentence meant for the person chatting.
type userError struct {
	msg string
	err error
}

func (e *userError) Error() string {
	if e.err == nil {
		return e.msg
	}
	return e.msg + ": " + e.err.Error()
}

func (e *userError) Unwrap() error { return e.err }

// humanError is the text of an EventError for err: the runtime's own
// sentence, or the LLM package's secret-free message.
func humanError(err error) string {
	var ue *userError
	if errors.As(err, &ue) {
		return ue.msg
	}
	return llm.UserMessage(err)
}

// NewTurnID returns a new turn id: a UUIDv7, whose text orders turns by
// their start (to the millisecond, and by a counter within one process).
func NewTurnID() string {
	id, err := uuid.NewV7()
	if err != nil {
		// The random source failed: a random UUID is still unique, only
		// its order is lost.
		return uuid.NewString()
	}
	return id.String()
}

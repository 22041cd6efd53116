// Package store defines the persistence contract of agentchat: chat sessions
// owned by a (project, user), their append-only messages, the per-session
// turn lease and abort flag, the per-device console locks, the per-user turn
// slots, API keys, and the LLM model configurations of users and groups.
// Implementations live in subpackages (sqlite, dynamo) and must all pass the
// conformance suite in store/storetest.
package store

import (
	"context"
	"errors"
	"time"
)

// Errors returned by every Store implementation. Callers test them with
// errors.Is; implementations wrap them with context.
var (
	// ErrNotFound means the item does not exist or is not owned by the caller.
	ErrNotFound = errors.New("not found")
	// ErrExists means a session with that thread id already exists in the project.
	ErrExists = errors.New("already exists")
	// ErrLeaseHeld means another turn holds the session's lease, or
	// another owner holds the device lock (DeviceLocks).
	ErrLeaseHeld = errors.New("a turn is already running on this session")
	// ErrLeaseLost means the caller's lease expired and was taken by another turn.
	ErrLeaseLost = errors.New("turn lease lost")
	// ErrInvalidCursor means a pagination cursor could not be decoded.
	ErrInvalidCursor = errors.New("invalid cursor")
	// ErrNoDefaultRef, wrapped beside ErrNotFound by
	// LLMConfigs.DefaultLLMConfig of a user, means that the same read
	// found no default by reference either: DefaultLLMConfigRef would
	// answer ErrNotFound, so it need not be asked (one round trip less
	// on a turn that runs on the server's default).
	ErrNoDefaultRef = errors.New("no default LLM configuration by reference")
)

// DefaultTitle is the title of a session until one is generated or set.
const DefaultTitle = "New Conversation"

// Key identifies a session and its owner. Every session operation is scoped
// by the full key: a session of another user is ErrNotFound.
type Key struct {
	ProjectID string
	UserID    string
	ThreadID  string
}

// Stats are the per-session statistics kept besides the token counters.
type Stats struct {
	// ToolCalls counts tool invocations by tool name.
	ToolCalls map[string]int64 `json:"tool_calls"`
	// Errors counts turns that ended with an error.
	Errors int64 `json:"errors"`
	// AbortedTurns counts turns stopped by an abort request or a client leaving.
	AbortedTurns int64 `json:"aborted_turns"`
	// Turns counts completed or failed turns.
	Turns int64 `json:"turns"`
	// CostNanos is what the session's priced LLM calls cost, in
	// nano-dollars; UnpricedCalls counts its calls of a model without
	// prices, whose cost is unknown.
	CostNanos     int64 `json:"cost_nanos"`
	UnpricedCalls int64 `json:"unpriced_calls"`
}

// Session is one chat thread of a user in a project.
type Session struct {
	ThreadID  string
	UserID    string
	ProjectID string
	Title     string
	// TitleSetByUser is true once the user renamed the session; the title
	// generator never overwrites it then.
	TitleSetByUser bool
	MessageCount   int64
	LLMCallsCount  int64
	InputTokens    int64
	OutputTokens   int64
	TotalTokens    int64
	// LastMessageAt is the zero time until the first message is appended.
	LastMessageAt time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
	Metadata      map[string]any
	Stats         Stats
	Pinned        bool
}

// Key returns the ownership key of s.
func (s *Session) Key() Key {
	return Key{ProjectID: s.ProjectID, UserID: s.UserID, ThreadID: s.ThreadID}
}

// ToolCall is a function call requested by the assistant.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall is the name and JSON-encoded arguments of a tool call.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// ValidRole reports whether role is one of the message roles above.
func ValidRole(role string) bool {
	switch role {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

// Message is one stored message of a session. Seq is assigned by the store on
// append and is strictly increasing within a session.
type Message struct {
	Seq        int64
	ID         string
	Role       string
	Content    string
	Name       string
	ToolCallID string
	ToolCalls  []ToolCall
	Metadata   map[string]any
	CreatedAt  time.Time
}

// TurnStats is the statistics delta of one turn, applied atomically by
// AddTurnStats (counters are incremented, never overwritten).
type TurnStats struct {
	Messages      int64
	LLMCalls      int64
	InputTokens   int64
	OutputTokens  int64
	ToolCalls     map[string]int64
	Errors        int64
	AbortedTurns  int64
	Turns         int64
	CostNanos     int64
	UnpricedCalls int64
	LastMessageAt time.Time
}

// MetadataCopilotMode is the Session.Metadata key of the session's
// gns3-copilot mode (a string such as "teaching_assistant"), recorded when
// the session is created.
const MetadataCopilotMode = "copilot_mode"

// CopilotMode returns the session's gns3-copilot mode: the string value of
// Metadata[MetadataCopilotMode], or "" when it is absent or not a string.
func (s *Session) CopilotMode() string {
	m, _ := s.Metadata[MetadataCopilotMode].(string)
	return m
}

// Page asks for one page of a listing. Limit is 1..1000; Cursor is the
// opaque value returned as NextCursor by the previous page, or empty.
type Page struct {
	Limit  int
	Cursor string
	// CopilotMode, when not empty, lists only the sessions whose
	// CopilotMode() equals it (sessions without a mode never match); empty
	// lists all. A filtered page is full whenever enough matching sessions
	// remain, and its cursor continues the same filtered listing.
	CopilotMode string
}

// Sessions stores session metadata.
type Sessions interface {
	// CreateSession stores a new session; ErrExists if the project already
	// has a session with that thread id (whoever owns it); a *LimitError
	// (nothing written) when the user already has Limits.SessionsPerUser
	// sessions. Zero timestamps are set to now; an empty title becomes
	// DefaultTitle.
	CreateSession(ctx context.Context, s *Session) error
	// CreateLeasedSession stores a new session as CreateSession does, in
	// one write, with its turn lease already held by owner until now+ttl
	// and the abort flag clear, so that a turn on a new session needs no
	// separate AcquireLease. ErrExists as CreateSession; the existing
	// session and its lease are then left untouched.
	CreateLeasedSession(ctx context.Context, s *Session, owner string, ttl time.Duration) error
	// GetSession returns the session, or ErrNotFound.
	GetSession(ctx context.Context, k Key) (*Session, error)
	// ListSessions lists the user's sessions in the project: pinned first,
	// then UpdatedAt descending, then ThreadID descending, only those of
	// p.CopilotMode when it is set. NextCursor is empty on the last page.
	ListSessions(ctx context.Context, projectID, userID string, p Page) (sessions []Session, nextCursor string, err error)
	// RenameSession sets the title as the user's own and bumps UpdatedAt.
	RenameSession(ctx context.Context, k Key, title string) (*Session, error)
	// SetGeneratedTitle sets a generated title unless the user renamed the
	// session; it reports whether the title was written.
	SetGeneratedTitle(ctx context.Context, k Key, title string) (bool, error)
	// SetPinned pins or unpins the session and returns it.
	SetPinned(ctx context.Context, k Key, pinned bool) (*Session, error)
	// AddTurnStats increments the session's counters atomically and bumps
	// UpdatedAt (and LastMessageAt when set in the delta). AcquireLease
	// reconciles MessageCount with the committed messages (see Leases).
	AddTurnStats(ctx context.Context, k Key, d TurnStats) error
	// DeleteSession removes the session, its messages, turn logs
	// (TurnLogs), lease and abort flag.
	DeleteSession(ctx context.Context, k Key) error
	// DeleteProject removes every session of every user in the project,
	// and the project's audit log (AuditLog). It
	// is resumable: running it again after a cut-off run finishes the job.
	DeleteProject(ctx context.Context, projectID string) error
}

// Messages stores the append-only conversation of a session.
type Messages interface {
	// AppendMessages appends msgs atomically (all or none become visible),
	// assigns their Seq, fills empty IDs and zero CreatedAt, and returns
	// them. ErrNotFound if the session does not exist.
	AppendMessages(ctx context.Context, k Key, msgs []Message) ([]Message, error)
	// ListMessages returns the last limit committed messages in order
	// (limit <= 0 means all). ErrNotFound if the session does not exist.
	ListMessages(ctx context.Context, k Key, limit int) ([]Message, error)
}

// AbortGrace is how long a lease holder has to react to an abort request.
// A live turn polls the abort flag every few hundred milliseconds and ends,
// releasing its lease; a holder that has not done so AbortGrace after the
// request is considered dead (its instance crashed), and its lease may be
// taken by another owner before it expires.
const AbortGrace = 5 * time.Second

// Leases guard a session against concurrent turns and carry the abort flag,
// so that any instance can stop a turn running on another.
//
// The abort flag also frees the lease of a crashed turn: RequestAbort
// records when the abort was first requested, and once AbortGrace has
// passed since then, AcquireLease by another owner succeeds even though
// the lease has not expired.
type Leases interface {
	// AcquireLease takes the session's turn lease for owner until now+ttl
	// and clears the abort flag (and its request time). It succeeds when
	// the lease is free, expired or already owner's, or when an abort was
	// requested more than AbortGrace ago (the holder is then considered
	// dead and loses the lease: its RenewLease returns ErrLeaseLost).
	// ErrLeaseHeld otherwise, when another owner holds an unexpired lease
	// (a *LeaseHeldError, which tells until when); ErrNotFound when the
	// session does not exist.
	//
	// Taking the lease also sets the session's MessageCount to the number
	// of its committed messages, in the same write: the messages of a
	// turn cut before its AddTurnStats (its process killed) are counted
	// by the next holder. The cut turn's other counters stay unwritten (a
	// cut turn is counted at most once); a turn writes its statistics
	// before it releases its lease, so after a whole turn nothing changes.
	AcquireLease(ctx context.Context, k Key, owner string, ttl time.Duration) error
	// RenewLease extends the owner's lease; ErrLeaseLost when it is gone.
	RenewLease(ctx context.Context, k Key, owner string, ttl time.Duration) error
	// ReleaseLease frees the owner's lease; releasing a lease that is not
	// held by owner is a no-op.
	ReleaseLease(ctx context.Context, k Key, owner string) error
	// RequestAbort sets the session's abort flag and, unless the flag was
	// already set, records now as the time of the request (a repeated
	// request does not postpone the AbortGrace deadline). ErrNotFound when
	// the session does not exist.
	RequestAbort(ctx context.Context, k Key) error
	// AbortRequested reports whether the abort flag is set.
	AbortRequested(ctx context.Context, k Key) (bool, error)
}

// DeviceLocks are per-device leases that keep two turns, on any instance,
// from typing into one device console at once. A lock is named by the
// project and the node id of the device; it needs no session, and it is
// independent of the session turn leases (Leases). A lock is held by an
// owner (an opaque non-empty string chosen by the caller, unique per
// holder) until its expiry; an expired lock is free.
type DeviceLocks interface {
	// AcquireDeviceLock takes the lock of (projectID, nodeID) for owner
	// until now+ttl. It succeeds when the lock is free, expired or
	// already owner's (it is then renewed: its expiry becomes now+ttl).
	// When another owner holds an unexpired lock it returns an error
	// wrapping ErrLeaseHeld and leaves the lock alone. Of concurrent
	// acquisitions of a free lock by different owners exactly one
	// succeeds. An empty projectID, nodeID or owner, or a ttl that is not
	// positive, is an error (not ErrLeaseHeld) and changes nothing.
	AcquireDeviceLock(ctx context.Context, projectID, nodeID, owner string, ttl time.Duration) error
	// ReleaseDeviceLock frees the lock of (projectID, nodeID) if owner
	// holds it (expired or not). Releasing a lock that is not held by
	// owner, or that does not exist, is a no-op and returns nil.
	ReleaseDeviceLock(ctx context.Context, projectID, nodeID, owner string) error
}

// APIKey is a long-lived credential of a user. Only the hash of the secret
// is stored.
type APIKey struct {
	ID        string
	UserID    string
	Name      string
	Hash      string // hex SHA-256 of the secret
	Prefix    string // the first characters of the secret, for display
	CreatedAt time.Time
	ExpiresAt time.Time // zero: never
	RevokedAt time.Time // zero: active
	LastUsed  time.Time
	// Limits are the key's own limits (see ratelimits.go).
	Limits KeyLimits
}

// APIKeys stores API keys.
type APIKeys interface {
	// CreateAPIKey stores a new key; a *LimitError (nothing written) when
	// the user already has Limits.APIKeysPerUser active keys.
	CreateAPIKey(ctx context.Context, k *APIKey) error
	// ListAPIKeys lists a user's keys, newest first (revoked ones included).
	ListAPIKeys(ctx context.Context, userID string) ([]APIKey, error)
	// RevokeAPIKey marks the user's key revoked; ErrNotFound otherwise.
	RevokeAPIKey(ctx context.Context, userID, keyID string) error
	// APIKeyByHash returns the key with that hash, or ErrNotFound.
	APIKeyByHash(ctx context.Context, hash string) (*APIKey, error)
	// TouchAPIKey records that the user's key was used at t (LastUsed only moves forward); ErrNotFound when no such key.
	// ListAPIKeys shows the result; the LastUsed of APIKeyByHash may lag.
	TouchAPIKey(ctx context.Context, userID, keyID string, t time.Time) error
}

// Store is everything agentchat persists.
type Store interface {
	Sessions
	Messages
	Leases
	DeviceLocks
	TurnSlots
	APIKeys
	LLMConfigs
	APIKeyLimits
	RateCounters
	SessionMetadata
	AuditLog
	UsageLedger
	UserBudgets
	TurnLogs
	TurnRollbacks
	// Close releases the store's resources.
	Close() error
}

package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Audit statuses: how a lab-changing tool call ended.
const (
	AuditSuccess  = "success"  // the tool ran and every item succeeded
	AuditFailed   = "failed"   // the tool ran and failed, or some items did
	AuditDeclined = "declined" // the user declined it: it did not run
	AuditRefused  = "refused"  // the runtime refused it (mode, /v1 approval): it did not run
)

// Approval decisions recorded on an audit entry.
const (
	DecisionNotRequired = "not_required" // the policy asked for no approval
	DecisionApproved    = "approved"
	DecisionDeclined    = "declined"
)

// AuditEntry is one lab-changing tool call made through the copilot. It
// holds no secret: the arguments are the model's, never a token.
type AuditEntry struct {
	// ID is unique; AppendAudit fills an empty one.
	ID        string
	ProjectID string
	UserID    string
	ThreadID  string
	TurnID    string
	// Time is when the call ended; AppendAudit fills a zero one.
	Time time.Time
	// Tool is the tool's name, Arguments the model's JSON arguments and
	// Summary their one-line description.
	Tool      string
	Arguments string
	Summary   string
	// Status is one of AuditSuccess, AuditFailed, AuditDeclined,
	// AuditRefused.
	Status string
	// Decision is one of DecisionNotRequired, DecisionApproved,
	// DecisionDeclined; DecidedBy the user who decided (empty when none
	// was asked).
	Decision  string
	DecidedBy string
	// SnapshotID is the GNS3 snapshot taken before the turn's first
	// change, empty when none was.
	SnapshotID string
}

// AuditLog is the append-only trail of lab changes of each project.
// DeleteProject removes a project's entries with its sessions.
type AuditLog interface {
	// AppendAudit stores e (ProjectID and UserID required), filling an
	// empty ID and a zero Time; an entry is never changed afterwards.
	AppendAudit(ctx context.Context, e *AuditEntry) error
	// ListAudit lists the project's entries, newest first (then by ID
	// descending): only userID's when userID is not empty, every user's
	// otherwise. p.Limit is 1..1000; NextCursor is empty on the last page;
	// a cursor that does not decode is ErrInvalidCursor.
	ListAudit(ctx context.Context, projectID, userID string, p Page) (entries []AuditEntry, nextCursor string, err error)
}

// auditTimeLayout is fixed width, so that sort keys sort as times.
const auditTimeLayout = "2006-01-02T15:04:05.000000000Z"

// PrepareAudit checks e before a store writes it (ProjectID, UserID and
// Tool are required) and fills an empty ID with newID() and a zero Time
// with now (UTC, no monotonic reading).
func PrepareAudit(e *AuditEntry, now time.Time, newID func() string) error {
	if e.ProjectID == "" || e.UserID == "" || e.Tool == "" {
		return errors.New("audit entry: project, user and tool are required")
	}
	if e.ID == "" {
		e.ID = newID()
	}
	if e.Time.IsZero() {
		e.Time = now
	}
	e.Time = e.Time.UTC().Round(0)
	if y := e.Time.Year(); y < 1 || y > 9999 {
		return fmt.Errorf("audit entry: time %v out of range", e.Time)
	}
	return nil
}

// AuditSortKey is the key entries sort by, newest last: the fixed-width
// UTC time, "#", the id (the DynamoDB sort key of DESIGN.md).
func AuditSortKey(e *AuditEntry) string {
	return e.Time.UTC().Format(auditTimeLayout) + "#" + e.ID
}

// EncodeAuditCursor is the cursor of a page ending at the entry with that
// sort key.
func EncodeAuditCursor(sortKey string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(sortKey))
}

// DecodeAuditCursor returns the sort key of a cursor; ErrInvalidCursor
// when it is not one EncodeAuditCursor made.
func DecodeAuditCursor(c string) (string, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err != nil {
		return "", fmt.Errorf("%w: not base64url", ErrInvalidCursor)
	}
	sk := string(b)
	ts, id, ok := strings.Cut(sk, "#")
	if !ok || id == "" || !utf8.ValidString(id) {
		return "", fmt.Errorf("%w: malformed", ErrInvalidCursor)
	}
	if _, err := time.Parse(auditTimeLayout, ts); err != nil || len(ts) != len(auditTimeLayout) {
		return "", fmt.Errorf("%w: bad timestamp", ErrInvalidCursor)
	}
	return sk, nil
}

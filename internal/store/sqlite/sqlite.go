// Package sqlite is the embedded store.Store of agentchat: one SQLite file
// (modernc.org/sqlite, no cgo) in WAL mode, used by the local server.
//
// Writes go through a single connection that opens every transaction with
// BEGIN IMMEDIATE, so concurrent requests of one process queue in Go instead
// of failing with SQLITE_BUSY, and other processes on the same file wait on
// busy_timeout. Reads use a separate pool of query-only connections and see
// a consistent WAL snapshot per transaction.
//
// Sessions carry msg_seq, the sequence number of their last committed
// message (the commit marker of the design); readers never return messages
// past it. In SQLite the marker and the messages are written in one
// transaction, so a half-written append is never visible.
//
// The hot statements are prepared once in Open (see statements.go), so
// SQLite compiles each of them once per connection instead of per call.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"agentchat/internal/store"
)

// busyTimeout is how long a connection waits for another process's lock.
const busyTimeout = 10 * time.Second

// Store is the SQLite implementation of store.Store. It is safe for
// concurrent use.
type Store struct {
	w  *sql.DB // the single writer connection
	r  *sql.DB // query-only reader connections
	ws writeStmts
	rs readStmts
	// defaultLLMConfig and the statements below are prepared at their
	// first use (see lazyStmt): each runs on every turn, where parsing it
	// cost more than running it. addUsage is prepared on the writer.
	defaultLLMConfig    *lazyStmt
	defaultLLMConfigRef *lazyStmt
	userBudget          *lazyStmt
	addUsage            *lazyStmt
	// ledger commits the usage ledger's adds in groups (groupwriter.go),
	// turnLogWriter the turn logs' batches.
	ledger        *groupWriter[usageAdd]
	turnLogWriter *groupWriter[turnAppend]
	// configs caches the owners' default LLM configurations.
	configs readCache[configOwnerKey, cachedConfig]
	// budgets caches the users' budgets, read on every turn.
	budgets readCache[string, store.Budget]
	// sessionCounts caches the users' numbers of sessions for
	// CheckSessionRoom (see there).
	sessionCounts readCache[string, int64]
	// checkpoints copies the WAL into the database file in the
	// background (checkpoint.go).
	checkpoints *checkpointer
	// history caches the ends of the sessions' histories (OpenTurn).
	history historyCache
	// slots are the users' turn slots, in memory (see turnSlots).
	slots turnSlots
	// limits cap what one owner may hold (WithLimits).
	limits store.Limits
	now    func() time.Time
	// turnLogsPurged is when (unix nanoseconds, store clock) expired
	// turn log rows were last purged (see purgeTurnLogs).
	turnLogsPurged atomic.Int64
	// traced opens the databases through the tracing driver wrapper
	// (WithTracing).
	traced bool
}

var _ store.Store = (*Store)(nil)

// Option configures Open.
type Option func(*Store)

// WithClock makes the store read the current time from now instead of
// time.Now: timestamps, lease expiry and the abort grace all follow it.
// It exists for tests, which move time forward instead of sleeping; a nil
// now keeps time.Now.
func WithClock(now func() time.Time) Option {
	return func(s *Store) {
		if now != nil {
			s.now = now
		}
	}
}

// Open opens (creating if needed) the SQLite database file at path and
// applies migrations idempotently.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	if path == "" {
		return nil, errors.New("open sqlite store: empty path")
	}
	// The driver reads parameters after the first '?', and a DSN without
	// the "file:" prefix is a plain file name (no URI %-decoding).
	if strings.Contains(path, "?") || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("open sqlite store %q: path must not contain '?' or start with \"file:\"", path)
	}
	params := url.Values{}
	params.Set("_busy_timeout", fmt.Sprint(busyTimeout.Milliseconds()))
	params.Set("_foreign_keys", "1")
	params.Set("_synchronous", "NORMAL")
	// dsn is the file's DSN with params and, over them, the key/value
	// pairs of kv: each connection pool's own.
	dsn := func(kv ...string) string {
		p := maps.Clone(params)
		for i := 0; i+1 < len(kv); i += 2 {
			p.Set(kv[i], kv[i+1])
		}
		return path + "?" + p.Encode()
	}
	s := &Store{now: time.Now}
	for _, o := range opts {
		o(s)
	}
	w, err := openDB(dsn("_journal_mode", "WAL", "_txlock", "immediate"), s.traced)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := w.PingContext(ctx); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}

	s.w = w
	// The caller's effective LLM configuration is read on every turn:
	// parsing its join cost more than running it.
	s.defaultLLMConfigRef = &lazyStmt{name: "default llm config ref", query: defaultLLMConfigRefQuery}
	s.userBudget = &lazyStmt{name: "user budget", query: userBudgetQuery}
	s.addUsage = &lazyStmt{name: "add usage", query: addUsageQuery}
	s.defaultLLMConfig = &lazyStmt{name: "default llm config", query: llmConfigSelect + `
WHERE d.owner_kind = ? AND d.owner_id = ?`}
	if err := s.migrate(ctx); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}

	r, err := openDB(dsn("_query_only", "1"), s.traced)
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	if err := r.PingContext(ctx); err != nil {
		_ = w.Close()
		_ = r.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	s.r = r
	if err := prepareAll(ctx, w, s.ws.defs()); err != nil {
		_ = w.Close()
		_ = r.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	if err := prepareAll(ctx, r, s.rs.defs()); err != nil {
		_ = closeAll(s.ws.defs())
		_ = w.Close()
		_ = r.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	ck, err := openDB(dsn("_journal_mode", "WAL"), false)
	if err != nil {
		_ = closeAll(s.rs.defs())
		_ = closeAll(s.ws.defs())
		_ = w.Close()
		_ = r.Close()
		return nil, fmt.Errorf("open sqlite store %s: checkpoints: %w", path, err)
	}
	ck.SetMaxOpenConns(1)
	ck.SetMaxIdleConns(1)
	s.checkpoints = startCheckpointer(ck)
	s.ledger = startGroupWriter(s.commitUsage, groupLinger)
	s.turnLogWriter = startGroupWriter(s.commitTurnAppends, groupLinger)
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	s.ledger.close()
	s.turnLogWriter.close()
	return errors.Join(s.checkpoints.close(), s.defaultLLMConfig.close(), s.defaultLLMConfigRef.close(), s.userBudget.close(), s.addUsage.close(), closeAll(s.rs.defs()), closeAll(s.ws.defs()), s.r.Close(), s.w.Close())
}

// write runs fn in a write transaction (BEGIN IMMEDIATE on the writer).
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin write: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	s.checkpoints.committed()
	return nil
}

// read runs fn in a read transaction: one consistent snapshot.
func (s *Store) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	return fn(tx)
}

// timeLayout is fixed width, so stored timestamps sort as text.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// encTime formats t as fixed-width UTC text; the zero time is "".
func encTime(t time.Time) (string, error) {
	if t.IsZero() {
		return "", nil
	}
	u := t.UTC()
	if y := u.Year(); y < 1 || y > 9999 {
		return "", fmt.Errorf("time %v out of range (years 1..9999)", t)
	}
	return u.Format(timeLayout), nil
}

// decTime parses a value written by encTime.
func decTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t.UTC(), nil
}

// nowText is the current time as stored text.
func (s *Store) nowText() string {
	return s.now().UTC().Format(timeLayout)
}

// oneRow is the outcome of an exec that must change one row: its error, or
// none when it changed nothing.
func oneRow(res sql.Result, err, none error) error {
	if err != nil {
		return err
	}
	n, err := rowsAffected(res)
	if err == nil && n == 0 {
		return none
	}
	return err
}

// rowsAffected returns how many rows res changed.
func rowsAffected(res sql.Result) (int64, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("rows affected: %w", err)
	}
	return n, nil
}

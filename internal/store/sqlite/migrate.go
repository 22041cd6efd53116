package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are applied in order; migration i brings the schema to
// version i+1. Never edit a released migration: append a new one.
var migrations = []string{
	// 1: sessions with their commit marker, lease and abort flag; messages;
	// API keys.
	`
CREATE TABLE sessions (
	project_id        TEXT    NOT NULL,
	thread_id         TEXT    NOT NULL,
	user_id           TEXT    NOT NULL,
	title             TEXT    NOT NULL,
	title_set_by_user INTEGER NOT NULL DEFAULT 0,
	pinned            INTEGER NOT NULL DEFAULT 0,
	message_count     INTEGER NOT NULL DEFAULT 0,
	llm_calls         INTEGER NOT NULL DEFAULT 0,
	input_tokens      INTEGER NOT NULL DEFAULT 0,
	output_tokens     INTEGER NOT NULL DEFAULT 0,
	total_tokens      INTEGER NOT NULL DEFAULT 0,
	errors            INTEGER NOT NULL DEFAULT 0,
	aborted_turns     INTEGER NOT NULL DEFAULT 0,
	turns             INTEGER NOT NULL DEFAULT 0,
	tool_calls        TEXT    NOT NULL DEFAULT '',
	metadata          TEXT    NOT NULL DEFAULT '',
	last_message_at   TEXT    NOT NULL DEFAULT '',
	created_at        TEXT    NOT NULL,
	updated_at        TEXT    NOT NULL,
	msg_seq           INTEGER NOT NULL DEFAULT 0,
	lease_owner       TEXT    NOT NULL DEFAULT '',
	lease_until       TEXT    NOT NULL DEFAULT '',
	abort_requested   INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (project_id, thread_id)
) WITHOUT ROWID;

CREATE INDEX sessions_by_user ON sessions (project_id, user_id, pinned, updated_at, thread_id);

CREATE TABLE messages (
	project_id   TEXT    NOT NULL,
	thread_id    TEXT    NOT NULL,
	seq          INTEGER NOT NULL,
	id           TEXT    NOT NULL,
	role         TEXT    NOT NULL,
	content      TEXT    NOT NULL,
	name         TEXT    NOT NULL DEFAULT '',
	tool_call_id TEXT    NOT NULL DEFAULT '',
	tool_calls   TEXT    NOT NULL DEFAULT '',
	metadata     TEXT    NOT NULL DEFAULT '',
	created_at   TEXT    NOT NULL,
	PRIMARY KEY (project_id, thread_id, seq),
	FOREIGN KEY (project_id, thread_id) REFERENCES sessions (project_id, thread_id) ON DELETE CASCADE
) WITHOUT ROWID;

CREATE TABLE api_keys (
	id         TEXT NOT NULL PRIMARY KEY,
	user_id    TEXT NOT NULL,
	name       TEXT NOT NULL,
	hash       TEXT NOT NULL UNIQUE,
	prefix     TEXT NOT NULL,
	created_at TEXT NOT NULL,
	expires_at TEXT NOT NULL DEFAULT '',
	revoked_at TEXT NOT NULL DEFAULT '',
	last_used  TEXT NOT NULL DEFAULT ''
);

CREATE INDEX api_keys_by_user ON api_keys (user_id, created_at, id);
`,
	// 2: the time of the pending abort request (store.AbortGrace); empty
	// when none was recorded.
	`ALTER TABLE sessions ADD COLUMN abort_at TEXT NOT NULL DEFAULT ''`,
	// 3: the session's copilot mode (store.Session.CopilotMode), derived
	// from the metadata JSON: the string at $.copilot_mode, else NULL (no
	// metadata, no such key, or not a string). A virtual column is computed
	// from the row, so existing rows have it at once; the partial index
	// serves the filtered listing (copilot_mode = ? implies IS NOT NULL)
	// and builds itself from the existing rows.
	`
ALTER TABLE sessions ADD COLUMN copilot_mode TEXT GENERATED ALWAYS AS (
	CASE WHEN json_valid(metadata) THEN
		CASE json_type(metadata, '$.copilot_mode') WHEN 'text' THEN json_extract(metadata, '$.copilot_mode') END
	END
) VIRTUAL;

CREATE INDEX sessions_by_user_mode ON sessions (project_id, user_id, copilot_mode, pinned, updated_at, thread_id)
	WHERE copilot_mode IS NOT NULL;
`,
	// 4: LLM model configurations of users (owner_kind 'U') and groups
	// ('G'), and each owner's default: one row per owner, so at most one
	// default by construction. config is the JSON object without the API
	// key, which is only stored sealed (api_key_cipher).
	`
CREATE TABLE llm_configs (
	owner_kind     TEXT    NOT NULL CHECK (owner_kind IN ('U', 'G')),
	owner_id       TEXT    NOT NULL,
	config_id      TEXT    NOT NULL,
	name           TEXT    NOT NULL,
	model_type     TEXT    NOT NULL,
	config         TEXT    NOT NULL,
	api_key_cipher TEXT    NOT NULL DEFAULT '',
	api_key_hint   TEXT    NOT NULL DEFAULT '',
	version        INTEGER NOT NULL,
	created_at     TEXT    NOT NULL,
	updated_at     TEXT    NOT NULL,
	PRIMARY KEY (owner_kind, owner_id, config_id)
) WITHOUT ROWID;

CREATE INDEX llm_configs_by_owner ON llm_configs (owner_kind, owner_id, created_at, config_id);

CREATE TABLE llm_config_defaults (
	owner_kind TEXT NOT NULL,
	owner_id   TEXT NOT NULL,
	config_id  TEXT NOT NULL,
	PRIMARY KEY (owner_kind, owner_id),
	FOREIGN KEY (owner_kind, owner_id, config_id) REFERENCES llm_configs (owner_kind, owner_id, config_id) ON DELETE CASCADE
) WITHOUT ROWID;
`,
	// 5: the per-device console locks (store.DeviceLocks): at most one row
	// per device, held by owner until expires_at (fixed-width UTC text, so
	// it compares as a time). An expired row is a free lock; it is taken
	// over in place, never deleted by anyone but its owner.
	`
CREATE TABLE device_locks (
	project_id TEXT NOT NULL,
	node_id    TEXT NOT NULL,
	owner      TEXT NOT NULL,
	expires_at TEXT NOT NULL,
	PRIMARY KEY (project_id, node_id)
) WITHOUT ROWID;
`,
	// 6: a user's sessions over every project, counted by the limit of
	// sessions per user (WithLimits).
	`CREATE INDEX sessions_by_owner ON sessions (user_id, thread_id)`,
	// 7: a user's default that is a group's configuration, by reference
	// (store.LLMConfigs.SetDefaultLLMConfigRef): at most one row per user,
	// and a user has either this row or a row of llm_config_defaults,
	// never both (every write replaces the other in its transaction). The
	// row goes with the group's configuration (ON DELETE CASCADE).
	`
CREATE TABLE llm_config_default_refs (
	user_id   TEXT NOT NULL PRIMARY KEY,
	ref_kind  TEXT NOT NULL DEFAULT 'G' CHECK (ref_kind = 'G'),
	group_id  TEXT NOT NULL,
	config_id TEXT NOT NULL,
	FOREIGN KEY (ref_kind, group_id, config_id) REFERENCES llm_configs (owner_kind, owner_id, config_id) ON DELETE CASCADE
) WITHOUT ROWID;

CREATE INDEX llm_config_default_refs_by_config ON llm_config_default_refs (ref_kind, group_id, config_id);
`,
	// API keys' own limits, and the rate counters (store.RateCounters).
	`
ALTER TABLE api_keys ADD COLUMN max_parallel INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN rpm INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN tpm INTEGER NOT NULL DEFAULT 0;

CREATE TABLE rate_counters (
	name      TEXT    NOT NULL,
	win_start INTEGER NOT NULL,
	count     INTEGER NOT NULL,
	expires   INTEGER NOT NULL,
	PRIMARY KEY (name, win_start)
) WITHOUT ROWID;
`,
	// 9: the audit log of lab changes (store.AuditLog): append-only rows
	// per project, by sort key (fixed-width time and id), newest last;
	// removed with the project (DeleteProject).
	`
CREATE TABLE audit_log (
	project_id  TEXT NOT NULL,
	sk          TEXT NOT NULL,
	id          TEXT NOT NULL,
	user_id     TEXT NOT NULL,
	thread_id   TEXT NOT NULL DEFAULT '',
	turn_id     TEXT NOT NULL DEFAULT '',
	at          TEXT NOT NULL,
	tool        TEXT NOT NULL,
	arguments   TEXT NOT NULL DEFAULT '',
	summary     TEXT NOT NULL DEFAULT '',
	status      TEXT NOT NULL DEFAULT '',
	decision    TEXT NOT NULL DEFAULT '',
	decided_by  TEXT NOT NULL DEFAULT '',
	snapshot_id TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (project_id, sk)
) WITHOUT ROWID;

CREATE INDEX audit_log_by_user ON audit_log (project_id, user_id, sk);
`,
	// 10: what the LLM calls cost: each session's sum (cost in
	// nano-dollars, calls without a price), and the usage ledger, one row
	// per user, day, model, API key and session, read by user and day
	// range; it outlives the sessions it names.
	`
ALTER TABLE sessions ADD COLUMN cost_nanos INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN unpriced_calls INTEGER NOT NULL DEFAULT 0;

CREATE TABLE usage_ledger (
	user_id             TEXT    NOT NULL,
	day                 TEXT    NOT NULL,
	model               TEXT    NOT NULL,
	key_id              TEXT    NOT NULL,
	project_id          TEXT    NOT NULL,
	session_id          TEXT    NOT NULL,
	llm_calls           INTEGER NOT NULL,
	input_tokens        INTEGER NOT NULL,
	cached_input_tokens INTEGER NOT NULL,
	output_tokens       INTEGER NOT NULL,
	cost_nanos          INTEGER NOT NULL,
	unpriced_calls      INTEGER NOT NULL,
	PRIMARY KEY (user_id, day, model, key_id, project_id, session_id)
) WITHOUT ROWID;
`,
	// 11: budgets (store.Budget): an API key's, beside its limits, and a
	// user's, set by an administrator.
	`
ALTER TABLE api_keys ADD COLUMN budget_nanos INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN budget_period TEXT NOT NULL DEFAULT '';

CREATE TABLE user_budgets (
	user_id       TEXT    NOT NULL PRIMARY KEY,
	budget_nanos  INTEGER NOT NULL,
	budget_period TEXT    NOT NULL
) WITHOUT ROWID;
`,
	// 12: the event logs of recent turns (store.TurnLogs): one row per
	// batch, keyed by the number of its last event (first_seq - 1 for a
	// batch without events), data being the batch's events
	// (store.EncodeTurnEvents); expires_at (unix nanoseconds) is when the
	// row may be purged, found through its index. Rows go with their
	// session (deleteThread).
	`
CREATE TABLE turn_logs (
	project_id TEXT    NOT NULL,
	thread_id  TEXT    NOT NULL,
	turn_id    TEXT    NOT NULL,
	last_seq   INTEGER NOT NULL,
	first_seq  INTEGER NOT NULL,
	data       BLOB    NOT NULL,
	final      INTEGER NOT NULL DEFAULT 0,
	expires_at INTEGER NOT NULL,
	PRIMARY KEY (project_id, thread_id, turn_id, last_seq)
) WITHOUT ROWID;

CREATE INDEX turn_logs_by_expiry ON turn_logs (expires_at);
`,
	// 13: each user's number of sessions, kept by triggers on sessions,
	// so that the sessions limit is one row read instead of a count of up
	// to MAX_SESSIONS_PER_USER index entries on every new session.
	`
CREATE TABLE user_session_counts (
	user_id  TEXT    NOT NULL PRIMARY KEY,
	sessions INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO user_session_counts (user_id, sessions)
	SELECT user_id, COUNT(*) FROM sessions GROUP BY user_id;

CREATE TRIGGER sessions_count_insert AFTER INSERT ON sessions BEGIN
	INSERT INTO user_session_counts (user_id, sessions) VALUES (new.user_id, 1)
		ON CONFLICT (user_id) DO UPDATE SET sessions = sessions + 1;
END;

CREATE TRIGGER sessions_count_delete AFTER DELETE ON sessions BEGIN
	UPDATE user_session_counts SET sessions = sessions - 1 WHERE user_id = old.user_id;
END;

CREATE TRIGGER sessions_count_move AFTER UPDATE OF user_id ON sessions
WHEN new.user_id <> old.user_id BEGIN
	UPDATE user_session_counts SET sessions = sessions - 1 WHERE user_id = old.user_id;
	INSERT INTO user_session_counts (user_id, sessions) VALUES (new.user_id, 1)
		ON CONFLICT (user_id) DO UPDATE SET sessions = sessions + 1;
END;
`,
	// 14: the index of migration 6 served only the count that migration
	// 13 replaced; every new session wrote an entry into it.
	`DROP INDEX sessions_by_owner`,
}

// migrate brings the schema up to date. It runs in one write transaction,
// so concurrent openers of the same file apply each migration once.
func (s *Store) migrate(ctx context.Context) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER NOT NULL PRIMARY KEY,
	applied_at TEXT    NOT NULL
)`); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		var current int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if current > len(migrations) {
			return fmt.Errorf("database schema version %d is newer than this program's %d", current, len(migrations))
		}
		for v := current + 1; v <= len(migrations); v++ {
			if _, err := tx.ExecContext(ctx, migrations[v-1]); err != nil {
				return fmt.Errorf("apply migration %d: %w", v, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, v, s.nowText()); err != nil {
				return fmt.Errorf("record migration %d: %w", v, err)
			}
		}
		return nil
	})
}

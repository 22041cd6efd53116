package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"agentchat/internal/store"
	"agentchat/internal/store/storetest"
)

// secretTitle is a session title no span may carry.
const secretTitle = "sk-live-SECRET-title-4242"

// spanAttr returns the value of attribute key of s, "" when absent.
func spanAttr(s tracetest.SpanStub, key attribute.Key) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.String()
		}
	}
	return ""
}

// TestTracedStoreSpans: a store opened WithTracing makes a client span per
// statement run under the caller's span (direct queries, prepared
// statements, the BEGIN and COMMIT of a write), named "{operation}
// {table}" with the database attributes and no parameter value; a call
// made outside any span makes none; a failed statement records its result
// code.
func TestTracedStoreSpans(t *testing.T) {
	s, _ := openTemp(t, WithTracing(true))
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	now := time.Now().UTC()
	k := store.Key{ProjectID: "p1", UserID: "u1", ThreadID: "t1"}
	if err := s.CreateSession(context.Background(), &store.Session{ThreadID: "t0", UserID: "u1", ProjectID: "p1", Title: "untraced", CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("%d spans for an untraced call", n)
	}

	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	if err := s.CreateSession(ctx, &store.Session{ThreadID: k.ThreadID, UserID: k.UserID, ProjectID: k.ProjectID, Title: secretTitle, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetSession(ctx, k); err != nil || got.Title != secretTitle {
		t.Fatalf("GetSession: %v, %v", got, err)
	}
	if list, _, err := s.ListSessions(ctx, k.ProjectID, k.UserID, store.Page{Limit: 10}); err != nil || len(list) != 2 {
		t.Fatalf("ListSessions: %d, %v", len(list), err)
	}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO no_such_table (title) VALUES (?)`, secretTitle); err == nil {
		t.Fatal("insert into a missing table succeeded")
	}
	parent.End()

	byName := map[string][]tracetest.SpanStub{}
	for _, sp := range exp.GetSpans() {
		if sp.Name == "request" {
			continue
		}
		byName[sp.Name] = append(byName[sp.Name], sp)
		if sp.Parent.SpanID() != parent.SpanContext().SpanID() || sp.SpanKind != trace.SpanKindClient {
			t.Errorf("span %s: parent %s, kind %v", sp.Name, sp.Parent.SpanID(), sp.SpanKind)
		}
		if spanAttr(sp, "db.system.name") != "sqlite" || spanAttr(sp, "db.operation.name") == "" {
			t.Errorf("span %s: attributes %v", sp.Name, sp.Attributes)
		}
		for _, kv := range sp.Attributes {
			if strings.Contains(kv.Value.String(), "SECRET") {
				t.Errorf("span %s: %s records a parameter value: %q", sp.Name, kv.Key, kv.Value.String())
			}
		}
		if strings.Contains(sp.Status.Description, "SECRET") {
			t.Errorf("span %s: status %q", sp.Name, sp.Status.Description)
		}
	}
	for _, name := range []string{"BEGIN", "COMMIT", "INSERT sessions", "SELECT sessions", "INSERT no_such_table"} {
		if len(byName[name]) == 0 {
			t.Errorf("no %q span among %v", name, keys(byName))
		}
	}
	t.Logf("spans: %v", keys(byName))
	if ins := byName["INSERT sessions"]; len(ins) > 0 {
		if txt := spanAttr(ins[0], "db.query.text"); !strings.Contains(txt, "INSERT INTO sessions") || !strings.Contains(txt, "?") {
			t.Errorf("db.query.text %q", txt)
		}
		if spanAttr(ins[0], "db.collection.name") != "sessions" || spanAttr(ins[0], "db.query.summary") != "INSERT sessions" {
			t.Errorf("INSERT sessions attributes %v", ins[0].Attributes)
		}
	}
	rows := map[string]bool{}
	for _, sel := range byName["SELECT sessions"] {
		rows[spanAttr(sel, "db.response.returned_rows")] = true
	}
	if !rows["1"] || !rows["2"] {
		t.Errorf("returned rows of the session reads: %v (want the get's 1 and the list's 2)", rows)
	}
	if bad := byName["INSERT no_such_table"]; len(bad) != 1 || bad[0].Status.Code != codes.Error || spanAttr(bad[0], "error.type") != "SQLITE_ERROR" {
		t.Errorf("failed statement span: %+v", bad)
	}
}

func keys(m map[string][]tracetest.SpanStub) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestTracingOnlyWhenAsked: both databases go through the store's driver
// wrapper, which traces only with WithTracing.
func TestTracingOnlyWhenAsked(t *testing.T) {
	for _, on := range []bool{false, true} {
		s, _ := openTemp(t, WithTracing(on))
		for _, db := range []*sql.DB{s.w, s.r} {
			d, ok := db.Driver().(storeDriver)
			if !ok || d.traced != on {
				t.Errorf("tracing %v: driver %#v", on, db.Driver())
			}
		}
	}
}

// TestParseQuery: the span name of a statement, "{operation} {table}"
// (the table is db.collection.name), or the operation alone.
func TestParseQuery(t *testing.T) {
	named := func(query, name string) {
		t.Helper()
		q := parseQuery(query)
		_, table, _ := strings.Cut(name, " ")
		if q.name != name || q.table != table || q.text != query {
			t.Errorf("parseQuery(%q) = %+v, want name %q", query, q, name)
		}
	}
	named("SELECT a, b FROM sessions WHERE x = ?", "SELECT sessions")
	named("  -- comment\n select count(*) FROM (SELECT 1 FROM sessions LIMIT ?)", "SELECT")
	named("SELECT (SELECT 1 FROM other) AS n, 'FROM x' FROM \"budgets\" b JOIN t ON 1", "SELECT budgets")
	named("INSERT INTO messages\n\t(project_id) VALUES (?)", "INSERT messages")
	named("INSERT OR IGNORE INTO usage (k) VALUES (?) ON CONFLICT DO UPDATE SET n = n + ?", "INSERT usage")
	named("UPDATE sessions SET msg_seq = ?", "UPDATE sessions")
	named("UPDATE OR REPLACE main.sessions SET a = ?", "UPDATE main.sessions")
	named("DELETE FROM /* all */ leases WHERE k = ?", "DELETE leases")
	named("WITH x AS (SELECT 1) SELECT * FROM x", "WITH")
	named("PRAGMA user_version", "PRAGMA")
	named("", "sqlite")
}

// TestConformanceThroughTheTracingDriver runs the store's conformance
// suite on a store opened WithTracing: the wrapper passes every statement,
// prepared statement and transaction through (the suite's calls are
// untraced: the wrapper's pass-through path).
func TestConformanceThroughTheTracingDriver(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		c := new(storetest.Clock)
		s, _ := openTemp(t, WithClock(c.Now), WithTracing(true))
		return storetest.WithClock(s, c)
	})
}

// TestOpenTurnIsOneStatement: opening a continuing turn whose history the
// Store holds runs BEGIN, the lease's UPDATE (returning the session, its
// commit marker and the id of the message at it) and COMMIT, nothing else
// (counted as the tracing driver's spans). It ran three more reads before.
func TestOpenTurnIsOneStatement(t *testing.T) {
	s, _ := openTemp(t, WithTracing(true))
	bg := context.Background()
	k := store.Key{ProjectID: "p1", UserID: "u1", ThreadID: "t1"}
	if err := s.CreateSession(bg, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID,
		Metadata: map[string]any{"model": "gpt-4o"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessages(bg, k, []store.Message{{Role: store.RoleUser, Content: "hi"}, {Role: store.RoleAssistant, Content: "hello"}}); err != nil {
		t.Fatal(err)
	}
	open := func(ctx context.Context) []store.Message {
		t.Helper()
		sess, hist, err := s.OpenTurn(ctx, k, "owner", time.Minute, 50)
		if err != nil || sess == nil || sess.MessageCount != 2 || sess.Metadata["model"] != "gpt-4o" {
			t.Fatalf("OpenTurn: %+v, %v", sess, err)
		}
		if err := s.ReleaseLease(bg, k, "owner"); err != nil {
			t.Fatal(err)
		}
		return hist
	}
	open(bg) // the Store now holds the history

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	ctx, parent := tp.Tracer("test").Start(bg, "turn")
	hist := open(ctx)
	parent.End()
	if len(hist) != 2 || hist[1].Content != "hello" {
		t.Errorf("history %+v", hist)
	}
	var names []string
	for _, sp := range exp.GetSpans() {
		if sp.Name != "turn" {
			names = append(names, sp.Name)
		}
	}
	if got := strings.Join(names, ", "); got != "BEGIN, UPDATE sessions, COMMIT" {
		t.Errorf("statements of the opening: %s", got)
	}
}

// TestOpenOrCreateTurnStatements: the opening of a turn that may create
// its session (a client-made id, as the GNS3 web UI sends on every turn)
// tries the creation first when the Store holds nothing of the session,
// so that a new session costs no refused lease UPDATE and no read of the
// lease that refused; a session the Store holds is opened by the lease's
// UPDATE alone. Either way the answer is OpenOrCreateTurn's (counted as
// the tracing driver's spans; another Store on the file is another
// process). newSession is called at most once, and never while a
// transaction is open, so that what it waits for never holds the write
// lock.
func TestOpenOrCreateTurnStatements(t *testing.T) {
	bg := context.Background()
	s, path := openTemp(t, WithTracing(true))
	other, err := Open(bg, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	newSession := func(k store.Key) func() (*store.Session, error) {
		return func() (*store.Session, error) {
			return &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID, Title: "new"}, nil
		}
	}
	held := store.Key{ProjectID: "p1", UserID: "u1", ThreadID: "held"}
	if _, _, created, err := s.OpenOrCreateTurn(bg, held, "o", time.Minute, 50, newSession(held)); err != nil || !created {
		t.Fatalf("OpenOrCreateTurn(held): created %v, %v", created, err)
	}
	if _, err := s.FinishTurn(bg, held, "o", []store.Message{{Role: store.RoleUser, Content: "hi"}}, store.TurnStats{Messages: 1}); err != nil {
		t.Fatal(err)
	}
	elsewhere := store.Key{ProjectID: "p1", UserID: "u1", ThreadID: "elsewhere"}
	if err := other.CreateSession(bg, &store.Session{ProjectID: elsewhere.ProjectID, UserID: elsewhere.UserID, ThreadID: elsewhere.ThreadID, Title: "kept"}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.AppendMessages(bg, elsewhere, []store.Message{{Role: store.RoleUser, Content: "q"}, {Role: store.RoleAssistant, Content: "a"}}); err != nil {
		t.Fatal(err)
	}
	if err := other.CreateSession(bg, &store.Session{ProjectID: "p1", UserID: "u1", ThreadID: "alices"}); err != nil {
		t.Fatal(err)
	}
	bobs := store.Key{ProjectID: "p1", UserID: "bob", ThreadID: "alices"}
	gone := store.Key{ProjectID: "p1", UserID: "u1", ThreadID: "gone"}
	if _, _, created, err := s.OpenOrCreateTurn(bg, gone, "o", time.Minute, 50, newSession(gone)); err != nil || !created {
		t.Fatalf("OpenOrCreateTurn(gone): created %v, %v", created, err)
	}
	if err := other.DeleteSession(bg, gone); err != nil {
		t.Fatal(err)
	}
	busy := store.Key{ProjectID: "p1", UserID: "u1", ThreadID: "busy"}
	if err := other.CreateLeasedSession(bg, &store.Session{ProjectID: busy.ProjectID, UserID: busy.UserID, ThreadID: busy.ThreadID}, "someone", time.Hour); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name        string
		k           store.Key
		wantCreated bool
		wantHistory int
		wantErr     error
		wantTitle   string
		want        string
		// made: newSession is called.
		made bool
	}{
		{name: "new id", k: store.Key{ProjectID: "p1", UserID: "u1", ThreadID: "new"}, wantCreated: true, wantTitle: "new", made: true,
			want: "BEGIN, INSERT sessions, COMMIT"},
		{name: "session this Store holds", k: held, wantHistory: 1, wantTitle: "new",
			want: "BEGIN, UPDATE sessions, COMMIT"},
		{name: "session of another process", k: elsewhere, wantHistory: 2, wantTitle: "kept", made: true,
			want: "BEGIN, INSERT sessions, UPDATE sessions, SELECT messages, COMMIT"},
		{name: "session this Store held, deleted by another process", k: gone, wantCreated: true, wantTitle: "new", made: true,
			want: "BEGIN, UPDATE sessions, SELECT sessions, ROLLBACK, BEGIN, INSERT sessions, COMMIT"},
		{name: "another user's id", k: bobs, wantErr: store.ErrExists, made: true,
			want: "BEGIN, INSERT sessions, UPDATE sessions, SELECT sessions, ROLLBACK"},
		{name: "lease held in another process", k: busy, wantErr: store.ErrLeaseHeld, made: true,
			want: "BEGIN, INSERT sessions, UPDATE sessions, SELECT sessions, ROLLBACK"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			ctx, parent := tp.Tracer("test").Start(bg, "turn")
			calls, inTx := 0, false
			makeSession := func() (*store.Session, error) {
				calls++
				if spans := exp.GetSpans(); len(spans) > 0 {
					last := spans[len(spans)-1].Name
					inTx = inTx || (last != "COMMIT" && last != "ROLLBACK")
				}
				return newSession(tc.k)()
			}
			sess, hist, created, err := s.OpenOrCreateTurn(ctx, tc.k, "o", time.Minute, 50, makeSession)
			parent.End()
			if made := calls > 0; made != tc.made || calls > 1 || inTx {
				t.Errorf("newSession called %d times (in a transaction: %v); want called %v, outside any", calls, inTx, tc.made)
			}
			var names []string
			for _, sp := range exp.GetSpans() {
				if sp.Name != "turn" {
					names = append(names, sp.Name)
				}
			}
			if got := strings.Join(names, ", "); got != tc.want {
				t.Errorf("statements: %s, want %s", got, tc.want)
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("OpenOrCreateTurn: %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || created != tc.wantCreated || len(hist) != tc.wantHistory || sess.Title != tc.wantTitle {
				t.Fatalf("OpenOrCreateTurn: created %v, %d messages, session %+v, %v", created, len(hist), sess, err)
			}
			if err := other.AcquireLease(bg, tc.k, "someone else", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
				t.Errorf("the lease, seen from another process: %v", err)
			}
		})
	}
	// A creation tried on a taken id inserted nothing, and counted nothing.
	if kept, counted := storedCounts(t, s); !equalCounts(kept, counted) {
		t.Errorf("user_session_counts %v, sessions %v", kept, counted)
	}
}

// TestOpeningRefusesEmptyOwner: OpenTurn and OpenOrCreateTurn refuse an
// empty owner before any write, and OpenOrCreateTurn before newSession.
func TestOpeningRefusesEmptyOwner(t *testing.T) {
	s, _ := openTemp(t)
	k := store.Key{ProjectID: "p1", UserID: "u1", ThreadID: "t1"}
	if _, _, err := s.OpenTurn(t.Context(), k, "", time.Minute, 50); err == nil || !strings.Contains(err.Error(), "empty owner") {
		t.Errorf("OpenTurn with an empty owner: %v", err)
	}
	called := false
	_, _, _, err := s.OpenOrCreateTurn(t.Context(), k, "", time.Minute, 50, func() (*store.Session, error) {
		called = true
		return &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}, nil
	})
	if err == nil || !strings.Contains(err.Error(), "empty owner") || called {
		t.Errorf("OpenOrCreateTurn with an empty owner: %v (newSession called: %v)", err, called)
	}
	if _, err := s.GetSession(t.Context(), k); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("session after the refusals: %v", err)
	}
}

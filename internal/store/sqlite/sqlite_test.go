package sqlite

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/store"
	"agentchat/internal/store/storetest"
)

func openTemp(t testing.TB, opts ...Option) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agentchat.db")
	s, err := Open(context.Background(), path, opts...)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, path
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		c := new(storetest.Clock)
		s, _ := openTemp(t, WithClock(c.Now))
		return storetest.WithClock(s, c)
	})
}

func TestLimits(t *testing.T) {
	storetest.RunLimits(t, func(t *testing.T, l store.Limits) store.Store {
		c := new(storetest.Clock)
		s, _ := openTemp(t, WithClock(c.Now), WithLimits(l))
		return storetest.WithClock(s, c)
	})
}

func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a%20b #1.db") // taken literally
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	k := store.Key{ProjectID: uuid.NewString(), UserID: "alice", ThreadID: uuid.NewString()}
	if err := s.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	if _, err := s.RenameSession(ctx, k, "survives"); err != nil {
		t.Fatalf("RenameSession: %v", err)
	}
	if _, err := s.SetPinned(ctx, k, true); err != nil {
		t.Fatalf("SetPinned: %v", err)
	}
	if _, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "hello"}}); err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	for i := range 2 { // migrations rerun cleanly, twice
		s, err = Open(ctx, path)
		if err != nil {
			t.Fatalf("reopen %d: %v", i, err)
		}
		got, err := s.GetSession(ctx, k)
		if err != nil {
			t.Fatalf("reopen %d: GetSession: %v", i, err)
		}
		if got.Title != "survives" || !got.TitleSetByUser || !got.Pinned {
			t.Errorf("reopen %d: session = %q by user %v pinned %v", i, got.Title, got.TitleSetByUser, got.Pinned)
		}
		msgs, err := s.ListMessages(ctx, k, 0)
		if err != nil || len(msgs) != 1 || msgs[0].Content != "hello" || msgs[0].Seq != 1 {
			t.Errorf("reopen %d: messages = %+v, %v", i, msgs, err)
		}
		var rows, version int
		if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*), MAX(version) FROM schema_migrations`).Scan(&rows, &version); err != nil {
			t.Fatalf("read schema_migrations: %v", err)
		}
		if rows != len(migrations) || version != len(migrations) {
			t.Errorf("schema_migrations: %d rows, version %d; want %d and %d", rows, version, len(migrations), len(migrations))
		}
		var journal string
		if err := s.r.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&journal); err != nil || journal != "wal" {
			t.Errorf("journal_mode = %q, %v; want wal", journal, err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database file not at the literal path: %v", err)
	}
}

func TestOpenRejectsNewerSchema(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	if _, err := s.w.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, '')`, len(migrations)+1); err != nil {
		t.Fatalf("insert future version: %v", err)
	}
	_, err := Open(ctx, path)
	if err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("Open with a newer schema: %v, want a 'newer' error", err)
	}
}

func TestOpenBadPath(t *testing.T) {
	for _, p := range []string{"", "a?b.db", "file:x.db", filepath.Join(t.TempDir(), "missing-dir", "x", "a.db")} {
		if s, err := Open(context.Background(), p); err == nil {
			_ = s.Close()
			t.Errorf("Open(%q) succeeded, want an error", p)
		}
	}
}

// TestUseAfterClose: a closed store answers with errors, prepared
// statements included, and a second Close is harmless.
func TestUseAfterClose(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "closed.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	k := store.Key{ProjectID: "p", UserID: "u", ThreadID: "t"}
	if err := s.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, getErr := s.GetSession(ctx, k)
	_, listErr := s.ListMessages(ctx, k, 10)
	_, abortErr := s.AbortRequested(ctx, k)
	_, appendErr := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "x"}})
	_, keyErr := s.APIKeyByHash(ctx, "h")
	for name, err := range map[string]error{
		"GetSession":     getErr,
		"ListMessages":   listErr,
		"AbortRequested": abortErr,
		"AppendMessages": appendErr,
		"APIKeyByHash":   keyErr,
		"AcquireLease":   s.AcquireLease(ctx, k, "o", time.Minute),
		"ReleaseLease":   s.ReleaseLease(ctx, k, "o"),
		"RequestAbort":   s.RequestAbort(ctx, k),
		"AddTurnStats":   s.AddTurnStats(ctx, k, store.TurnStats{Turns: 1}),
	} {
		if err == nil {
			t.Errorf("%s after Close: no error", name)
		}
	}
}

// TestListMessagesNoLimit: a limit <= 0 returns every committed message
// (the prepared query passes a negative LIMIT).
func TestListMessagesNoLimit(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	k := store.Key{ProjectID: "p", UserID: "u", ThreadID: "t"}
	if err := s.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: fmt.Sprint(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ limit, want int }{{-5, 30}, {0, 30}, {1, 1}, {29, 29}, {30, 30}, {31, 30}} {
		msgs, err := s.ListMessages(ctx, k, tc.limit)
		if err != nil || len(msgs) != tc.want {
			t.Errorf("ListMessages(limit %d) = %d messages, %v; want %d", tc.limit, len(msgs), err, tc.want)
			continue
		}
		if last := msgs[len(msgs)-1]; last.Seq != 30 {
			t.Errorf("ListMessages(limit %d) ends at seq %d, want 30", tc.limit, last.Seq)
		}
	}
}

func TestCursor(t *testing.T) {
	good := encodeCursor(cursor{Pinned: true, UpdatedAt: "2025-01-02T03:04:05.000000006Z", ThreadID: "t1"})
	if c, err := decodeCursor(good); err != nil || !c.Pinned || c.ThreadID != "t1" {
		t.Fatalf("decodeCursor(encodeCursor(...)) = %+v, %v", c, err)
	}
	for name, raw := range map[string]string{
		"not base64":     "!!",
		"not json":       "AAAA",
		"unknown field":  `{"p":true,"u":"2025-01-02T03:04:05.000000006Z","t":"x","z":1}`,
		"no thread":      `{"p":true,"u":"2025-01-02T03:04:05.000000006Z"}`,
		"bad time":       `{"p":false,"u":"yesterday","t":"x"}`,
		"zero time":      `{"p":false,"u":"","t":"x"}`,
		"trailing value": `{"p":false,"u":"2025-01-02T03:04:05.000000006Z","t":"x"} {}`,
		"wrong type":     `{"p":"yes","u":"2025-01-02T03:04:05.000000006Z","t":"x"}`,
	} {
		in := raw
		if strings.HasPrefix(raw, "{") {
			in = b64(raw)
		}
		if _, err := decodeCursor(in); !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("%s: decodeCursor(%q) = %v, want ErrInvalidCursor", name, in, err)
		}
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestListSessionsLimit(t *testing.T) {
	s, _ := openTemp(t)
	for _, limit := range []int{-1, 0, 1001} {
		if _, _, err := s.ListSessions(context.Background(), "p", "u", store.Page{Limit: limit}); err == nil {
			t.Errorf("ListSessions(limit %d) succeeded, want an error", limit)
		}
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	k := store.Key{ProjectID: "p", UserID: "u", ThreadID: "t"}
	if err := s.CreateSession(ctx, &store.Session{ProjectID: "p", UserID: "u", ThreadID: "t"}); err != nil {
		t.Fatal(err)
	}
	cases := map[string]error{
		"nil session":     s.CreateSession(ctx, nil),
		"empty thread":    s.CreateSession(ctx, &store.Session{ProjectID: "p", UserID: "u"}),
		"time range":      s.CreateSession(ctx, &store.Session{ProjectID: "p", UserID: "u", ThreadID: "t2", CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}),
		"zero ttl":        s.AcquireLease(ctx, k, "o", 0),
		"empty owner":     s.AcquireLease(ctx, k, "", time.Minute),
		"nil api key":     s.CreateAPIKey(ctx, nil),
		"api key no hash": s.CreateAPIKey(ctx, &store.APIKey{ID: "i", UserID: "u"}),
	}
	_, err := s.AppendMessages(ctx, k, []store.Message{{Role: "wizard", Content: "x"}})
	cases["bad role"] = err
	for name, err := range cases {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	msgs, err := s.ListMessages(ctx, k, 0)
	if err != nil || len(msgs) != 0 {
		t.Errorf("a rejected append left %d messages (%v)", len(msgs), err)
	}
}

// TestDeleteProjectBatches removes a project larger than one deletion batch.
func TestDeleteProjectBatches(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	p, other := uuid.NewString(), uuid.NewString()
	n := 2*deleteProjectBatch + 7
	for i := range n {
		k := store.Key{ProjectID: p, UserID: fmt.Sprint("u", i%3), ThreadID: uuid.NewString()}
		if err := s.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: "q"}, {Role: store.RoleAssistant, Content: "a"}}); err != nil {
			t.Fatal(err)
		}
	}
	kept := store.Key{ProjectID: other, UserID: "u0", ThreadID: uuid.NewString()}
	if err := s.CreateSession(ctx, &store.Session{ProjectID: kept.ProjectID, UserID: kept.UserID, ThreadID: kept.ThreadID}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteProject(ctx, p); err != nil {
		t.Fatalf("DeleteProject: %v", err)
	}
	var sessions, messages int
	if err := s.r.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM sessions WHERE project_id = ?), (SELECT COUNT(*) FROM messages WHERE project_id = ?)`, p, p).Scan(&sessions, &messages); err != nil {
		t.Fatal(err)
	}
	if sessions != 0 || messages != 0 {
		t.Errorf("after DeleteProject: %d sessions and %d messages left", sessions, messages)
	}
	if _, err := s.GetSession(ctx, kept); err != nil {
		t.Errorf("other project's session: %v", err)
	}
}

// TestTwoHandles writes concurrently through two Stores on the same file, as
// two processes would: busy_timeout and BEGIN IMMEDIATE keep every write.
func TestTwoHandles(t *testing.T) {
	ctx := context.Background()
	a, path := openTemp(t)
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("second Open: %v", err)
	}
	defer func() { _ = b.Close() }()
	k := store.Key{ProjectID: uuid.NewString(), UserID: "u", ThreadID: uuid.NewString()}
	if err := a.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		s := []*Store{a, b}[w%2]
		wg.Go(func() {
			for i := range 10 {
				if _, err := s.AppendMessages(ctx, k, []store.Message{{Role: store.RoleUser, Content: fmt.Sprint(w, "-", i)}}); err != nil {
					t.Errorf("writer %d append %d: %v", w, i, err)
				}
				if err := s.AddTurnStats(ctx, k, store.TurnStats{Messages: 1}); err != nil {
					t.Errorf("writer %d stats %d: %v", w, i, err)
				}
			}
		})
	}
	wg.Wait()
	msgs, err := b.ListMessages(ctx, k, 0)
	if err != nil || len(msgs) != 80 {
		t.Fatalf("ListMessages: %d messages, %v; want 80", len(msgs), err)
	}
	for i := range msgs {
		if msgs[i].Seq != int64(i+1) {
			t.Fatalf("message %d has Seq %d", i, msgs[i].Seq)
		}
	}
	if got, err := a.GetSession(ctx, k); err != nil || got.MessageCount != 80 {
		t.Errorf("MessageCount = %v, %v; want 80", got, err)
	}
}

func BenchmarkAppendMessages(b *testing.B) {
	ctx := context.Background()
	s, _ := openTemp(b)
	k := store.Key{ProjectID: uuid.NewString(), UserID: "bench", ThreadID: uuid.NewString()}
	if err := s.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}); err != nil {
		b.Fatal(err)
	}
	batch := []store.Message{
		{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{ID: "c1", Type: "function", Function: store.FunctionCall{Name: "gns3_list_nodes", Arguments: `{}`}}}},
		{Role: store.RoleTool, ToolCallID: "c1", Name: "gns3_list_nodes", Content: strings.Repeat(`{"name":"R1","status":"started"},`, 30)},
		{Role: store.RoleAssistant, Content: "R1 is running."},
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.AppendMessages(ctx, k, batch); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkListSessions(b *testing.B) {
	ctx := context.Background()
	s, _ := openTemp(b)
	p := uuid.NewString()
	for i := range 500 {
		sess := &store.Session{ProjectID: p, UserID: "bench", ThreadID: uuid.NewString(), Title: fmt.Sprint("s", i), Pinned: i%25 == 0}
		if err := s.CreateSession(ctx, sess); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		cursor := ""
		for {
			page, next, err := s.ListSessions(ctx, p, "bench", store.Page{Limit: 50, Cursor: cursor})
			if err != nil || len(page) == 0 {
				b.Fatalf("ListSessions: %d, %v", len(page), err)
			}
			if next == "" {
				break
			}
			cursor = next
		}
	}
}

// benchSession creates a session with n messages (a user question, an
// assistant tool call, its result and an answer, repeated) for benchmarks.
func benchSession(b *testing.B, n int) (*Store, store.Key) {
	b.Helper()
	ctx := context.Background()
	s, _ := openTemp(b)
	k := store.Key{ProjectID: uuid.NewString(), UserID: "bench", ThreadID: uuid.NewString()}
	if err := s.CreateSession(ctx, &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID,
		Metadata: map[string]any{"model": "gpt-4o"}}); err != nil {
		b.Fatal(err)
	}
	if err := s.AddTurnStats(ctx, k, store.TurnStats{Messages: 4, LLMCalls: 2, InputTokens: 900, OutputTokens: 120, Turns: 1,
		ToolCalls: map[string]int64{"gns3_list_nodes": 1}}); err != nil {
		b.Fatal(err)
	}
	turn := []store.Message{
		{Role: store.RoleUser, Content: "Which routers are running?"},
		{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{ID: "c1", Type: "function", Function: store.FunctionCall{Name: "gns3_list_nodes", Arguments: `{}`}}}},
		{Role: store.RoleTool, ToolCallID: "c1", Name: "gns3_list_nodes", Content: strings.Repeat(`{"name":"R1","status":"started"},`, 10)},
		{Role: store.RoleAssistant, Content: "R1 is running.", Metadata: map[string]any{"model": "gpt-4o"}},
	}
	for added := 0; added < n; added += len(turn) {
		if _, err := s.AppendMessages(ctx, k, turn[:min(len(turn), n-added)]); err != nil {
			b.Fatal(err)
		}
	}
	return s, k
}

func BenchmarkGetSession(b *testing.B) {
	ctx := context.Background()
	s, k := benchSession(b, 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.GetSession(ctx, k); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkListMessages100(b *testing.B) {
	ctx := context.Background()
	s, k := benchSession(b, 200)
	b.ReportAllocs()
	for b.Loop() {
		msgs, err := s.ListMessages(ctx, k, 100)
		if err != nil || len(msgs) != 100 {
			b.Fatalf("ListMessages: %d messages, %v", len(msgs), err)
		}
	}
}

func BenchmarkAcquireReleaseLease(b *testing.B) {
	ctx := context.Background()
	s, k := benchSession(b, 0)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.AcquireLease(ctx, k, "bench-owner", time.Minute); err != nil {
			b.Fatal(err)
		}
		if err := s.ReleaseLease(ctx, k, "bench-owner"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAbortRequested(b *testing.B) {
	ctx := context.Background()
	s, k := benchSession(b, 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.AbortRequested(ctx, k); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAddTurnStats(b *testing.B) {
	ctx := context.Background()
	s, k := benchSession(b, 0)
	d := store.TurnStats{Messages: 4, LLMCalls: 2, InputTokens: 900, OutputTokens: 120, Turns: 1,
		ToolCalls: map[string]int64{"gns3_list_nodes": 1}, LastMessageAt: time.Now()}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.AddTurnStats(ctx, k, d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateLeasedSession: the write that opens a new session's
// first turn.
func BenchmarkCreateLeasedSession(b *testing.B) {
	ctx := context.Background()
	s, k := benchSession(b, 0)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		sess := &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: fmt.Sprintf("bench-new-%d", i)}
		if err := s.CreateLeasedSession(ctx, sess, "bench-owner", time.Minute); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenTurn: the write that opens a continuing session's turn
// (its lease, the session and its history of 16 messages, from the
// history cache), with the release that ends it.
func BenchmarkOpenTurn(b *testing.B) {
	ctx := context.Background()
	s, k := benchSession(b, 16)
	b.ReportAllocs()
	for b.Loop() {
		sess, hist, err := s.OpenTurn(ctx, k, "bench-owner", time.Minute, 50)
		if err != nil || sess == nil || len(hist) != 16 {
			b.Fatalf("OpenTurn: %v, %d messages, %v", sess, len(hist), err)
		}
		if err := s.ReleaseLease(ctx, k, "bench-owner"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenOrCreateTurn: the write that opens the turn of a new
// session with a client-made id (the lookup, the insert with its lease and
// the sessions limit's check), as the local server makes it.
func BenchmarkOpenOrCreateTurn(b *testing.B) {
	ctx := context.Background()
	s, _ := openTemp(b, WithLimits(store.Limits{SessionsPerUser: 10000}))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		k := store.Key{ProjectID: "p", UserID: "bench", ThreadID: fmt.Sprintf("bench-new-%d", i)}
		_, _, created, err := s.OpenOrCreateTurn(ctx, k, "bench-owner", time.Minute, 50, func() (*store.Session, error) {
			return &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID, Title: store.DefaultTitle,
				Metadata: map[string]any{store.MetadataCopilotMode: "teaching"}}, nil
		})
		if err != nil || !created {
			b.Fatalf("OpenOrCreateTurn: created %v, %v", created, err)
		}
	}
}

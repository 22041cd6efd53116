// Package storetest is the conformance suite that every store.Store
// implementation runs: call Run from the implementation's tests with a
// function that returns a fresh, empty store.
//
// The suite only checks what the contract in package store promises and what
// callers observe. It keeps its total work moderate (hundreds of operations)
// so that it also runs quickly against a DynamoDB emulator, and it never
// asserts on timing: lease expiry is awaited by polling with a generous
// deadline.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"agentchat/internal/store"
)

// Clock is an adjustable clock for a store under test: real time plus an
// offset that only grows, so that a test can pass store.AbortGrace without
// sleeping while short lease TTLs still expire in real time. The zero value
// is real time. It is safe for concurrent use.
type Clock struct {
	mu     sync.Mutex
	offset time.Duration
}

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Advance moves the clock forward by d (a negative d is ignored).
func (c *Clock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// clocked is a store whose current time is read from clock.
type clocked struct {
	store.Store
	clock *Clock
}

// Unwrap implements store.Wrapper, so that the suite finds the optional
// interfaces of the store under test.
func (c clocked) Unwrap() store.Store { return c.Store }

// WithClock marks s, which must read the current time from c.Now, as
// driven by c, so that the suite can move its time forward. newStore must
// return its stores through WithClock: the tests of the abort grace fail
// on a store that is not.
func WithClock(s store.Store, c *Clock) store.Store {
	return clocked{Store: s, clock: c}
}

// Run runs the conformance suite against stores made by newStore (each call
// returns a fresh, empty store, wrapped by WithClock). newStore is
// responsible for closing the store it returns, for example with t.Cleanup.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"CreateGet", testCreateGet},
		{"CreateDuplicate", testCreateDuplicate},
		{"TimeRoundTrip", testTimeRoundTrip},
		{"Ownership", testOwnership},
		{"ListOrder", testListOrder},
		{"ListPagination", testListPagination},
		{"ListInvalidCursor", testListInvalidCursor},
		{"ListCopilotMode", testListCopilotMode},
		{"Rename", testRename},
		{"GeneratedTitle", testGeneratedTitle},
		{"Pin", testPin},
		{"AddTurnStats", testAddTurnStats},
		{"ConcurrentAddTurnStats", testConcurrentAddTurnStats},
		{"MessagesRoundTrip", testMessagesRoundTrip},
		{"ListMessagesLastN", testListMessagesLastN},
		{"ConcurrentAppends", testConcurrentAppends},
		{"AppendAllOrNothing", testAppendAllOrNothing},
		{"LargeContent", testLargeContent},
		{"Lease", testLease},
		{"LeaseExpiry", testLeaseExpiry},
		{"CreateLeased", testCreateLeased},
		{"CreateLeasedDuplicate", testCreateLeasedDuplicate},
		{"CreateLeasedExpiry", testCreateLeasedExpiry},
		{"CreateLeasedRace", testCreateLeasedRace},
		{"Abort", testAbort},
		{"AbortGrace", testAbortGrace},
		{"AbortGraceRepeatedRequest", testAbortGraceRepeatedRequest},
		{"DeleteSession", testDeleteSession},
		{"DeleteProject", testDeleteProject},
		{"DeleteProjectMany", testDeleteProjectMany},
		{"DeleteRecreateRace", testDeleteRecreateRace},
		{"APIKeys", testAPIKeys},
		{"TouchAPIKey", testTouchAPIKey},
	}
	tests = append(tests, llmTests...)
	tests = append(tests, deviceLockTests...)
	tests = append(tests, cutTurnTests...)
	tests = append(tests, append(leaseHeldTests, turnSlotTests...)...)
	tests = append(tests, oneStepTests...)
	tests = append(tests, historyTests...)
	tests = append(tests, auditTests...)
	tests = append(tests, rollbackTests...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newStore(t))
		})
	}
}

// ---- helpers ----

func newKey(project, user string) store.Key {
	return store.Key{ProjectID: project, UserID: user, ThreadID: uuid.NewString()}
}

func newProject() string { return uuid.NewString() }

// create stores a session for k (mod may set more fields) and returns it as
// read back.
func create(t *testing.T, s store.Store, k store.Key, mod func(*store.Session)) *store.Session {
	t.Helper()
	sess := &store.Session{ProjectID: k.ProjectID, UserID: k.UserID, ThreadID: k.ThreadID}
	if mod != nil {
		mod(sess)
	}
	if err := s.CreateSession(t.Context(), sess); err != nil {
		t.Fatalf("CreateSession(%+v): %v", k, err)
	}
	return get(t, s, k)
}

func get(t *testing.T, s store.Store, k store.Key) *store.Session {
	t.Helper()
	got, err := s.GetSession(t.Context(), k)
	if err != nil {
		t.Fatalf("GetSession(%+v): %v", k, err)
	}
	if got == nil {
		t.Fatalf("GetSession(%+v) returned nil session and nil error", k)
	}
	return got
}

func appendMsgs(t *testing.T, s store.Store, k store.Key, msgs ...store.Message) []store.Message {
	t.Helper()
	got, err := s.AppendMessages(t.Context(), k, msgs)
	if err != nil {
		t.Fatalf("AppendMessages(%+v, %d msgs): %v", k, len(msgs), err)
	}
	if len(got) != len(msgs) {
		t.Fatalf("AppendMessages returned %d messages, want %d", len(got), len(msgs))
	}
	return got
}

func listMsgs(t *testing.T, s store.Store, k store.Key, limit int) []store.Message {
	t.Helper()
	got, err := s.ListMessages(t.Context(), k, limit)
	if err != nil {
		t.Fatalf("ListMessages(%+v, %d): %v", k, limit, err)
	}
	return got
}

func textMsg(role, content string) store.Message {
	return store.Message{Role: role, Content: content}
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: error = %v, want %v", what, err, want)
	}
}

func noErr(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// timeEq reports whether a and b are the same instant to the millisecond.
func timeEq(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero() && b.IsZero()
	}
	d := a.Sub(b)
	return d < time.Millisecond && d > -time.Millisecond
}

func checkUTC(t *testing.T, what string, tm time.Time) {
	t.Helper()
	if !tm.IsZero() && tm.Location() != time.UTC {
		t.Errorf("%s = %v: location %v, want UTC", what, tm, tm.Location())
	}
}

func checkSessionTimes(t *testing.T, sess *store.Session) {
	t.Helper()
	checkUTC(t, "CreatedAt", sess.CreatedAt)
	checkUTC(t, "UpdatedAt", sess.UpdatedAt)
	checkUTC(t, "LastMessageAt", sess.LastMessageAt)
}

func normMap[V any](m map[string]V) map[string]V {
	if len(m) == 0 {
		return nil
	}
	return m
}

// diffSession describes how got differs from want ("" when equal), with
// timestamps compared to the millisecond and nil/empty maps equal.
func diffSession(want, got *store.Session) string {
	var d []string
	add := func(field string, w, g any) { d = append(d, fmt.Sprintf("%s: got %v, want %v", field, g, w)) }
	if want.ThreadID != got.ThreadID {
		add("ThreadID", want.ThreadID, got.ThreadID)
	}
	if want.UserID != got.UserID {
		add("UserID", want.UserID, got.UserID)
	}
	if want.ProjectID != got.ProjectID {
		add("ProjectID", want.ProjectID, got.ProjectID)
	}
	if want.Title != got.Title {
		add("Title", want.Title, got.Title)
	}
	if want.TitleSetByUser != got.TitleSetByUser {
		add("TitleSetByUser", want.TitleSetByUser, got.TitleSetByUser)
	}
	if want.Pinned != got.Pinned {
		add("Pinned", want.Pinned, got.Pinned)
	}
	for _, c := range []struct {
		name string
		w, g int64
	}{
		{"MessageCount", want.MessageCount, got.MessageCount},
		{"LLMCallsCount", want.LLMCallsCount, got.LLMCallsCount},
		{"InputTokens", want.InputTokens, got.InputTokens},
		{"OutputTokens", want.OutputTokens, got.OutputTokens},
		{"TotalTokens", want.TotalTokens, got.TotalTokens},
		{"Stats.Errors", want.Stats.Errors, got.Stats.Errors},
		{"Stats.AbortedTurns", want.Stats.AbortedTurns, got.Stats.AbortedTurns},
		{"Stats.Turns", want.Stats.Turns, got.Stats.Turns},
	} {
		if c.w != c.g {
			add(c.name, c.w, c.g)
		}
	}
	if !reflect.DeepEqual(normMap(want.Stats.ToolCalls), normMap(got.Stats.ToolCalls)) {
		add("Stats.ToolCalls", want.Stats.ToolCalls, got.Stats.ToolCalls)
	}
	if !reflect.DeepEqual(normMap(want.Metadata), normMap(got.Metadata)) {
		add("Metadata", want.Metadata, got.Metadata)
	}
	for _, c := range []struct {
		name string
		w, g time.Time
	}{
		{"CreatedAt", want.CreatedAt, got.CreatedAt},
		{"UpdatedAt", want.UpdatedAt, got.UpdatedAt},
		{"LastMessageAt", want.LastMessageAt, got.LastMessageAt},
	} {
		if !timeEq(c.w, c.g) {
			add(c.name, c.w, c.g)
		}
	}
	return strings.Join(d, "; ")
}

// diffMessage describes how got differs from want ("" when equal), ignoring
// Seq, and ID / CreatedAt when want leaves them empty.
func diffMessage(want, got store.Message) string {
	var d []string
	add := func(field string, w, g any) {
		d = append(d, fmt.Sprintf("%s: got %q, want %q", field, fmt.Sprint(g), fmt.Sprint(w)))
	}
	if want.ID != "" && want.ID != got.ID {
		add("ID", want.ID, got.ID)
	}
	if want.Role != got.Role {
		add("Role", want.Role, got.Role)
	}
	if want.Content != got.Content {
		if len(want.Content) > 100 || len(got.Content) > 100 {
			d = append(d, fmt.Sprintf("Content: got %d bytes, want %d bytes", len(got.Content), len(want.Content)))
		} else {
			add("Content", want.Content, got.Content)
		}
	}
	if want.Name != got.Name {
		add("Name", want.Name, got.Name)
	}
	if want.ToolCallID != got.ToolCallID {
		add("ToolCallID", want.ToolCallID, got.ToolCallID)
	}
	if len(want.ToolCalls) != 0 || len(got.ToolCalls) != 0 {
		if !reflect.DeepEqual(want.ToolCalls, got.ToolCalls) {
			add("ToolCalls", want.ToolCalls, got.ToolCalls)
		}
	}
	if !reflect.DeepEqual(normMap(want.Metadata), normMap(got.Metadata)) {
		add("Metadata", want.Metadata, got.Metadata)
	}
	if !want.CreatedAt.IsZero() && !timeEq(want.CreatedAt, got.CreatedAt) {
		add("CreatedAt", want.CreatedAt, got.CreatedAt)
	}
	return strings.Join(d, "; ")
}

// sessionBefore is the listing order of the contract: pinned first, then
// UpdatedAt descending, then ThreadID descending.
func sessionBefore(a, b *store.Session) bool {
	if a.Pinned != b.Pinned {
		return a.Pinned
	}
	if !a.UpdatedAt.Equal(b.UpdatedAt) {
		return a.UpdatedAt.After(b.UpdatedAt)
	}
	return a.ThreadID > b.ThreadID
}

// expectedOrder reads every key back and sorts the sessions in listing order.
func expectedOrder(t *testing.T, s store.Store, keys []store.Key) []string {
	t.Helper()
	var all []*store.Session
	for _, k := range keys {
		all = append(all, get(t, s, k))
	}
	slices.SortFunc(all, func(a, b *store.Session) int {
		switch {
		case sessionBefore(a, b):
			return -1
		case sessionBefore(b, a):
			return 1
		}
		return 0
	})
	ids := make([]string, len(all))
	for i, x := range all {
		ids[i] = x.ThreadID
	}
	return ids
}

func threadIDs(ss []store.Session) []string {
	ids := make([]string, len(ss))
	for i := range ss {
		ids[i] = ss[i].ThreadID
	}
	return ids
}

// listAll walks every page of a listing with the given limit; see
// listPages.
func listAll(t *testing.T, s store.Store, project, user string, limit int) []store.Session {
	t.Helper()
	return listPages(t, s, project, user, store.Page{Limit: limit})
}

// listPages walks every page of the listing that starts with first (its
// Cursor is ignored), passing each NextCursor on with the same limit and
// filter. It fails when a page is not full although a next page follows,
// when a page is larger than the limit, when a non-empty cursor leads to an
// empty page, or when the walk does not end.
func listPages(t *testing.T, s store.Store, project, user string, first store.Page) []store.Session {
	t.Helper()
	var all []store.Session
	p := first
	p.Cursor = ""
	for page := 0; ; page++ {
		if page > 1000 {
			t.Fatalf("listing %+v did not end after %d pages", first, page)
		}
		got, next, err := s.ListSessions(t.Context(), project, user, p)
		if err != nil {
			t.Fatalf("ListSessions(%+v, page %d): %v", p, page, err)
		}
		if len(got) > p.Limit {
			t.Fatalf("ListSessions(limit %d, mode %q) page %d has %d sessions", p.Limit, p.CopilotMode, page, len(got))
		}
		if page > 0 && len(got) == 0 {
			t.Fatalf("ListSessions(limit %d, mode %q): cursor %q of page %d led to an empty page (NextCursor must be empty on the last page)", p.Limit, p.CopilotMode, p.Cursor, page-1)
		}
		if next != "" && len(got) != p.Limit {
			t.Fatalf("ListSessions(limit %d, mode %q) page %d has %d sessions and a next cursor, want a full page", p.Limit, p.CopilotMode, page, len(got))
		}
		all = append(all, got...)
		if next == "" {
			return all
		}
		p.Cursor = next
	}
}

// ---- sessions ----

func testCreateGet(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	k := newKey(p, "alice")
	before := time.Now()
	sess := create(t, s, k, func(s *store.Session) {
		s.Metadata = map[string]any{"client": "web", "n": 3.5, "ok": true, "tags": []any{"a", "b"}, "nested": map[string]any{"k": "v"}}
	})
	after := time.Now()

	want := &store.Session{
		ThreadID: k.ThreadID, UserID: k.UserID, ProjectID: k.ProjectID,
		Title:     store.DefaultTitle,
		Metadata:  map[string]any{"client": "web", "n": 3.5, "ok": true, "tags": []any{"a", "b"}, "nested": map[string]any{"k": "v"}},
		CreatedAt: sess.CreatedAt, UpdatedAt: sess.UpdatedAt,
	}
	if d := diffSession(want, sess); d != "" {
		t.Errorf("created session: %s", d)
	}
	if sess.Key() != k {
		t.Errorf("Key() = %+v, want %+v", sess.Key(), k)
	}
	checkSessionTimes(t, sess)
	for name, tm := range map[string]time.Time{"CreatedAt": sess.CreatedAt, "UpdatedAt": sess.UpdatedAt} {
		// A generous window: the store sets "now", the test only checks it is
		// a plausible now and not, say, the zero time or a unit mix-up.
		if tm.Before(before.Add(-time.Minute)) || tm.After(after.Add(time.Minute)) {
			t.Errorf("%s = %v, want about now (%v)", name, tm, before)
		}
	}
	if !sess.LastMessageAt.IsZero() {
		t.Errorf("LastMessageAt = %v, want zero before any message", sess.LastMessageAt)
	}

	// An explicit title is kept and is not the user's own.
	k2 := newKey(p, "alice")
	s2 := create(t, s, k2, func(s *store.Session) { s.Title = "Routing lab" })
	if s2.Title != "Routing lab" || s2.TitleSetByUser {
		t.Errorf("explicit title: got %q (by user %v), want %q (false)", s2.Title, s2.TitleSetByUser, "Routing lab")
	}

	// Unknown sessions.
	_, err := s.GetSession(ctx, newKey(p, "alice"))
	wantErr(t, "GetSession(unknown thread)", err, store.ErrNotFound)
	_, err = s.GetSession(ctx, store.Key{ProjectID: newProject(), UserID: "alice", ThreadID: k.ThreadID})
	wantErr(t, "GetSession(other project)", err, store.ErrNotFound)
}

func testCreateDuplicate(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	k := newKey(p, "alice")
	create(t, s, k, func(s *store.Session) { s.Title = "first" })

	err := s.CreateSession(ctx, &store.Session{ProjectID: p, UserID: "alice", ThreadID: k.ThreadID, Title: "second"})
	wantErr(t, "CreateSession(same project, same user, same thread)", err, store.ErrExists)
	err = s.CreateSession(ctx, &store.Session{ProjectID: p, UserID: "bob", ThreadID: k.ThreadID, Title: "bob's"})
	wantErr(t, "CreateSession(same project, other user, same thread)", err, store.ErrExists)

	// The original is untouched, and bob does not see it.
	if got := get(t, s, k); got.Title != "first" || got.UserID != "alice" {
		t.Errorf("after duplicates: session = %q of %q, want %q of alice", got.Title, got.UserID, "first")
	}
	_, err = s.GetSession(ctx, store.Key{ProjectID: p, UserID: "bob", ThreadID: k.ThreadID})
	wantErr(t, "GetSession(bob, alice's thread)", err, store.ErrNotFound)

	// The same thread id in another project is another session.
	p2 := newProject()
	k2 := store.Key{ProjectID: p2, UserID: "bob", ThreadID: k.ThreadID}
	create(t, s, k2, func(s *store.Session) { s.Title = "other project" })
	if got := get(t, s, k2); got.Title != "other project" {
		t.Errorf("other project session title = %q", got.Title)
	}
	if got := get(t, s, k); got.Title != "first" {
		t.Errorf("original session title = %q after other project create", got.Title)
	}
	appendMsgs(t, s, k2, textMsg(store.RoleUser, "in p2"))
	if msgs := listMsgs(t, s, k, 0); len(msgs) != 0 {
		t.Errorf("messages of p2 thread leaked into p1 thread: %d messages", len(msgs))
	}
}

func testTimeRoundTrip(t *testing.T, s store.Store) {
	p := newProject()
	loc := time.FixedZone("UTC+5:30", 5*3600+1800)
	created := time.Date(2024, 2, 29, 23, 59, 58, 123456789, loc)
	updated := time.Date(2025, 1, 2, 3, 4, 5, 987654321, loc)
	k := newKey(p, "alice")
	sess := create(t, s, k, func(s *store.Session) {
		s.CreatedAt = created
		s.UpdatedAt = updated
	})
	checkSessionTimes(t, sess)
	if !timeEq(sess.CreatedAt, created) {
		t.Errorf("CreatedAt = %v, want %v (to the millisecond)", sess.CreatedAt, created.UTC())
	}
	if !timeEq(sess.UpdatedAt, updated) {
		t.Errorf("UpdatedAt = %v, want %v (to the millisecond)", sess.UpdatedAt, updated.UTC())
	}

	last := time.Date(2025, 6, 7, 8, 9, 10, 555666777, loc)
	noErr(t, "AddTurnStats", s.AddTurnStats(t.Context(), k, store.TurnStats{LastMessageAt: last}))
	sess = get(t, s, k)
	checkSessionTimes(t, sess)
	if !timeEq(sess.LastMessageAt, last) {
		t.Errorf("LastMessageAt = %v, want %v", sess.LastMessageAt, last.UTC())
	}

	msgAt := time.Date(2023, 12, 31, 23, 59, 59, 999000000, loc)
	appendMsgs(t, s, k, store.Message{Role: store.RoleUser, Content: "hi", CreatedAt: msgAt})
	got := listMsgs(t, s, k, 0)
	if len(got) != 1 {
		t.Fatalf("ListMessages: %d messages, want 1", len(got))
	}
	checkUTC(t, "Message.CreatedAt", got[0].CreatedAt)
	if !timeEq(got[0].CreatedAt, msgAt) {
		t.Errorf("Message.CreatedAt = %v, want %v", got[0].CreatedAt, msgAt.UTC())
	}
}

func testOwnership(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	k := newKey(p, "alice")
	create(t, s, k, func(s *store.Session) { s.Title = "alice's" })
	appendMsgs(t, s, k, textMsg(store.RoleUser, "secret plans"))
	orig := get(t, s, k)

	others := map[string]store.Key{
		"other user":    {ProjectID: p, UserID: "mallory", ThreadID: k.ThreadID},
		"other project": {ProjectID: newProject(), UserID: "alice", ThreadID: k.ThreadID},
	}
	for name, o := range others {
		_, err := s.GetSession(ctx, o)
		wantErr(t, name+": GetSession", err, store.ErrNotFound)
		_, err = s.RenameSession(ctx, o, "pwned")
		wantErr(t, name+": RenameSession", err, store.ErrNotFound)
		_, err = s.SetGeneratedTitle(ctx, o, "pwned")
		wantErr(t, name+": SetGeneratedTitle", err, store.ErrNotFound)
		_, err = s.SetPinned(ctx, o, true)
		wantErr(t, name+": SetPinned", err, store.ErrNotFound)
		err = s.AddTurnStats(ctx, o, store.TurnStats{Messages: 1, InputTokens: 5})
		wantErr(t, name+": AddTurnStats", err, store.ErrNotFound)
		_, err = s.AppendMessages(ctx, o, []store.Message{textMsg(store.RoleUser, "injected")})
		wantErr(t, name+": AppendMessages", err, store.ErrNotFound)
		msgs, err := s.ListMessages(ctx, o, 0)
		wantErr(t, name+": ListMessages", err, store.ErrNotFound)
		if len(msgs) != 0 {
			t.Errorf("%s: ListMessages leaked %d messages", name, len(msgs))
		}
		err = s.AcquireLease(ctx, o, "mallory-turn", time.Minute)
		wantErr(t, name+": AcquireLease", err, store.ErrNotFound)
		err = s.RequestAbort(ctx, o)
		wantErr(t, name+": RequestAbort", err, store.ErrNotFound)
		err = s.DeleteSession(ctx, o)
		wantErr(t, name+": DeleteSession", err, store.ErrNotFound)
	}
	list, _, err := s.ListSessions(ctx, p, "mallory", store.Page{Limit: 100})
	noErr(t, "ListSessions(mallory)", err)
	if len(list) != 0 {
		t.Errorf("mallory lists %d sessions of alice", len(list))
	}

	// Alice's session is untouched by all of the above.
	if d := diffSession(orig, get(t, s, k)); d != "" {
		t.Errorf("alice's session changed by other callers: %s", d)
	}
	if msgs := listMsgs(t, s, k, 0); len(msgs) != 1 || msgs[0].Content != "secret plans" {
		t.Errorf("alice's messages changed: %+v", msgs)
	}
	if ab, err := s.AbortRequested(ctx, k); err != nil || ab {
		t.Errorf("alice's abort flag = %v, %v; want false, nil", ab, err)
	}
	noErr(t, "AcquireLease(alice)", s.AcquireLease(ctx, k, "alice-turn", time.Minute))
}

func testListOrder(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var keys []store.Key
	at := map[string]time.Time{}
	for i, off := range []int{0, 1, 2, 3, 3, 3, 4, 5} {
		k := newKey(p, "alice")
		ts := base.Add(time.Duration(off) * time.Second)
		create(t, s, k, func(s *store.Session) {
			s.Title = fmt.Sprintf("s%d", i)
			s.CreatedAt = ts
			s.UpdatedAt = ts
		})
		keys = append(keys, k)
		at[k.ThreadID] = ts
	}
	// Noise that must not show up: another user in the project, and alice in
	// another project.
	create(t, s, newKey(p, "bob"), nil)
	create(t, s, newKey(newProject(), "alice"), nil)

	// Unpinned only: UpdatedAt desc, ThreadID desc, computed from the
	// explicit timestamps alone.
	got, next, err := s.ListSessions(ctx, p, "alice", store.Page{Limit: 100})
	noErr(t, "ListSessions", err)
	if next != "" {
		t.Errorf("NextCursor = %q on the only page, want empty", next)
	}
	want := make([]string, 0, len(keys))
	for _, k := range keys {
		want = append(want, k.ThreadID)
	}
	slices.SortFunc(want, func(a, b string) int {
		if c := at[b].Compare(at[a]); c != 0 {
			return c
		}
		return strings.Compare(b, a)
	})
	if !slices.Equal(threadIDs(got), want) {
		t.Errorf("unpinned order:\n got %v\nwant %v", threadIDs(got), want)
	}
	for i := range got {
		if d := diffSession(get(t, s, got[i].Key()), &got[i]); d != "" {
			t.Errorf("listed session %s differs from GetSession: %s", got[i].ThreadID, d)
		}
		checkSessionTimes(t, &got[i])
	}

	// Pin the oldest and a middle one: they come first.
	for _, i := range []int{0, 4} {
		if _, err := s.SetPinned(ctx, keys[i], true); err != nil {
			t.Fatalf("SetPinned: %v", err)
		}
	}
	got, _, err = s.ListSessions(ctx, p, "alice", store.Page{Limit: 100})
	noErr(t, "ListSessions", err)
	if len(got) != len(keys) {
		t.Fatalf("ListSessions: %d sessions, want %d", len(got), len(keys))
	}
	if !got[0].Pinned || !got[1].Pinned || got[2].Pinned {
		t.Errorf("pinned sessions are not first: pinned flags %v %v %v", got[0].Pinned, got[1].Pinned, got[2].Pinned)
	}
	pinnedFirst := map[string]bool{got[0].ThreadID: true, got[1].ThreadID: true}
	if !pinnedFirst[keys[0].ThreadID] || !pinnedFirst[keys[4].ThreadID] {
		t.Errorf("first two listed are %v, want the pinned %s and %s", threadIDs(got[:2]), keys[0].ThreadID, keys[4].ThreadID)
	}
	if exp := expectedOrder(t, s, keys); !slices.Equal(threadIDs(got), exp) {
		t.Errorf("order with pins:\n got %v\nwant %v", threadIDs(got), exp)
	}

	// A rename moves a session to the top of the unpinned ones.
	if _, err := s.RenameSession(ctx, keys[1], "renamed"); err != nil {
		t.Fatalf("RenameSession: %v", err)
	}
	got, _, err = s.ListSessions(ctx, p, "alice", store.Page{Limit: 100})
	noErr(t, "ListSessions", err)
	if len(got) != len(keys) || got[2].ThreadID != keys[1].ThreadID {
		t.Errorf("after rename, third listed = %v, want the renamed %s", threadIDs(got), keys[1].ThreadID)
	}
	if exp := expectedOrder(t, s, keys); !slices.Equal(threadIDs(got), exp) {
		t.Errorf("order after rename:\n got %v\nwant %v", threadIDs(got), exp)
	}

	// A user with no sessions gets an empty page and no cursor.
	none, next, err := s.ListSessions(ctx, p, "nobody", store.Page{Limit: 10})
	noErr(t, "ListSessions(nobody)", err)
	if len(none) != 0 || next != "" {
		t.Errorf("ListSessions(nobody) = %d sessions, cursor %q; want none", len(none), next)
	}
}

func testListPagination(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	base := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	var keys []store.Key
	for i := range 23 {
		k := newKey(p, "alice")
		ts := base.Add(time.Duration(i/3) * time.Minute) // groups of three ties
		create(t, s, k, func(s *store.Session) { s.CreatedAt, s.UpdatedAt = ts, ts })
		keys = append(keys, k)
	}
	for i := 0; i < len(keys); i += 3 { // 8 pinned: they span page boundaries
		if _, err := s.SetPinned(ctx, keys[i], true); err != nil {
			t.Fatalf("SetPinned: %v", err)
		}
	}
	for range 4 {
		create(t, s, newKey(p, "bob"), nil)
	}
	exp := expectedOrder(t, s, keys)

	for _, limit := range []int{1, 5, 7, 23, 1000} {
		got := threadIDs(listAll(t, s, p, "alice", limit))
		seen := map[string]bool{}
		for _, id := range got {
			if seen[id] {
				t.Errorf("limit %d: session %s listed twice", limit, id)
			}
			seen[id] = true
		}
		if !slices.Equal(got, exp) {
			t.Errorf("limit %d: pages give\n %v\nwant\n %v", limit, got, exp)
		}
	}

	// A page of exactly the remaining sessions is the last one.
	first, next, err := s.ListSessions(ctx, p, "alice", store.Page{Limit: 20})
	noErr(t, "ListSessions(limit 20)", err)
	if len(first) != 20 || next == "" {
		t.Fatalf("first page: %d sessions, cursor %q; want 20 and a cursor", len(first), next)
	}
	rest, next2, err := s.ListSessions(ctx, p, "alice", store.Page{Limit: 3, Cursor: next})
	noErr(t, "ListSessions(limit 3, cursor)", err)
	if len(rest) != 3 || next2 != "" {
		t.Errorf("second page: %d sessions, cursor %q; want 3 and no cursor", len(rest), next2)
	}
}

func testListInvalidCursor(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	for range 3 {
		create(t, s, newKey(p, "alice"), nil)
	}
	_, valid, err := s.ListSessions(ctx, p, "alice", store.Page{Limit: 1})
	noErr(t, "ListSessions", err)
	if valid == "" {
		t.Fatal("ListSessions(limit 1 of 3) returned no cursor")
	}
	for _, c := range []string{"!!!!", "%%%not base64%%%", "AAAA", "zzzz-not-a-cursor", valid[:len(valid)/2], "a"} {
		_, _, err := s.ListSessions(ctx, p, "alice", store.Page{Limit: 10, Cursor: c})
		wantErr(t, fmt.Sprintf("ListSessions(cursor %q)", c), err, store.ErrInvalidCursor)
	}
}

// Copilot modes used by testListCopilotMode; the store treats them as
// opaque strings.
const (
	modeTeaching   = "teaching_assistant"
	modeAutomation = "lab_automation_assistant"
)

func testListCopilotMode(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	base := time.Date(2025, 7, 1, 8, 0, 0, 0, time.UTC)
	// 30 sessions of alice: the automation ones are few and far apart (a
	// run of 12 others between the first two), the teaching ones every
	// third; the others have no mode in many ways. Pairs share updated_at,
	// so ties are broken by thread id across page boundaries.
	metadataOf := func(i int) map[string]any {
		switch {
		case i == 2 || i == 15 || i == 16 || i == 29:
			return map[string]any{store.MetadataCopilotMode: modeAutomation, "client": "web"}
		case i%3 == 0:
			return map[string]any{store.MetadataCopilotMode: modeTeaching}
		}
		switch i % 5 {
		case 0:
			return nil
		case 1:
			return map[string]any{"client": "web"}
		case 2:
			return map[string]any{store.MetadataCopilotMode: 1.0} // not a string: no mode
		case 3:
			return map[string]any{store.MetadataCopilotMode: modeTeaching + "_v2"}
		}
		return map[string]any{store.MetadataCopilotMode: ""}
	}
	pinned := map[int]bool{1: true, 6: true, 16: true, 20: true, 27: true}
	byMode := map[string][]store.Key{}
	var all []store.Key
	for i := range 30 {
		k := newKey(p, "alice")
		ts := base.Add(time.Duration(i/2) * time.Minute)
		sess := &store.Session{ProjectID: p, UserID: "alice", ThreadID: k.ThreadID,
			Metadata: metadataOf(i), CreatedAt: ts, UpdatedAt: ts}
		if i%4 == 1 { // the runtime creates sessions leased
			noErr(t, "CreateLeasedSession", s.CreateLeasedSession(ctx, sess, "turn", time.Minute))
		} else {
			noErr(t, "CreateSession", s.CreateSession(ctx, sess))
		}
		if pinned[i] {
			if _, err := s.SetPinned(ctx, k, true); err != nil {
				t.Fatalf("SetPinned: %v", err)
			}
		}
		byMode[sess.CopilotMode()] = append(byMode[sess.CopilotMode()], k)
		all = append(all, k)
	}
	if len(byMode[modeAutomation]) != 4 || len(byMode[modeTeaching]) != 9 {
		t.Fatalf("setup: %d automation and %d teaching sessions, want 4 and 9", len(byMode[modeAutomation]), len(byMode[modeTeaching]))
	}
	// Noise that must never show up: bob in the project and alice in
	// another project, in both modes.
	other := newProject()
	var bobTeaching []store.Key
	for _, m := range []string{modeTeaching, modeAutomation, modeTeaching} {
		kb, ko := newKey(p, "bob"), newKey(other, "alice")
		for _, k := range []store.Key{kb, ko} {
			create(t, s, k, func(s *store.Session) { s.Metadata = map[string]any{store.MetadataCopilotMode: m} })
		}
		if m == modeTeaching {
			bobTeaching = append(bobTeaching, kb)
		}
	}

	check := func(t *testing.T, phase string) {
		t.Helper()
		tests := []struct {
			name   string
			user   string
			mode   string
			limits []int
			want   []store.Key
		}{
			{"automation", "alice", modeAutomation, []int{1, 2, 3, 1000}, byMode[modeAutomation]},
			{"teaching", "alice", modeTeaching, []int{1, 2, 3, 9, 10}, byMode[modeTeaching]},
			{"prefix of a mode", "alice", "teaching", []int{1, 3}, nil},
			{"longer mode", "alice", modeTeaching + "_v2", []int{1, 2}, byMode[modeTeaching+"_v2"]},
			{"unknown mode", "alice", "no_such_mode", []int{1, 1000}, nil},
			{"no filter", "alice", "", []int{2, 7}, all},
			{"other user", "bob", modeTeaching, []int{1, 2}, bobTeaching},
			{"user without sessions", "carol", modeTeaching, []int{1}, nil},
		}
		for _, tc := range tests {
			exp := expectedOrder(t, s, tc.want)
			for _, limit := range tc.limits {
				got := listPages(t, s, p, tc.user, store.Page{Limit: limit, CopilotMode: tc.mode})
				if ids := threadIDs(got); !slices.Equal(ids, exp) {
					t.Errorf("%s: %s, limit %d: pages give\n %v\nwant\n %v", phase, tc.name, limit, ids, exp)
				}
				for i := range got {
					if tc.mode != "" && got[i].CopilotMode() != tc.mode {
						t.Errorf("%s: %s, limit %d: listed %s has mode %q", phase, tc.name, limit, got[i].ThreadID, got[i].CopilotMode())
					}
					if got[i].ProjectID != p || got[i].UserID != tc.user {
						t.Errorf("%s: %s: listed a session of %s in %s", phase, tc.name, got[i].UserID, got[i].ProjectID)
					}
				}
			}
		}
	}
	t.Run("created", func(t *testing.T) { check(t, "after create") })

	// Updates keep the mode: a turn moves an automation session and a
	// session without mode to the top of the unpinned ones, a rename and
	// an unpin move others, and the filtered listings follow.
	auto := byMode[modeAutomation]
	noErr(t, "AddTurnStats", s.AddTurnStats(ctx, auto[0], store.TurnStats{Messages: 2, LLMCalls: 1, Turns: 1}))
	noErr(t, "AddTurnStats", s.AddTurnStats(ctx, byMode[""][0], store.TurnStats{Messages: 2, Turns: 1}))
	if _, err := s.RenameSession(ctx, byMode[modeTeaching][2], "renamed"); err != nil {
		t.Fatalf("RenameSession: %v", err)
	}
	if _, err := s.SetPinned(ctx, auto[2], false); err != nil { // auto[2] is i=16, pinned
		t.Fatalf("SetPinned(false): %v", err)
	}
	t.Run("updated", func(t *testing.T) { check(t, "after updates") })

	// A cursor of a filtered page, with the same filter and another limit,
	// gives exactly the rest, also once the session it was taken from is
	// gone.
	exp := expectedOrder(t, s, auto)
	first, next, err := s.ListSessions(ctx, p, "alice", store.Page{Limit: 1, CopilotMode: modeAutomation})
	noErr(t, "ListSessions(automation, limit 1)", err)
	if len(first) != 1 || first[0].ThreadID != exp[0] || next == "" {
		t.Fatalf("first automation page: %v, cursor %q; want [%s] and a cursor", threadIDs(first), next, exp[0])
	}
	noErr(t, "DeleteSession", s.DeleteSession(ctx, first[0].Key()))
	rest, next, err := s.ListSessions(ctx, p, "alice", store.Page{Limit: 1000, Cursor: next, CopilotMode: modeAutomation})
	noErr(t, "ListSessions(automation, cursor)", err)
	if ids := threadIDs(rest); !slices.Equal(ids, exp[1:]) || next != "" {
		t.Errorf("automation listing resumed from a cursor: %v, cursor %q; want %v and no cursor", ids, next, exp[1:])
	}
}

func testRename(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	past := time.Now().Add(-time.Hour).UTC()
	k := newKey(p, "alice")
	create(t, s, k, func(s *store.Session) { s.CreatedAt, s.UpdatedAt = past, past })

	got, err := s.RenameSession(ctx, k, "My routing lab ✓")
	noErr(t, "RenameSession", err)
	if got.Title != "My routing lab ✓" || !got.TitleSetByUser {
		t.Errorf("RenameSession returned title %q (by user %v)", got.Title, got.TitleSetByUser)
	}
	if !got.UpdatedAt.After(past.Add(time.Millisecond)) {
		t.Errorf("RenameSession: UpdatedAt = %v, want bumped past %v", got.UpdatedAt, past)
	}
	if !timeEq(got.CreatedAt, past) {
		t.Errorf("RenameSession changed CreatedAt to %v", got.CreatedAt)
	}
	checkSessionTimes(t, got)
	if d := diffSession(got, get(t, s, k)); d != "" {
		t.Errorf("RenameSession result differs from GetSession: %s", d)
	}

	_, err = s.RenameSession(ctx, newKey(p, "alice"), "x")
	wantErr(t, "RenameSession(unknown)", err, store.ErrNotFound)
}

func testGeneratedTitle(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	k := newKey(p, "alice")
	create(t, s, k, nil)

	ok, err := s.SetGeneratedTitle(ctx, k, "OSPF between R1 and R2")
	noErr(t, "SetGeneratedTitle", err)
	if !ok {
		t.Error("SetGeneratedTitle on a fresh session reported not written")
	}
	if got := get(t, s, k); got.Title != "OSPF between R1 and R2" || got.TitleSetByUser {
		t.Errorf("after generated title: %q (by user %v)", got.Title, got.TitleSetByUser)
	}
	ok, err = s.SetGeneratedTitle(ctx, k, "Second generated")
	noErr(t, "SetGeneratedTitle again", err)
	if !ok || get(t, s, k).Title != "Second generated" {
		t.Errorf("a generated title must replace a generated title (written=%v)", ok)
	}

	_, err = s.RenameSession(ctx, k, "Mine")
	noErr(t, "RenameSession", err)
	ok, err = s.SetGeneratedTitle(ctx, k, "Generated after rename")
	noErr(t, "SetGeneratedTitle after rename", err)
	if ok {
		t.Error("SetGeneratedTitle after a user rename reported written")
	}
	if got := get(t, s, k); got.Title != "Mine" || !got.TitleSetByUser {
		t.Errorf("user title overwritten: %q (by user %v)", got.Title, got.TitleSetByUser)
	}

	_, err = s.SetGeneratedTitle(ctx, newKey(p, "alice"), "x")
	wantErr(t, "SetGeneratedTitle(unknown)", err, store.ErrNotFound)
}

func testPin(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	k := newKey(p, "alice")
	create(t, s, k, func(s *store.Session) { s.Title = "keep" })
	for _, want := range []bool{true, true, false, false, true} {
		got, err := s.SetPinned(ctx, k, want)
		noErr(t, "SetPinned", err)
		if got.Pinned != want {
			t.Errorf("SetPinned(%v) returned Pinned=%v", want, got.Pinned)
		}
		if got.Title != "keep" || got.ThreadID != k.ThreadID {
			t.Errorf("SetPinned returned session %q / %q", got.ThreadID, got.Title)
		}
		if g := get(t, s, k); g.Pinned != want {
			t.Errorf("after SetPinned(%v), GetSession Pinned=%v", want, g.Pinned)
		}
	}
	_, err := s.SetPinned(ctx, newKey(p, "alice"), true)
	wantErr(t, "SetPinned(unknown)", err, store.ErrNotFound)
}

func testAddTurnStats(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	past := time.Now().Add(-time.Hour).UTC()
	k := newKey(p, "alice")
	create(t, s, k, func(s *store.Session) { s.CreatedAt, s.UpdatedAt = past, past })

	last1 := time.Now().Add(-30 * time.Minute).UTC()
	noErr(t, "AddTurnStats 1", s.AddTurnStats(ctx, k, store.TurnStats{
		Messages: 2, LLMCalls: 1, InputTokens: 100, OutputTokens: 40,
		ToolCalls: map[string]int64{"gns3_list_nodes": 1, "gns3.start-node v2": 2},
		Errors:    1, Turns: 1, LastMessageAt: last1,
	}))
	got := get(t, s, k)
	if !got.UpdatedAt.After(past.Add(time.Millisecond)) {
		t.Errorf("AddTurnStats did not bump UpdatedAt: %v", got.UpdatedAt)
	}
	noErr(t, "AddTurnStats 2", s.AddTurnStats(ctx, k, store.TurnStats{
		Messages: 3, LLMCalls: 2, InputTokens: 7, OutputTokens: 5,
		ToolCalls:    map[string]int64{"gns3.start-node v2": 3, "seerr_search": 1},
		AbortedTurns: 1, Turns: 1,
	}))
	got = get(t, s, k)
	want := &store.Session{
		ThreadID: k.ThreadID, UserID: k.UserID, ProjectID: k.ProjectID, Title: store.DefaultTitle,
		MessageCount: 5, LLMCallsCount: 3, InputTokens: 107, OutputTokens: 45, TotalTokens: 152,
		Stats: store.Stats{
			ToolCalls:    map[string]int64{"gns3_list_nodes": 1, "gns3.start-node v2": 5, "seerr_search": 1},
			Errors:       1,
			AbortedTurns: 1,
			Turns:        2,
		},
		LastMessageAt: last1, // a zero LastMessageAt in a delta leaves it alone
		CreatedAt:     past,
		UpdatedAt:     got.UpdatedAt,
	}
	if d := diffSession(want, got); d != "" {
		t.Errorf("after two AddTurnStats: %s", d)
	}
	checkSessionTimes(t, got)

	last2 := time.Now().UTC()
	noErr(t, "AddTurnStats 3", s.AddTurnStats(ctx, k, store.TurnStats{LastMessageAt: last2}))
	if got := get(t, s, k); !timeEq(got.LastMessageAt, last2) || got.MessageCount != 5 {
		t.Errorf("after LastMessageAt-only delta: LastMessageAt=%v MessageCount=%d, want %v and 5", got.LastMessageAt, got.MessageCount, last2)
	}

	// Appending messages does not touch the counters: the runtime reports
	// them once per turn through AddTurnStats.
	appendMsgs(t, s, k, textMsg(store.RoleUser, "a"), textMsg(store.RoleAssistant, "b"))
	if got := get(t, s, k); got.MessageCount != 5 || got.LLMCallsCount != 3 {
		t.Errorf("AppendMessages changed counters: MessageCount=%d LLMCallsCount=%d, want 5 and 3", got.MessageCount, got.LLMCallsCount)
	}

	err := s.AddTurnStats(ctx, newKey(p, "alice"), store.TurnStats{Turns: 1})
	wantErr(t, "AddTurnStats(unknown)", err, store.ErrNotFound)
}

func testConcurrentAddTurnStats(t *testing.T, s store.Store) {
	p := newProject()
	k := newKey(p, "alice")
	create(t, s, k, nil)
	const workers, each = 20, 5
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				err := s.AddTurnStats(context.Background(), k, store.TurnStats{
					Messages: 1, LLMCalls: 2, InputTokens: 3, OutputTokens: 4,
					ToolCalls: map[string]int64{"x": 1, fmt.Sprintf("w%d", w%4): 2},
					Errors:    1, AbortedTurns: 1, Turns: 1,
				})
				if err != nil {
					t.Errorf("worker %d AddTurnStats %d: %v", w, i, err)
				}
			}
		})
	}
	wg.Wait()
	n := int64(workers * each)
	got := get(t, s, k)
	want := &store.Session{
		ThreadID: k.ThreadID, UserID: k.UserID, ProjectID: k.ProjectID, Title: store.DefaultTitle,
		MessageCount: n, LLMCallsCount: 2 * n, InputTokens: 3 * n, OutputTokens: 4 * n, TotalTokens: 7 * n,
		Stats: store.Stats{
			ToolCalls:    map[string]int64{"x": n, "w0": n / 2, "w1": n / 2, "w2": n / 2, "w3": n / 2},
			Errors:       n,
			AbortedTurns: n,
			Turns:        n,
		},
		CreatedAt: got.CreatedAt, UpdatedAt: got.UpdatedAt,
	}
	if d := diffSession(want, got); d != "" {
		t.Errorf("after %d concurrent AddTurnStats: %s", n, d)
	}
}

// ---- messages ----

func testMessagesRoundTrip(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	k := newKey(p, "alice")
	create(t, s, k, nil)

	at := time.Date(2025, 4, 5, 6, 7, 8, 9_000_000, time.UTC)
	in := []store.Message{
		{ID: "m-user", Role: store.RoleUser, Content: "Start R1 and \"R2\"\nthen ping ✓ 🚀", CreatedAt: at,
			Metadata: map[string]any{"client": "web", "n": 2.0, "flags": []any{"a", true}, "nested": map[string]any{"x": "y"}}},
		{Role: store.RoleAssistant, Content: "", ToolCalls: []store.ToolCall{
			{ID: "call_1", Type: "function", Function: store.FunctionCall{Name: "gns3_start_node", Arguments: `{"node":"R1"}`}},
			{ID: "call_2", Type: "function", Function: store.FunctionCall{Name: "gns3_start_node", Arguments: `{"node":"R2"}`}},
		}},
		{Role: store.RoleTool, Name: "gns3_start_node", ToolCallID: "call_1", Content: `{"status":"started"}`},
		{Role: store.RoleTool, Name: "gns3_start_node", ToolCallID: "call_2", Content: `{"status":"started"}`},
		{Role: store.RoleAssistant, Content: "Both nodes are running."},
		{Role: store.RoleSystem, Content: "system note"},
	}
	before := time.Now()
	ret := appendMsgs(t, s, k, in...)
	after := time.Now()

	ids := map[string]bool{}
	for i, m := range ret {
		if d := diffMessage(in[i], m); d != "" {
			t.Errorf("AppendMessages result %d: %s", i, d)
		}
		if m.ID == "" {
			t.Errorf("AppendMessages result %d: empty ID not filled", i)
		}
		if ids[m.ID] {
			t.Errorf("AppendMessages result %d: duplicate ID %q", i, m.ID)
		}
		ids[m.ID] = true
		if i > 0 && m.Seq <= ret[i-1].Seq {
			t.Errorf("AppendMessages result %d: Seq %d not above %d", i, m.Seq, ret[i-1].Seq)
		}
		if m.CreatedAt.IsZero() {
			t.Errorf("AppendMessages result %d: zero CreatedAt not filled", i)
		} else if in[i].CreatedAt.IsZero() && (m.CreatedAt.Before(before.Add(-time.Minute)) || m.CreatedAt.After(after.Add(time.Minute))) {
			t.Errorf("AppendMessages result %d: CreatedAt %v, want about now", i, m.CreatedAt)
		}
		checkUTC(t, "Message.CreatedAt", m.CreatedAt)
	}
	if ret[0].ID != "m-user" {
		t.Errorf("explicit ID replaced by %q", ret[0].ID)
	}

	got := listMsgs(t, s, k, 0)
	if len(got) != len(ret) {
		t.Fatalf("ListMessages: %d messages, want %d", len(got), len(ret))
	}
	for i := range got {
		if got[i].Seq != ret[i].Seq {
			t.Errorf("message %d: listed Seq %d, appended Seq %d", i, got[i].Seq, ret[i].Seq)
		}
		if got[i].ID != ret[i].ID {
			t.Errorf("message %d: listed ID %q, appended ID %q", i, got[i].ID, ret[i].ID)
		}
		if d := diffMessage(ret[i], got[i]); d != "" {
			t.Errorf("message %d round trip: %s", i, d)
		}
		checkUTC(t, "Message.CreatedAt", got[i].CreatedAt)
	}

	// A second append continues the sequence.
	more := appendMsgs(t, s, k, textMsg(store.RoleUser, "next"))
	if more[0].Seq <= ret[len(ret)-1].Seq {
		t.Errorf("second append Seq %d not above %d", more[0].Seq, ret[len(ret)-1].Seq)
	}

	_, err := s.AppendMessages(ctx, newKey(p, "alice"), []store.Message{textMsg(store.RoleUser, "x")})
	wantErr(t, "AppendMessages(unknown)", err, store.ErrNotFound)
	_, err = s.ListMessages(ctx, newKey(p, "alice"), 0)
	wantErr(t, "ListMessages(unknown)", err, store.ErrNotFound)
}

func testListMessagesLastN(t *testing.T, s store.Store) {
	p := newProject()
	k := newKey(p, "alice")
	create(t, s, k, nil)
	if got := listMsgs(t, s, k, 0); len(got) != 0 {
		t.Errorf("new session has %d messages", len(got))
	}
	var all []string
	for b, n := range []int{4, 1, 5} {
		var batch []store.Message
		for i := range n {
			c := fmt.Sprintf("b%d-m%d", b, i)
			batch = append(batch, textMsg(store.RoleUser, c))
			all = append(all, c)
		}
		appendMsgs(t, s, k, batch...)
	}
	contents := func(ms []store.Message) []string {
		out := make([]string, len(ms))
		for i, m := range ms {
			out[i] = m.Content
		}
		return out
	}
	for _, tc := range []struct {
		limit int
		want  []string
	}{
		{0, all}, {-1, all}, {100, all}, {10, all}, {9, all[1:]}, {3, all[7:]}, {1, all[9:]},
	} {
		got := listMsgs(t, s, k, tc.limit)
		if !slices.Equal(contents(got), tc.want) {
			t.Errorf("ListMessages(limit %d) = %v, want %v", tc.limit, contents(got), tc.want)
		}
		for i := 1; i < len(got); i++ {
			if got[i].Seq <= got[i-1].Seq {
				t.Errorf("ListMessages(limit %d): Seq not increasing at %d", tc.limit, i)
			}
		}
	}
}

func testConcurrentAppends(t *testing.T, s store.Store) {
	p := newProject()
	k := newKey(p, "alice")
	create(t, s, k, nil)
	const workers, each = 20, 10
	returned := make([][]store.Message, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				got, err := s.AppendMessages(context.Background(), k, []store.Message{textMsg(store.RoleUser, fmt.Sprintf("w%02d-%02d", w, i))})
				if err != nil {
					t.Errorf("worker %d append %d: %v", w, i, err)
					return
				}
				if len(got) != 1 {
					t.Errorf("worker %d append %d: %d messages returned", w, i, len(got))
					return
				}
				returned[w] = append(returned[w], got[0])
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	got := listMsgs(t, s, k, 0)
	if len(got) != workers*each {
		t.Fatalf("ListMessages: %d messages after %d appends", len(got), workers*each)
	}
	seqOf := map[string]int64{}
	for i, m := range got {
		if i > 0 && m.Seq <= got[i-1].Seq {
			t.Errorf("Seq not strictly increasing at %d: %d after %d", i, m.Seq, got[i-1].Seq)
		}
		if _, dup := seqOf[m.Content]; dup {
			t.Errorf("message %q stored twice", m.Content)
		}
		seqOf[m.Content] = m.Seq
	}
	for w := range workers {
		prev := int64(-1 << 62)
		for i, r := range returned[w] {
			seq, ok := seqOf[r.Content]
			switch {
			case !ok:
				t.Errorf("message %q lost", r.Content)
			case seq != r.Seq:
				t.Errorf("message %q: appended with Seq %d, listed with %d", r.Content, r.Seq, seq)
			case seq <= prev:
				t.Errorf("worker %d message %d: Seq %d not above its previous append %d", w, i, seq, prev)
			}
			prev = seq
		}
	}
}

func testAppendAllOrNothing(t *testing.T, s store.Store) {
	p := newProject()
	k := newKey(p, "alice")
	create(t, s, k, nil)
	const writers, batches, size = 2, 10, 4
	done := make(chan struct{})
	var readers sync.WaitGroup
	for r := range 2 {
		readers.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				got, err := s.ListMessages(context.Background(), k, 0)
				if err != nil {
					t.Errorf("reader %d: ListMessages: %v", r, err)
					return
				}
				if msg := checkBatches(got, size); msg != "" {
					t.Errorf("reader %d read %d: %s", r, n, msg)
					return
				}
			}
		})
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for b := range batches {
				batch := make([]store.Message, size)
				for m := range size {
					batch[m] = textMsg(store.RoleAssistant, fmt.Sprintf("w%d-b%02d-m%d", w, b, m))
				}
				if _, err := s.AppendMessages(context.Background(), k, batch); err != nil {
					t.Errorf("writer %d batch %d: %v", w, b, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(done)
	readers.Wait()
	got := listMsgs(t, s, k, 0)
	if len(got) != writers*batches*size {
		t.Errorf("final: %d messages, want %d", len(got), writers*batches*size)
	}
	if msg := checkBatches(got, size); msg != "" {
		t.Errorf("final: %s", msg)
	}
}

// checkBatches verifies that msgs is a whole number of contiguous batches of
// the given size with increasing Seq ("" when it is).
func checkBatches(msgs []store.Message, size int) string {
	if len(msgs)%size != 0 {
		return fmt.Sprintf("saw %d messages, not a multiple of the batch size %d: a partial append is visible", len(msgs), size)
	}
	for i, m := range msgs {
		if i > 0 && m.Seq <= msgs[i-1].Seq {
			return fmt.Sprintf("Seq not increasing at %d", i)
		}
		first := msgs[i-i%size].Content
		want := fmt.Sprintf("%s%d", first[:len(first)-1], i%size)
		if m.Content != want {
			return fmt.Sprintf("message %d is %q, want %q: batches interleaved or incomplete", i, m.Content, want)
		}
	}
	return ""
}

func testLargeContent(t *testing.T, s store.Store) {
	p := newProject()
	k := newKey(p, "alice")
	create(t, s, k, nil)

	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "line %06d: interface GigabitEthernet0/%d is up — débit ✓\n", i, i%48)
	}
	big := b.String()[:1<<20]
	for !utf8.ValidString(big) { // cut on a rune boundary
		big = big[:len(big)-1]
	}
	ret := appendMsgs(t, s, k,
		textMsg(store.RoleUser, "show interfaces"),
		store.Message{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{ID: "call_big", Type: "function", Function: store.FunctionCall{Name: "console", Arguments: `{"cmd":"show int"}`}}}},
		store.Message{Role: store.RoleTool, Name: "console", ToolCallID: "call_big", Content: big},
	)
	appendMsgs(t, s, k, textMsg(store.RoleAssistant, "All interfaces are up."))

	check := func(what string, got store.Message) {
		t.Helper()
		if got.Role != store.RoleTool || got.ToolCallID != "call_big" || got.Name != "console" {
			t.Errorf("%s: big message fields changed: role %q, tool_call_id %q, name %q", what, got.Role, got.ToolCallID, got.Name)
		}
		c := got.Content
		if c == big {
			return
		}
		idx := strings.LastIndex(c, "[truncated")
		if idx < 0 || len(c)-idx > 256 {
			t.Errorf("%s: content of %d bytes differs from the %d bytes stored and has no trailing \"[truncated\" marker", what, len(c), len(big))
			return
		}
		common := 0
		for common < idx && c[common] == big[common] {
			common++
		}
		if common < idx-16 || common < 1024 {
			t.Errorf("%s: truncated content is not a prefix of the original (first difference at byte %d of %d)", what, common, idx)
		}
		if !utf8.ValidString(c) {
			t.Errorf("%s: truncated content is not valid UTF-8", what)
		}
	}
	all := listMsgs(t, s, k, 0)
	if len(all) != 4 {
		t.Fatalf("ListMessages: %d messages, want 4", len(all))
	}
	check("ListMessages(all)", all[2])
	if all[2].Seq != ret[2].Seq {
		t.Errorf("big message Seq: listed %d, appended %d", all[2].Seq, ret[2].Seq)
	}
	if all[0].Content != "show interfaces" || all[3].Content != "All interfaces are up." || len(all[1].ToolCalls) != 1 {
		t.Errorf("messages around the big one changed: %q, %d tool calls, %q", all[0].Content, len(all[1].ToolCalls), all[3].Content)
	}
	last2 := listMsgs(t, s, k, 2)
	if len(last2) != 2 || last2[1].Content != "All interfaces are up." {
		t.Fatalf("ListMessages(2): %d messages", len(last2))
	}
	check("ListMessages(2)", last2[0])
}

// ---- leases and abort ----

func testLease(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	k := newKey(p, "alice")
	create(t, s, k, nil)

	noErr(t, "AcquireLease(A)", s.AcquireLease(ctx, k, "A", time.Minute))
	wantErr(t, "AcquireLease(B) while A holds", s.AcquireLease(ctx, k, "B", time.Minute), store.ErrLeaseHeld)
	noErr(t, "AcquireLease(A) again by its owner", s.AcquireLease(ctx, k, "A", time.Minute))
	noErr(t, "RenewLease(A)", s.RenewLease(ctx, k, "A", time.Minute))
	wantErr(t, "RenewLease(B) not held", s.RenewLease(ctx, k, "B", time.Minute), store.ErrLeaseLost)

	noErr(t, "ReleaseLease(B) not held", s.ReleaseLease(ctx, k, "B"))
	wantErr(t, "AcquireLease(B) after B's no-op release", s.AcquireLease(ctx, k, "B", time.Minute), store.ErrLeaseHeld)

	noErr(t, "ReleaseLease(A)", s.ReleaseLease(ctx, k, "A"))
	wantErr(t, "RenewLease(A) after release", s.RenewLease(ctx, k, "A", time.Minute), store.ErrLeaseLost)
	noErr(t, "ReleaseLease(A) twice", s.ReleaseLease(ctx, k, "A"))
	noErr(t, "AcquireLease(B) after A released", s.AcquireLease(ctx, k, "B", time.Minute))
	wantErr(t, "AcquireLease(A) while B holds", s.AcquireLease(ctx, k, "A", time.Minute), store.ErrLeaseHeld)

	// Leases are per session.
	k2 := newKey(p, "alice")
	create(t, s, k2, nil)
	noErr(t, "AcquireLease(A) on another session", s.AcquireLease(ctx, k2, "A", time.Minute))

	// Acquiring clears the abort flag.
	noErr(t, "ReleaseLease(B)", s.ReleaseLease(ctx, k, "B"))
	noErr(t, "RequestAbort", s.RequestAbort(ctx, k))
	if ab, err := s.AbortRequested(ctx, k); err != nil || !ab {
		t.Fatalf("AbortRequested after RequestAbort = %v, %v", ab, err)
	}
	noErr(t, "AcquireLease(C)", s.AcquireLease(ctx, k, "C", time.Minute))
	if ab, err := s.AbortRequested(ctx, k); err != nil || ab {
		t.Errorf("AbortRequested after AcquireLease = %v, %v; want false", ab, err)
	}
	// ... but a failed acquire does not.
	noErr(t, "RequestAbort while C holds", s.RequestAbort(ctx, k))
	wantErr(t, "AcquireLease(D) while C holds", s.AcquireLease(ctx, k, "D", time.Minute), store.ErrLeaseHeld)
	if ab, err := s.AbortRequested(ctx, k); err != nil || !ab {
		t.Errorf("AbortRequested after a refused AcquireLease = %v, %v; want true", ab, err)
	}

	wantErr(t, "AcquireLease(unknown)", s.AcquireLease(ctx, newKey(p, "alice"), "A", time.Minute), store.ErrNotFound)
}

// acquireEventually polls AcquireLease until it succeeds; every refusal
// must be ErrLeaseHeld. The deadline is generous: only eventual success is
// asserted, never how long it took.
func acquireEventually(t *testing.T, s store.Store, k store.Key, owner string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := s.AcquireLease(t.Context(), k, owner, time.Minute)
		if err == nil {
			return
		}
		if !errors.Is(err, store.ErrLeaseHeld) {
			t.Fatalf("AcquireLease(%s) while waiting for expiry: %v, want nil or ErrLeaseHeld", owner, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("AcquireLease(%s): the expired lease was never released (last error %v)", owner, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func testLeaseExpiry(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	k := newKey(p, "alice")
	create(t, s, k, nil)

	noErr(t, "AcquireLease(A, 50ms)", s.AcquireLease(ctx, k, "A", 50*time.Millisecond))
	acquireEventually(t, s, k, "B")
	wantErr(t, "RenewLease(A) after B took the expired lease", s.RenewLease(ctx, k, "A", time.Minute), store.ErrLeaseLost)
	noErr(t, "ReleaseLease(A) after losing it", s.ReleaseLease(ctx, k, "A"))
	wantErr(t, "AcquireLease(C) while B holds", s.AcquireLease(ctx, k, "C", time.Minute), store.ErrLeaseHeld)

	// Renewing sets the expiry to now+ttl: a short renewal lets the lease
	// expire.
	noErr(t, "RenewLease(B, 50ms)", s.RenewLease(ctx, k, "B", 50*time.Millisecond))
	acquireEventually(t, s, k, "C")
	wantErr(t, "RenewLease(B) after C took it", s.RenewLease(ctx, k, "B", time.Minute), store.ErrLeaseLost)
	noErr(t, "RenewLease(C)", s.RenewLease(ctx, k, "C", time.Minute))
}

// clockOf returns the clock of a store made by WithClock.
func clockOf(t *testing.T, s store.Store) *Clock {
	t.Helper()
	c, ok := s.(clocked)
	if !ok {
		t.Fatalf("store %T was not returned through storetest.WithClock: the suite cannot move its time", s)
	}
	return c.clock
}

// testAbortGrace: a holder that does not react to an abort within
// store.AbortGrace is considered dead and loses its unexpired lease.
func testAbortGrace(t *testing.T, s store.Store) {
	ctx := t.Context()
	clock := clockOf(t, s)
	p := newProject()
	k := newKey(p, "alice")
	create(t, s, k, nil)

	noErr(t, "AcquireLease(A)", s.AcquireLease(ctx, k, "A", time.Hour))
	noErr(t, "RequestAbort", s.RequestAbort(ctx, k))
	wantErr(t, "AcquireLease(B) just after the abort request", s.AcquireLease(ctx, k, "B", time.Hour), store.ErrLeaseHeld)
	if ab, err := s.AbortRequested(ctx, k); err != nil || !ab {
		t.Errorf("AbortRequested after a refused AcquireLease = %v, %v; want true", ab, err)
	}
	// A live holder renews and keeps its lease within the grace.
	noErr(t, "RenewLease(A) within the grace", s.RenewLease(ctx, k, "A", time.Hour))

	clock.Advance(store.AbortGrace + time.Second)
	noErr(t, "AcquireLease(B) after the grace", s.AcquireLease(ctx, k, "B", time.Hour))
	if ab, err := s.AbortRequested(ctx, k); err != nil || ab {
		t.Errorf("AbortRequested after B took the lease = %v, %v; want false", ab, err)
	}
	wantErr(t, "RenewLease(A) after B took the lease", s.RenewLease(ctx, k, "A", time.Hour), store.ErrLeaseLost)
	noErr(t, "ReleaseLease(A) after losing it", s.ReleaseLease(ctx, k, "A"))
	wantErr(t, "AcquireLease(C) while B holds", s.AcquireLease(ctx, k, "C", time.Hour), store.ErrLeaseHeld)
	noErr(t, "RenewLease(B)", s.RenewLease(ctx, k, "B", time.Hour))

	// The request time was cleared with the flag: a new request starts a
	// new grace, and the grace applies to a lease held from creation too.
	clock.Advance(store.AbortGrace + time.Second)
	wantErr(t, "AcquireLease(C) long after the cleared request", s.AcquireLease(ctx, k, "C", time.Hour), store.ErrLeaseHeld)
	noErr(t, "RequestAbort while B holds", s.RequestAbort(ctx, k))
	wantErr(t, "AcquireLease(C) just after the new request", s.AcquireLease(ctx, k, "C", time.Hour), store.ErrLeaseHeld)
	clock.Advance(store.AbortGrace + time.Second)
	noErr(t, "AcquireLease(C) after the new grace", s.AcquireLease(ctx, k, "C", time.Hour))
	wantErr(t, "RenewLease(B) after C took the lease", s.RenewLease(ctx, k, "B", time.Hour), store.ErrLeaseLost)

	k2 := newKey(p, "alice")
	noErr(t, "CreateLeasedSession(A)", s.CreateLeasedSession(ctx, &store.Session{ProjectID: p, UserID: "alice", ThreadID: k2.ThreadID}, "A", time.Hour))
	noErr(t, "RequestAbort on the leased session", s.RequestAbort(ctx, k2))
	wantErr(t, "AcquireLease(B) on the leased session just after the request", s.AcquireLease(ctx, k2, "B", time.Hour), store.ErrLeaseHeld)
	clock.Advance(store.AbortGrace + time.Second)
	wantErr(t, "AcquireLease(B) by another user", s.AcquireLease(ctx, store.Key{ProjectID: p, UserID: "bob", ThreadID: k2.ThreadID}, "B", time.Hour), store.ErrNotFound)
	noErr(t, "AcquireLease(B) on the leased session after the grace", s.AcquireLease(ctx, k2, "B", time.Hour))
	wantErr(t, "RenewLease(A) on the leased session", s.RenewLease(ctx, k2, "A", time.Hour), store.ErrLeaseLost)
}

// testAbortGraceRepeatedRequest: the grace runs from the first pending
// request; pressing stop again does not postpone it.
func testAbortGraceRepeatedRequest(t *testing.T, s store.Store) {
	ctx := t.Context()
	clock := clockOf(t, s)
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)

	noErr(t, "AcquireLease(A)", s.AcquireLease(ctx, k, "A", time.Hour))
	noErr(t, "RequestAbort", s.RequestAbort(ctx, k))
	clock.Advance(store.AbortGrace / 2)
	noErr(t, "RequestAbort again", s.RequestAbort(ctx, k))
	wantErr(t, "AcquireLease(B) before the grace", s.AcquireLease(ctx, k, "B", time.Hour), store.ErrLeaseHeld)
	// Past the grace of the first request, not of the second.
	clock.Advance(store.AbortGrace/2 + time.Second)
	noErr(t, "AcquireLease(B) after the grace of the first request", s.AcquireLease(ctx, k, "B", time.Hour))
	wantErr(t, "RenewLease(A) after B took the lease", s.RenewLease(ctx, k, "A", time.Hour), store.ErrLeaseLost)
}

func testCreateLeased(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	k := newKey(p, "alice")
	sess := &store.Session{ProjectID: p, UserID: "alice", ThreadID: k.ThreadID, Metadata: map[string]any{"client": "web"}}
	noErr(t, "CreateLeasedSession(A)", s.CreateLeasedSession(ctx, sess, "A", time.Minute))

	// The session is a plain new session, listed and usable.
	got := get(t, s, k)
	want := &store.Session{
		ThreadID: k.ThreadID, UserID: k.UserID, ProjectID: k.ProjectID, Title: store.DefaultTitle,
		Metadata: map[string]any{"client": "web"}, CreatedAt: got.CreatedAt, UpdatedAt: got.UpdatedAt,
	}
	if d := diffSession(want, got); d != "" {
		t.Errorf("leased session: %s", d)
	}
	if got.CreatedAt.IsZero() || got.UpdatedAt.IsZero() {
		t.Errorf("leased session times = %v, %v; want now", got.CreatedAt, got.UpdatedAt)
	}
	checkSessionTimes(t, got)
	if ids := threadIDs(listAll(t, s, p, "alice", 10)); !slices.Equal(ids, []string{k.ThreadID}) {
		t.Errorf("ListSessions after CreateLeasedSession = %v, want [%s]", ids, k.ThreadID)
	}
	if msgs := listMsgs(t, s, k, 0); len(msgs) != 0 {
		t.Errorf("new leased session has %d messages", len(msgs))
	}
	if ab, err := s.AbortRequested(ctx, k); err != nil || ab {
		t.Errorf("AbortRequested on a new leased session = %v, %v; want false", ab, err)
	}

	// A holds the lease from the start.
	wantErr(t, "AcquireLease(B) while A holds from creation", s.AcquireLease(ctx, k, "B", time.Minute), store.ErrLeaseHeld)
	wantErr(t, "RenewLease(B) not held", s.RenewLease(ctx, k, "B", time.Minute), store.ErrLeaseLost)
	noErr(t, "RenewLease(A)", s.RenewLease(ctx, k, "A", time.Minute))
	noErr(t, "AcquireLease(A) by its owner", s.AcquireLease(ctx, k, "A", time.Minute))
	appendMsgs(t, s, k, textMsg(store.RoleUser, "hi"), textMsg(store.RoleAssistant, "hello"))
	noErr(t, "AddTurnStats", s.AddTurnStats(ctx, k, store.TurnStats{Messages: 2, Turns: 1}))
	noErr(t, "ReleaseLease(B) not held", s.ReleaseLease(ctx, k, "B"))
	wantErr(t, "AcquireLease(B) after B's no-op release", s.AcquireLease(ctx, k, "B", time.Minute), store.ErrLeaseHeld)
	noErr(t, "ReleaseLease(A)", s.ReleaseLease(ctx, k, "A"))
	wantErr(t, "RenewLease(A) after release", s.RenewLease(ctx, k, "A", time.Minute), store.ErrLeaseLost)
	noErr(t, "AcquireLease(B) after A released", s.AcquireLease(ctx, k, "B", time.Minute))
	if got := get(t, s, k); got.MessageCount != 2 || got.Stats.Turns != 1 {
		t.Errorf("after a turn: %d messages, %d turns; want 2, 1", got.MessageCount, got.Stats.Turns)
	}
	if msgs := listMsgs(t, s, k, 0); len(msgs) != 2 {
		t.Errorf("after a turn: %d stored messages, want 2", len(msgs))
	}

	// The lease is per session, and another user cannot take it.
	k2 := newKey(p, "alice")
	noErr(t, "CreateLeasedSession(B) of another session", s.CreateLeasedSession(ctx, &store.Session{ProjectID: p, UserID: "alice", ThreadID: k2.ThreadID}, "B", time.Minute))
	wantErr(t, "AcquireLease(A) on the other session", s.AcquireLease(ctx, k2, "A", time.Minute), store.ErrLeaseHeld)
	wantErr(t, "AcquireLease(B) by another user", s.AcquireLease(ctx, store.Key{ProjectID: p, UserID: "bob", ThreadID: k2.ThreadID}, "B", time.Minute), store.ErrNotFound)

	// Bad lease arguments are errors and create nothing.
	for _, bad := range []struct {
		name  string
		owner string
		ttl   time.Duration
	}{{"empty owner", "", time.Minute}, {"zero ttl", "A", 0}, {"negative ttl", "A", -time.Second}} {
		kb := newKey(p, "alice")
		err := s.CreateLeasedSession(ctx, &store.Session{ProjectID: p, UserID: "alice", ThreadID: kb.ThreadID}, bad.owner, bad.ttl)
		if err == nil {
			t.Errorf("CreateLeasedSession(%s) succeeded, want an error", bad.name)
		}
		_, err = s.GetSession(ctx, kb)
		wantErr(t, "GetSession after CreateLeasedSession("+bad.name+")", err, store.ErrNotFound)
	}
	if err := s.CreateLeasedSession(ctx, &store.Session{ProjectID: p, UserID: "alice"}, "A", time.Minute); err == nil {
		t.Error("CreateLeasedSession without a thread id succeeded, want an error")
	}
	if err := s.CreateLeasedSession(ctx, nil, "A", time.Minute); err == nil {
		t.Error("CreateLeasedSession(nil) succeeded, want an error")
	}
}

func testCreateLeasedDuplicate(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()

	// Over a leased session: ErrExists for anyone, lease and session kept.
	k := newKey(p, "alice")
	noErr(t, "CreateLeasedSession(A)", s.CreateLeasedSession(ctx, &store.Session{ProjectID: p, UserID: "alice", ThreadID: k.ThreadID, Title: "first"}, "A", time.Minute))
	wantErr(t, "CreateLeasedSession(same user, B) over a leased session",
		s.CreateLeasedSession(ctx, &store.Session{ProjectID: p, UserID: "alice", ThreadID: k.ThreadID, Title: "second"}, "B", time.Minute), store.ErrExists)
	wantErr(t, "CreateLeasedSession(other user, B) over a leased session",
		s.CreateLeasedSession(ctx, &store.Session{ProjectID: p, UserID: "bob", ThreadID: k.ThreadID, Title: "bob's"}, "B", time.Minute), store.ErrExists)
	wantErr(t, "CreateSession over a leased session",
		s.CreateSession(ctx, &store.Session{ProjectID: p, UserID: "alice", ThreadID: k.ThreadID, Title: "third"}), store.ErrExists)
	if got := get(t, s, k); got.Title != "first" || got.UserID != "alice" {
		t.Errorf("after duplicates: session %q of %q, want %q of alice", got.Title, got.UserID, "first")
	}
	wantErr(t, "AcquireLease(B) after B's refused create", s.AcquireLease(ctx, k, "B", time.Minute), store.ErrLeaseHeld)
	noErr(t, "RenewLease(A) after the refused creates", s.RenewLease(ctx, k, "A", time.Minute))
	_, err := s.GetSession(ctx, store.Key{ProjectID: p, UserID: "bob", ThreadID: k.ThreadID})
	wantErr(t, "GetSession(bob, alice's thread)", err, store.ErrNotFound)

	// Over a plain session with a pending abort and no lease: ErrExists,
	// and the refused create neither takes the lease nor clears the flag.
	k2 := newKey(p, "alice")
	create(t, s, k2, func(s *store.Session) { s.Title = "plain" })
	noErr(t, "RequestAbort", s.RequestAbort(ctx, k2))
	wantErr(t, "CreateLeasedSession(same user, A) over a plain session",
		s.CreateLeasedSession(ctx, &store.Session{ProjectID: p, UserID: "alice", ThreadID: k2.ThreadID}, "A", time.Minute), store.ErrExists)
	wantErr(t, "CreateLeasedSession(other user, A) over a plain session",
		s.CreateLeasedSession(ctx, &store.Session{ProjectID: p, UserID: "bob", ThreadID: k2.ThreadID}, "A", time.Minute), store.ErrExists)
	if ab, err := s.AbortRequested(ctx, k2); err != nil || !ab {
		t.Errorf("AbortRequested after a refused CreateLeasedSession = %v, %v; want true", ab, err)
	}
	wantErr(t, "RenewLease(A) after A's refused create", s.RenewLease(ctx, k2, "A", time.Minute), store.ErrLeaseLost)
	noErr(t, "AcquireLease(C) after the refused creates", s.AcquireLease(ctx, k2, "C", time.Minute))
	if got := get(t, s, k2); got.Title != "plain" {
		t.Errorf("plain session title = %q after refused creates", got.Title)
	}

	// The same thread id in another project is another session.
	k3 := store.Key{ProjectID: newProject(), UserID: "bob", ThreadID: k.ThreadID}
	noErr(t, "CreateLeasedSession(other project)", s.CreateLeasedSession(ctx, &store.Session{ProjectID: k3.ProjectID, UserID: "bob", ThreadID: k3.ThreadID}, "B", time.Minute))
	wantErr(t, "AcquireLease(B) in the first project while A holds", s.AcquireLease(ctx, k, "B", time.Minute), store.ErrLeaseHeld)
	wantErr(t, "AcquireLease(A) in the other project while B holds", s.AcquireLease(ctx, k3, "A", time.Minute), store.ErrLeaseHeld)
}

func testCreateLeasedExpiry(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	k := newKey(p, "alice")
	noErr(t, "CreateLeasedSession(A, 50ms)", s.CreateLeasedSession(ctx, &store.Session{ProjectID: p, UserID: "alice", ThreadID: k.ThreadID}, "A", 50*time.Millisecond))
	acquireEventually(t, s, k, "B")
	wantErr(t, "RenewLease(A) after B took the expired lease", s.RenewLease(ctx, k, "A", time.Minute), store.ErrLeaseLost)
	noErr(t, "ReleaseLease(A) after losing it", s.ReleaseLease(ctx, k, "A"))
	wantErr(t, "AcquireLease(C) while B holds", s.AcquireLease(ctx, k, "C", time.Minute), store.ErrLeaseHeld)
}

// testCreateLeasedRace creates the same session from several goroutines:
// exactly one wins, the others get ErrExists, and the winner holds the
// lease.
func testCreateLeasedRace(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	k := newKey(p, "alice")
	const n = 4
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = s.CreateLeasedSession(ctx, &store.Session{ProjectID: p, UserID: "alice", ThreadID: k.ThreadID}, fmt.Sprintf("owner-%d", i), time.Minute)
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("CreateLeasedSession succeeded for owners %d and %d", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, store.ErrExists):
			t.Errorf("CreateLeasedSession(owner-%d) = %v, want nil or ErrExists", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no CreateLeasedSession succeeded")
	}
	for i := range n {
		err := s.AcquireLease(ctx, k, fmt.Sprintf("owner-%d", i), time.Minute)
		if i == winner {
			noErr(t, "AcquireLease(winner)", err)
		} else {
			wantErr(t, fmt.Sprintf("AcquireLease(owner-%d) while the winner holds", i), err, store.ErrLeaseHeld)
		}
	}
}

func testAbort(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	k := newKey(p, "alice")
	create(t, s, k, nil)
	k2 := newKey(p, "alice")
	create(t, s, k2, nil)

	if ab, err := s.AbortRequested(ctx, k); err != nil || ab {
		t.Errorf("AbortRequested on a new session = %v, %v; want false", ab, err)
	}
	noErr(t, "RequestAbort", s.RequestAbort(ctx, k))
	noErr(t, "RequestAbort twice", s.RequestAbort(ctx, k))
	if ab, err := s.AbortRequested(ctx, k); err != nil || !ab {
		t.Errorf("AbortRequested after RequestAbort = %v, %v; want true", ab, err)
	}
	if ab, err := s.AbortRequested(ctx, k2); err != nil || ab {
		t.Errorf("abort flag leaked to another session: %v, %v", ab, err)
	}
	wantErr(t, "RequestAbort(unknown)", s.RequestAbort(ctx, newKey(p, "alice")), store.ErrNotFound)
}

// ---- deletion ----

func testDeleteSession(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject()
	k := newKey(p, "alice")
	keep := newKey(p, "alice")
	create(t, s, k, func(s *store.Session) { s.Title = "doomed" })
	create(t, s, keep, func(s *store.Session) { s.Title = "kept" })
	appendMsgs(t, s, k, textMsg(store.RoleUser, "one"), textMsg(store.RoleAssistant, "two"))
	appendMsgs(t, s, keep, textMsg(store.RoleUser, "keep me"))
	noErr(t, "AddTurnStats", s.AddTurnStats(ctx, k, store.TurnStats{Messages: 2, Turns: 1}))
	_, err := s.RenameSession(ctx, k, "user title")
	noErr(t, "RenameSession", err)
	noErr(t, "AcquireLease", s.AcquireLease(ctx, k, "A", time.Hour))
	noErr(t, "RequestAbort", s.RequestAbort(ctx, k))

	noErr(t, "DeleteSession", s.DeleteSession(ctx, k))
	_, err = s.GetSession(ctx, k)
	wantErr(t, "GetSession after delete", err, store.ErrNotFound)
	_, err = s.ListMessages(ctx, k, 0)
	wantErr(t, "ListMessages after delete", err, store.ErrNotFound)
	_, err = s.AppendMessages(ctx, k, []store.Message{textMsg(store.RoleUser, "x")})
	wantErr(t, "AppendMessages after delete", err, store.ErrNotFound)
	wantErr(t, "DeleteSession twice", s.DeleteSession(ctx, k), store.ErrNotFound)
	list, _, err := s.ListSessions(ctx, p, "alice", store.Page{Limit: 100})
	noErr(t, "ListSessions", err)
	if !slices.Equal(threadIDs(list), []string{keep.ThreadID}) {
		t.Errorf("after delete, listed %v, want only %s", threadIDs(list), keep.ThreadID)
	}
	if msgs := listMsgs(t, s, keep, 0); len(msgs) != 1 || msgs[0].Content != "keep me" {
		t.Errorf("other session's messages changed: %+v", msgs)
	}

	// The same thread id starts afresh: no messages, counters, title, lease
	// or abort flag survive.
	sess := create(t, s, k, nil)
	if sess.Title != store.DefaultTitle || sess.TitleSetByUser || sess.MessageCount != 0 || sess.Stats.Turns != 0 {
		t.Errorf("recreated session carries old state: title %q (by user %v), %d messages, %d turns",
			sess.Title, sess.TitleSetByUser, sess.MessageCount, sess.Stats.Turns)
	}
	if msgs := listMsgs(t, s, k, 0); len(msgs) != 0 {
		t.Errorf("recreated session has %d old messages", len(msgs))
	}
	if ab, err := s.AbortRequested(ctx, k); err != nil || ab {
		t.Errorf("recreated session abort flag = %v, %v; want false", ab, err)
	}
	noErr(t, "AcquireLease(B) on recreated session", s.AcquireLease(ctx, k, "B", time.Minute))
	ret := appendMsgs(t, s, k, textMsg(store.RoleUser, "fresh"))
	if msgs := listMsgs(t, s, k, 0); len(msgs) != 1 || msgs[0].Content != "fresh" || msgs[0].Seq != ret[0].Seq {
		t.Errorf("recreated session messages = %+v", msgs)
	}
}

func testDeleteProject(t *testing.T, s store.Store) {
	ctx := t.Context()
	p, other := newProject(), newProject()
	var gone []store.Key
	for _, u := range []string{"alice", "bob"} {
		for range 2 {
			k := newKey(p, u)
			create(t, s, k, nil)
			appendMsgs(t, s, k, textMsg(store.RoleUser, "q"), textMsg(store.RoleAssistant, "a"))
			noErr(t, "AcquireLease", s.AcquireLease(ctx, k, "turn", time.Hour))
			noErr(t, "RequestAbort", s.RequestAbort(ctx, k))
			gone = append(gone, k)
		}
	}
	kept := newKey(other, "alice")
	create(t, s, kept, func(s *store.Session) { s.Title = "other project" })
	appendMsgs(t, s, kept, textMsg(store.RoleUser, "still here"))

	noErr(t, "DeleteProject", s.DeleteProject(ctx, p))
	checkProjectGone(t, s, p, gone, []string{"alice", "bob"})
	if got := get(t, s, kept); got.Title != "other project" {
		t.Errorf("other project's session title = %q", got.Title)
	}
	if msgs := listMsgs(t, s, kept, 0); len(msgs) != 1 || msgs[0].Content != "still here" {
		t.Errorf("other project's messages = %+v", msgs)
	}

	noErr(t, "DeleteProject again", s.DeleteProject(ctx, p))
	noErr(t, "DeleteProject(unknown)", s.DeleteProject(ctx, newProject()))

	// The project can be used again, from scratch.
	k := gone[0]
	create(t, s, k, nil)
	if msgs := listMsgs(t, s, k, 0); len(msgs) != 0 {
		t.Errorf("recreated session in deleted project has %d messages", len(msgs))
	}
	noErr(t, "AcquireLease on recreated session", s.AcquireLease(ctx, k, "new-turn", time.Minute))
	if ab, err := s.AbortRequested(ctx, k); err != nil || ab {
		t.Errorf("recreated session abort flag = %v, %v", ab, err)
	}
}

func checkProjectGone(t *testing.T, s store.Store, p string, keys []store.Key, users []string) {
	t.Helper()
	ctx := t.Context()
	for _, k := range keys {
		_, err := s.GetSession(ctx, k)
		wantErr(t, "GetSession after DeleteProject", err, store.ErrNotFound)
		_, err = s.ListMessages(ctx, k, 0)
		wantErr(t, "ListMessages after DeleteProject", err, store.ErrNotFound)
	}
	for _, u := range users {
		list, next, err := s.ListSessions(ctx, p, u, store.Page{Limit: 100})
		noErr(t, "ListSessions after DeleteProject", err)
		if len(list) != 0 || next != "" {
			t.Errorf("%s still lists %d sessions of the deleted project (cursor %q)", u, len(list), next)
		}
	}
}

func testDeleteProjectMany(t *testing.T, s store.Store) {
	ctx := t.Context()
	p, other := newProject(), newProject()
	users := []string{"alice", "bob", "carol"}
	var keys []store.Key
	for i := range 30 {
		k := newKey(p, users[i%len(users)])
		create(t, s, k, nil)
		batch := make([]store.Message, 5)
		for m := range batch {
			batch[m] = textMsg(store.RoleUser, fmt.Sprintf("s%d-m%d", i, m))
		}
		appendMsgs(t, s, k, batch...)
		keys = append(keys, k)
	}
	var kept []store.Key
	for i := range 3 {
		k := newKey(other, users[i])
		create(t, s, k, nil)
		appendMsgs(t, s, k, textMsg(store.RoleUser, "other"))
		kept = append(kept, k)
	}

	noErr(t, "DeleteProject", s.DeleteProject(ctx, p))
	checkProjectGone(t, s, p, keys, users)
	for _, k := range kept {
		get(t, s, k)
		if msgs := listMsgs(t, s, k, 0); len(msgs) != 1 {
			t.Errorf("other project's session %s has %d messages, want 1", k.ThreadID, len(msgs))
		}
	}
}

// ---- API keys ----

func testAPIKeys(t *testing.T, s store.Store) {
	ctx := t.Context()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(id, user string, created time.Time, expires time.Time) *store.APIKey {
		return &store.APIKey{
			ID: id, UserID: user, Name: "key " + id,
			Hash:      fmt.Sprintf("%064x", len(id)*7919+int(created.Unix())),
			Prefix:    "ak_" + id[:4],
			CreatedAt: created, ExpiresAt: expires,
		}
	}
	k1 := mk(uuid.NewString(), "alice", base, time.Time{})
	k2 := mk(uuid.NewString(), "alice", base.Add(2*time.Hour), base.Add(48*time.Hour))
	k3 := mk(uuid.NewString(), "alice", base.Add(time.Hour), time.Time{})
	k3.LastUsed = base.Add(90 * time.Minute)
	kb := mk(uuid.NewString(), "bob", base.Add(3*time.Hour), time.Time{})
	for _, k := range []*store.APIKey{k1, k2, k3, kb} {
		noErr(t, "CreateAPIKey", s.CreateAPIKey(ctx, k))
	}

	list, err := s.ListAPIKeys(ctx, "alice")
	noErr(t, "ListAPIKeys", err)
	wantOrder := []*store.APIKey{k2, k3, k1}
	if len(list) != len(wantOrder) {
		t.Fatalf("ListAPIKeys(alice): %d keys, want %d", len(list), len(wantOrder))
	}
	for i, w := range wantOrder {
		if d := diffAPIKey(w, &list[i]); d != "" {
			t.Errorf("ListAPIKeys(alice)[%d]: %s", i, d)
		}
	}

	got, err := s.APIKeyByHash(ctx, k3.Hash)
	noErr(t, "APIKeyByHash", err)
	if d := diffAPIKey(k3, got); d != "" {
		t.Errorf("APIKeyByHash: %s", d)
	}
	_, err = s.APIKeyByHash(ctx, strings.Repeat("0", 64))
	wantErr(t, "APIKeyByHash(unknown)", err, store.ErrNotFound)

	wantErr(t, "RevokeAPIKey(bob, alice's key)", s.RevokeAPIKey(ctx, "bob", k1.ID), store.ErrNotFound)
	wantErr(t, "RevokeAPIKey(unknown)", s.RevokeAPIKey(ctx, "alice", uuid.NewString()), store.ErrNotFound)
	if got, err := s.APIKeyByHash(ctx, k1.Hash); err != nil || !got.RevokedAt.IsZero() {
		t.Errorf("alice's key after bob's revoke attempt: %+v, %v", got, err)
	}

	before := time.Now()
	noErr(t, "RevokeAPIKey", s.RevokeAPIKey(ctx, "alice", k1.ID))
	got, err = s.APIKeyByHash(ctx, k1.Hash)
	noErr(t, "APIKeyByHash(revoked)", err)
	if got.RevokedAt.IsZero() || got.RevokedAt.Before(before.Add(-time.Minute)) {
		t.Errorf("revoked key RevokedAt = %v, want about now", got.RevokedAt)
	}
	checkUTC(t, "RevokedAt", got.RevokedAt)
	list, err = s.ListAPIKeys(ctx, "alice")
	noErr(t, "ListAPIKeys after revoke", err)
	if len(list) != 3 || list[2].ID != k1.ID || list[2].RevokedAt.IsZero() || !list[0].RevokedAt.IsZero() {
		t.Errorf("ListAPIKeys after revoke: want 3 keys with only the last (oldest) revoked, got %+v", list)
	}

	list, err = s.ListAPIKeys(ctx, "bob")
	noErr(t, "ListAPIKeys(bob)", err)
	if len(list) != 1 || list[0].ID != kb.ID {
		t.Errorf("ListAPIKeys(bob) = %+v", list)
	}
	list, err = s.ListAPIKeys(ctx, "nobody")
	noErr(t, "ListAPIKeys(nobody)", err)
	if len(list) != 0 {
		t.Errorf("ListAPIKeys(nobody) = %d keys", len(list))
	}
}

func testTouchAPIKey(t *testing.T, s store.Store) {
	ctx := t.Context()
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	mk := func(user string, lastUsed time.Time) *store.APIKey {
		id := uuid.NewString()
		k := &store.APIKey{
			ID: id, UserID: user, Name: "key " + id,
			Hash:      strings.ReplaceAll(uuid.NewString()+uuid.NewString(), "-", ""),
			Prefix:    "ack_" + id[:4],
			CreatedAt: base, LastUsed: lastUsed,
		}
		noErr(t, "CreateAPIKey", s.CreateAPIKey(ctx, k))
		return k
	}
	ka := mk("alice", time.Time{})
	kOther := mk("alice", time.Time{})
	kb := mk("bob", time.Time{})
	kUsed := mk("alice", base.Add(time.Hour))
	lastUsed := func(user, id string) time.Time {
		t.Helper()
		keys, err := s.ListAPIKeys(ctx, user)
		noErr(t, "ListAPIKeys", err)
		for _, k := range keys {
			if k.ID == id {
				checkUTC(t, "LastUsed", k.LastUsed)
				return k.LastUsed
			}
		}
		t.Fatalf("ListAPIKeys(%s): key %s missing", user, id)
		return time.Time{}
	}
	check := func(what string, k *store.APIKey, want time.Time) {
		t.Helper()
		if got := lastUsed(k.UserID, k.ID); !timeEq(got, want) {
			t.Errorf("%s: LastUsed = %v, want %v", what, got, want)
		}
	}

	t1 := base.Add(10 * time.Minute)
	noErr(t, "TouchAPIKey(t1)", s.TouchAPIKey(ctx, "alice", ka.ID, t1))
	check("after the first touch", ka, t1)
	noErr(t, "TouchAPIKey(earlier)", s.TouchAPIKey(ctx, "alice", ka.ID, t1.Add(-time.Minute)))
	check("after an earlier touch", ka, t1)
	noErr(t, "TouchAPIKey(same)", s.TouchAPIKey(ctx, "alice", ka.ID, t1))
	check("after the same touch", ka, t1)
	t2 := t1.Add(time.Millisecond)
	noErr(t, "TouchAPIKey(t2)", s.TouchAPIKey(ctx, "alice", ka.ID, t2.In(time.FixedZone("X", 3600))))
	check("after a later touch (another zone)", ka, t2)

	// A LastUsed stored at creation also only moves forward.
	noErr(t, "TouchAPIKey(used, earlier)", s.TouchAPIKey(ctx, "alice", kUsed.ID, base))
	check("used key after an earlier touch", kUsed, kUsed.LastUsed)

	// Only the user's own key, and a time is required.
	wantErr(t, "TouchAPIKey(bob, alice's key)", s.TouchAPIKey(ctx, "bob", ka.ID, t2.Add(time.Hour)), store.ErrNotFound)
	wantErr(t, "TouchAPIKey(unknown)", s.TouchAPIKey(ctx, "alice", uuid.NewString(), t2), store.ErrNotFound)
	wantErr(t, "TouchAPIKey(no user)", s.TouchAPIKey(ctx, "", ka.ID, t2), store.ErrNotFound)
	if err := s.TouchAPIKey(ctx, "alice", ka.ID, time.Time{}); err == nil {
		t.Error("TouchAPIKey(zero time): no error")
	}
	check("after refused touches", ka, t2)
	check("alice's other key", kOther, time.Time{})
	check("bob's key", kb, time.Time{})

	// A revoked key still exists: touching it is not an error.
	noErr(t, "RevokeAPIKey", s.RevokeAPIKey(ctx, "alice", kOther.ID))
	noErr(t, "TouchAPIKey(revoked)", s.TouchAPIKey(ctx, "alice", kOther.ID, t1))
	check("revoked key", kOther, t1)

	// Concurrent touches leave the latest time, whatever their order.
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = s.TouchAPIKey(ctx, "bob", kb.ID, base.Add(time.Duration(n-i)*time.Second))
		})
	}
	wg.Wait()
	for i, err := range errs {
		noErr(t, fmt.Sprintf("concurrent TouchAPIKey %d", i), err)
	}
	check("after concurrent touches", kb, base.Add(n*time.Second))
}

func diffAPIKey(want, got *store.APIKey) string {
	var d []string
	if want.ID != got.ID || want.UserID != got.UserID || want.Name != got.Name || want.Hash != got.Hash || want.Prefix != got.Prefix {
		d = append(d, fmt.Sprintf("got {%s %s %q %s %s}, want {%s %s %q %s %s}",
			got.ID, got.UserID, got.Name, got.Hash, got.Prefix, want.ID, want.UserID, want.Name, want.Hash, want.Prefix))
	}
	for _, c := range []struct {
		name string
		w, g time.Time
	}{
		{"CreatedAt", want.CreatedAt, got.CreatedAt},
		{"ExpiresAt", want.ExpiresAt, got.ExpiresAt},
		{"RevokedAt", want.RevokedAt, got.RevokedAt},
		{"LastUsed", want.LastUsed, got.LastUsed},
	} {
		if !timeEq(c.w, c.g) {
			d = append(d, fmt.Sprintf("%s: got %v, want %v", c.name, c.g, c.w))
		}
		if !c.g.IsZero() && c.g.Location() != time.UTC {
			d = append(d, fmt.Sprintf("%s: location %v, want UTC", c.name, c.g.Location()))
		}
	}
	return strings.Join(d, "; ")
}

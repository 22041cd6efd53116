package storetest

import (
	"fmt"
	"strings"
	"testing"

	"agentchat/internal/store"
)

// historyTests are the tests of store.HistoryPager, which every store
// implements.
var historyTests = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"ListHistoryPages", testListHistoryPages},
	{"ListHistoryBytes", testListHistoryBytes},
}

func historyPager(t *testing.T, s store.Store) store.HistoryPager {
	t.Helper()
	hp, ok := store.Capability[store.HistoryPager](s)
	if !ok {
		t.Fatal("the store does not implement store.HistoryPager")
	}
	return hp
}

func contents(msgs []store.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return strings.Join(out, ",")
}

// testListHistoryPages: pages of Limit messages, newest first chosen and
// returned in order, walk back the whole history with Before.
func testListHistoryPages(t *testing.T, s store.Store) {
	ctx := t.Context()
	hp := historyPager(t, s)
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)
	if msgs, more, err := hp.ListHistory(ctx, k, store.HistoryPage{Limit: 10}); err != nil || len(msgs) != 0 || more {
		t.Fatalf("empty session: %d messages, more %v, %v", len(msgs), more, err)
	}
	var all []string
	for i := 1; i <= 10; i++ {
		all = append(all, fmt.Sprint("m", i))
		appendMsgs(t, s, k, textMsg(store.RoleUser, fmt.Sprint("m", i)))
	}

	var got []string
	before, pages := int64(0), 0
	for {
		msgs, more, err := hp.ListHistory(ctx, k, store.HistoryPage{Before: before, Limit: 3})
		noErr(t, "ListHistory", err)
		pages++
		if len(msgs) == 0 || len(msgs) > 3 {
			t.Fatalf("page %d: %d messages", pages, len(msgs))
		}
		for i := 1; i < len(msgs); i++ {
			if msgs[i].Seq <= msgs[i-1].Seq {
				t.Fatalf("page %d out of order: %s", pages, contents(msgs))
			}
		}
		got = append(strings.Split(contents(msgs), ","), got...)
		if !more {
			break
		}
		before = msgs[0].Seq
		if pages > 10 {
			t.Fatal("paging does not end")
		}
	}
	if strings.Join(got, ",") != strings.Join(all, ",") || pages != 4 {
		t.Fatalf("%d pages gave %v, want 4 pages of %v", pages, got, all)
	}

	whole, more, err := hp.ListHistory(ctx, k, store.HistoryPage{Limit: 100})
	noErr(t, "ListHistory of everything", err)
	if contents(whole) != strings.Join(all, ",") || more {
		t.Fatalf("everything: %s, more %v", contents(whole), more)
	}
	// The same as ListMessages.
	if last := listMsgs(t, s, k, 4); contents(last) != contents(whole[6:]) {
		t.Fatalf("ListMessages %s, ListHistory %s", contents(last), contents(whole[6:]))
	}
	msgs, more, err := hp.ListHistory(ctx, k, store.HistoryPage{Before: whole[9].Seq + 100, Limit: 2})
	if err != nil || contents(msgs) != "m9,m10" || !more {
		t.Fatalf("a cursor past the end: %s, more %v, %v", contents(msgs), more, err)
	}
	msgs, more, err = hp.ListHistory(ctx, k, store.HistoryPage{Before: whole[0].Seq, Limit: 2})
	if err != nil || len(msgs) != 0 || more {
		t.Fatalf("before the first: %s, more %v, %v", contents(msgs), more, err)
	}

	_, _, err = hp.ListHistory(ctx, store.Key{ProjectID: k.ProjectID, UserID: "bob", ThreadID: k.ThreadID}, store.HistoryPage{Limit: 1})
	wantErr(t, "ListHistory of another user's session", err, store.ErrNotFound)
	_, _, err = hp.ListHistory(ctx, newKey(k.ProjectID, "alice"), store.HistoryPage{Limit: 1})
	wantErr(t, "ListHistory of a missing session", err, store.ErrNotFound)
}

// testListHistoryBytes: a page stops before passing MaxBytes, but always
// holds its newest message, however large.
func testListHistoryBytes(t *testing.T, s store.Store) {
	ctx := t.Context()
	hp := historyPager(t, s)
	k := newKey(newProject(), "alice")
	create(t, s, k, nil)
	big := strings.Repeat("x", 600<<10) // stored in parts by some stores
	stored := appendMsgs(t, s, k,
		textMsg(store.RoleUser, "a"+strings.Repeat("1", 1000)),
		textMsg(store.RoleAssistant, "b"+strings.Repeat("2", 1000)),
		textMsg(store.RoleUser, "c"+strings.Repeat("3", 1000)),
		store.Message{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{ID: "call_1", Type: "function", Function: store.FunctionCall{Name: "ping", Arguments: `{"host":"` + strings.Repeat("9", 1000) + `"}`}}}},
		textMsg(store.RoleTool, "e"+strings.Repeat("5", 1000)),
	)
	size := func(i int) int { return store.MessageSize(&stored[i]) }
	first := func(msgs []store.Message) string {
		var out []string
		for _, m := range msgs {
			if m.Content == "" {
				out = append(out, "tool-call")
				continue
			}
			out = append(out, m.Content[:1])
		}
		return strings.Join(out, ",")
	}
	tests := []struct {
		name     string
		maxBytes int
		want     string
		more     bool
	}{
		{"one byte keeps the newest", 1, "e", true},
		{"exactly two", size(4) + size(3), "tool-call,e", true},
		{"one short of three", size(4) + size(3) + size(2) - 1, "tool-call,e", true},
		{"everything", 1 << 20, "a,b,c,tool-call,e", false},
		{"no bound", 0, "a,b,c,tool-call,e", false},
	}
	for _, tc := range tests {
		msgs, more, err := hp.ListHistory(ctx, k, store.HistoryPage{Limit: 100, MaxBytes: tc.maxBytes})
		noErr(t, tc.name, err)
		if first(msgs) != tc.want || more != tc.more {
			t.Errorf("%s: %s (more %v), want %s (more %v)", tc.name, first(msgs), more, tc.want, tc.more)
		}
	}
	if got := store.MessageSize(&stored[3]); got < 1000 {
		t.Errorf("MessageSize of a tool call = %d: its arguments are not counted", got)
	}

	// A message larger than the bound is returned alone, whole.
	appendMsgs(t, s, k, textMsg(store.RoleAssistant, big))
	msgs, more, err := hp.ListHistory(ctx, k, store.HistoryPage{Limit: 100, MaxBytes: 1 << 10})
	noErr(t, "ListHistory of a large message", err)
	if len(msgs) != 1 || msgs[0].Content != big || !more {
		t.Fatalf("large message: %d messages, more %v", len(msgs), more)
	}
	msgs, more, err = hp.ListHistory(ctx, k, store.HistoryPage{Before: msgs[0].Seq, Limit: 100, MaxBytes: 1 << 10})
	noErr(t, "ListHistory below the large message", err)
	if first(msgs) != "e" || !more {
		t.Fatalf("below the large message: %s, more %v", first(msgs), more)
	}
}

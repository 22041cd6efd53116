package store

import "context"

// HistoryPage asks for one page of a session's history: the newest
// committed messages below Before, at most Limit of them and, past the
// first, no more than MaxBytes of MessageSize in all.
type HistoryPage struct {
	// Before, when positive, keeps only the messages whose Seq is below
	// it: the cursor of the previous (newer) page. 0: from the newest.
	Before int64
	// Limit is the most messages of the page; below 1 counts as 1.
	Limit int
	// MaxBytes bounds the page's total MessageSize: an older message is
	// not added when it would pass it, and the page ends there. The
	// newest message of the page is always returned, whatever its size.
	// 0 or less: no bound.
	MaxBytes int
}

// HistoryPager is a Store that pages a session's history without reading
// more of it than the page holds (plus one message).
type HistoryPager interface {
	// ListHistory returns the page's committed messages in order (oldest
	// first), and whether older committed messages remain; the first
	// returned message's Seq is then the Before of the next (older) page.
	// ErrNotFound when the session does not exist.
	ListHistory(ctx context.Context, k Key, p HistoryPage) (msgs []Message, more bool, err error)
}

// MessageSize is the size of m that HistoryPage.MaxBytes counts: the bytes
// of its text (content, name, ids, tool-call ids, names and arguments).
func MessageSize(m *Message) int {
	n := len(m.ID) + len(m.Role) + len(m.Content) + len(m.Name) + len(m.ToolCallID)
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		n += len(tc.ID) + len(tc.Type) + len(tc.Function.Name) + len(tc.Function.Arguments)
	}
	return n
}

// Fits reports whether a message of size may join a page of p that
// already holds n messages of total bytes: the first always does, the
// others while the total stays within MaxBytes; and never more than
// Limit (at least 1) messages.
func (p HistoryPage) Fits(n, bytes, size int) bool {
	return n < max(p.Limit, 1) && (n == 0 || p.MaxBytes <= 0 || bytes+size <= p.MaxBytes)
}

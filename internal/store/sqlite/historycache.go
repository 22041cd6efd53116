package sqlite

import (
	"context"
	"database/sql"
	"maps"
	"slices"
	"sync"

	"agentchat/internal/store"
)

// Bounds of historyCache: it starts over when it would hold more sessions
// or more bytes of content than these.
const (
	maxCachedHistories   = 256
	maxCachedHistoryText = 8 << 20
	// maxCachedMessages is the most messages kept per session (the
	// longest history a turn asks for is the runtime's MaxHistory).
	maxCachedMessages = 500
)

// historyCache keeps, per session, the last messages OpenTurn read or this
// Store appended (none for a session it created), so that a turn on a
// session whose history did not change reads one row instead of all of
// them (each row costs a few microseconds in modernc's SQLite, and a turn
// asks for up to MaxHistory rows; on the path to the first token).
// Messages are appended by seq, and deleted with their session or as a
// trailing run whose seqs are handed out again (RollBackTurn, which drops
// the entry): an entry is used only when the session's commit marker
// (msg_seq) is its last seq and the stored message at that seq still has
// the id of its last message (checked in the transaction of OpenTurn), so
// a write through another Store (another process) is seen, as is a
// session deleted and made anew or a turn rolled back and replaced
// (message ids are unique).
type historyCache struct {
	mu      sync.Mutex
	entries map[threadRef]*cachedHistory
	text    int // bytes of content held
}

// threadRef names a session's messages (they are keyed by project and
// thread; the user is checked by the session row).
type threadRef struct{ project, thread string }

// cachedHistory is the end of a session's history: msgs are its last
// messages in order, the last one at seq (none when seq is 0); complete
// is true when msgs start at the first message.
type cachedHistory struct {
	seq      int64
	msgs     []store.Message
	complete bool
	text     int
}

func messageText(msgs []store.Message) int {
	n := 0
	for i := range msgs {
		n += len(msgs[i].Content)
	}
	return n
}

// lookup returns the last limit messages of the session (all when limit
// <= 0) when the entry holds them for commit marker seq; the caller
// still checks the id of the last one (see OpenTurn).
func (c *historyCache) lookup(r threadRef, seq int64, limit int) ([]store.Message, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[r]
	if !ok || e.seq != seq {
		return nil, false
	}
	msgs := e.msgs
	switch {
	case limit > 0 && len(msgs) >= limit:
		msgs = msgs[len(msgs)-limit:]
	case !e.complete:
		return nil, false
	}
	return cloneMessages(msgs), true
}

// put stores msgs, the last messages of the session up to seq (complete:
// from the first one).
func (c *historyCache) put(r threadRef, seq int64, msgs []store.Message, complete bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setLocked(r, &cachedHistory{seq: seq, msgs: cloneMessages(msgs), complete: complete})
}

// appended records msgs appended to the session after seq first-1; an
// entry that does not end there is dropped.
func (c *historyCache) appended(r threadRef, msgs []store.Message) {
	if len(msgs) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[r]
	if !ok {
		return
	}
	if e.seq != msgs[0].Seq-1 {
		c.dropLocked(r)
		return
	}
	next := &cachedHistory{seq: msgs[len(msgs)-1].Seq, complete: e.complete,
		msgs: append(slices.Clip(e.msgs), cloneMessages(msgs)...)}
	if over := len(next.msgs) - maxCachedMessages; over > 0 {
		next.msgs, next.complete = next.msgs[over:], false
	}
	c.setLocked(r, next)
}

// has reports whether the cache holds an entry of the session: this Store
// created, opened or appended to it lately (and did not delete it).
func (c *historyCache) has(r threadRef) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[r]
	return ok
}

// drop forgets the session (deleted).
func (c *historyCache) drop(r threadRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(r)
}

func (c *historyCache) dropLocked(r threadRef) {
	if e, ok := c.entries[r]; ok {
		c.text -= e.text
		delete(c.entries, r)
	}
}

func (c *historyCache) setLocked(r threadRef, e *cachedHistory) {
	c.dropLocked(r)
	e.text = messageText(e.msgs)
	if c.entries == nil || len(c.entries) >= maxCachedHistories || c.text+e.text > maxCachedHistoryText {
		c.entries, c.text = make(map[threadRef]*cachedHistory), 0
	}
	if e.text > maxCachedHistoryText {
		return
	}
	c.entries[r] = e
	c.text += e.text
}

// cloneMessages copies msgs with their own tool calls and metadata, so
// that neither the cache nor its callers see the other's changes.
func cloneMessages(msgs []store.Message) []store.Message {
	out := slices.Clone(msgs)
	for i := range out {
		out[i].ToolCalls = slices.Clone(out[i].ToolCalls)
		out[i].Metadata = maps.Clone(out[i].Metadata)
	}
	return out
}

// historyAt returns the last limit committed messages of the session in
// tx (the writer's), whose commit marker is seq and the id of the message
// at it lastID (as the lease's opening returned them): from the cache when
// it holds the history up to that message.
func (s *Store) historyAt(ctx context.Context, tx *sql.Tx, k store.Key, seq int64, lastID sql.NullString, limit int) ([]store.Message, error) {
	r := threadRef{project: k.ProjectID, thread: k.ThreadID}
	if msgs, ok := s.history.lookup(r, seq, limit); ok {
		if len(msgs) == 0 {
			return nil, nil
		}
		if lastID.Valid && lastID.String == msgs[len(msgs)-1].ID {
			return msgs, nil
		}
		s.history.drop(r)
	}
	msgs, err := listCommittedTx(ctx, tx, s.ws.listMessages, k, seq, limit)
	if err != nil {
		return nil, err
	}
	s.history.put(r, seq, msgs, limit <= 0 || len(msgs) < limit)
	return msgs, nil
}

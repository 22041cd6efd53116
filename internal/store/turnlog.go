package store

import (
	"context"
	"time"
)

// TurnEvents is a run of consecutive events of one turn's event log: the
// SSE payloads (the bytes of each `data:` event, without framing) that the
// turn's stream numbered First, First+1, ... (its `id: <turn>:<n>` lines).
type TurnEvents struct {
	// Turn is the id of the turn (its lease owner); empty when there is
	// no log to read.
	Turn string
	// First is the number of Events[0]; numbers start at 1.
	First int64
	// Events are the payloads, in order, without gaps.
	Events [][]byte
	// Final is true when no event of the turn follows Events: the turn's
	// last event is the last of Events (or, when Events is empty, the one
	// the reader asked to read after) and nothing more will be appended.
	Final bool
	// Live is set by ReadTurnEvents: the turn still holds the session's
	// turn lease (an unexpired lease owned by Turn), so more events may
	// come. A turn whose log is not Final and that is not Live either
	// finished a moment ago (its last batch is being written) or died.
	Live bool
}

// TurnLogKeep is how long a turn's log is kept at least after its last
// batch is written: long enough for a client to come back after a
// network drop, or for a second tab to replay a finished answer.
const TurnLogKeep = time.Hour

// MaxTurnEventsRead bounds the bytes of events one ReadTurnEvents returns
// (at least one event is returned whatever its size).
const MaxTurnEventsRead = 1 << 20

// TurnLogs keep the event log of recent turns, so that a client that lost
// its stream, or a second client, can read what a turn sent and follow it
// while it runs, from any instance. A turn's log is written in order, in
// batches, by the one process that runs the turn (a turn id is unique) and
// read by any. Turn ids are ordered by time (UUIDv7): the session's latest
// logged turn is the one with the greatest id, and a turn that runs (holds
// the session's lease, owned by its id) is known before its first batch.
//
// A log belongs to its session: deleting the session (or its project)
// deletes its logs, and a session created again with the same thread id
// never sees the logs of the one that was deleted. Logs expire keep after
// their last write (no scan is needed to find or remove them).
type TurnLogs interface {
	// AppendTurnEvents appends ev (ev.Turn, ev.First, ev.Events, ev.Final;
	// ev.Live is ignored) to the log of session k: the first batch of a
	// turn has First 1 (it may hold no events: it marks the turn as
	// started), each next batch starts right after the previous one, and
	// nothing is appended after a Final batch. The batch is kept at least
	// keep after now. An event may be large (up to several MiB). ErrNotFound
	// when the session does not exist; nothing is then written.
	AppendTurnEvents(ctx context.Context, k Key, ev TurnEvents, keep time.Duration) error
	// ReadTurnEvents returns the events of turn numbered after `after`
	// (0: from the first), in order and without gaps, at most about
	// MaxTurnEventsRead bytes of them; turn "" reads the session's latest
	// turn: the one running (holding the session's lease) when it logged
	// nothing yet, else the logged turn with the greatest id. A running
	// turn that logged nothing yet is read as Turn, Live, no events. Final is set when the result ends with the turn's last event,
	// Live as its doc says. A reader ahead of the log (a client that got
	// events live before their batch was written) gets Turn, no events,
	// and Final only when the log ended at or before after. A session
	// without a log, or without that turn (never logged, or expired),
	// gives a TurnEvents with Turn "" and no error. ErrNotFound when the session does not exist or is not
	// k.UserID's (the log of another user's session is never read).
	ReadTurnEvents(ctx context.Context, k Key, turn string, after int64) (*TurnEvents, error)
}

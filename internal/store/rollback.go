package store

import "context"

// MetadataTurnID is the Message.Metadata key of the id of the turn that
// stored the message (a string: the turn's lease owner).
const MetadataTurnID = "turn_id"

// TurnRollbacks remove the messages a turn stored, for a message that
// replaces the turn it interrupts (the multitask strategy "rollback").
type TurnRollbacks interface {
	// RollBackTurn removes the messages of session k that turn stored:
	// the run of committed messages at the end of the conversation whose
	// Metadata[MetadataTurnID] is turn (none when the last message is not
	// turn's). They vanish at once and together from ListMessages (and
	// from every history read), MessageCount goes down by their number,
	// and later appends continue normally. It returns how many were
	// removed. The caller holds the session's lease (the turn that
	// stored them has ended), so nothing is appended meanwhile.
	// ErrNotFound when the session does not exist or is not k.UserID's.
	RollBackTurn(ctx context.Context, k Key, turn string) (int, error)
}

// TurnOf returns the id of the turn that stored m: its
// Metadata[MetadataTurnID] when that is a string, else "".
func (m *Message) TurnOf() string {
	t, _ := m.Metadata[MetadataTurnID].(string)
	return t
}

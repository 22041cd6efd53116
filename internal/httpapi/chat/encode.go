package chat

import "agentchat/internal/jsonstr"

// contentEvents encodes the content events of one stream without
// reflection (one per streamed token): the bytes encoding/json gives for
// the event that encode returns. The buffer is reused from one event to
// the next.
type contentEvents struct {
	suffix []byte // ,"session_id":"..."}
	buf    []byte
}

func newContentEvents(sessionID string) *contentEvents {
	c := &contentEvents{}
	c.suffix = append(c.suffix, `,"session_id":`...)
	c.suffix = jsonstr.Append(c.suffix, sessionID)
	c.suffix = append(c.suffix, '}')
	return c
}

// encode returns the event of a content delta (valid until the next call).
func (c *contentEvents) encode(content, messageID string) []byte {
	b := append(c.buf[:0], `{"type":"content","content":`...)
	b = jsonstr.Append(b, content)
	if messageID != "" {
		b = append(b, `,"message_id":`...)
		b = jsonstr.Append(b, messageID)
	}
	b = append(b, c.suffix...)
	c.buf = b
	return b
}

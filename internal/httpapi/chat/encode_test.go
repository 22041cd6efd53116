package chat

import (
	"bytes"
	"encoding/json"
	"testing"

	"agentchat/internal/agent"
)

// The hand-encoded content events are the bytes encoding/json gives for
// the event encode returns.
func TestContentEventsMatchEncodingJSON(t *testing.T) {
	texts := []string{"", "plain", `quote " \ `, "line\nbreak\ttab", "<b>&</b>", "café 😀", "\u2028", "bad \xff"}
	for _, sessionID := range []string{"5b0c8e0e-7a1f-4c1e-9f4e-2b7f3c1d9a10", "thread<&>"} {
		c := newContentEvents(sessionID)
		for _, msgID := range []string{"", "msg-1", "m\"2"} {
			for _, text := range texts {
				ev, ok := encode(agent.Event{Type: agent.EventContent, Content: text, MessageID: msgID}, sessionID)
				if !ok {
					t.Fatal("encode refused a content event")
				}
				want, err := json.Marshal(ev)
				if err != nil {
					t.Fatal(err)
				}
				if got := c.encode(text, msgID); !bytes.Equal(got, want) {
					t.Errorf("content %q, message %q:\n got %s\nwant %s", text, msgID, got, want)
				}
			}
		}
	}
}

func FuzzContentEvents(f *testing.F) {
	f.Add("hello", "msg-1", "session")
	f.Add("", "", "")
	f.Add("\xff<\u2028", "\x00", "s&")
	f.Fuzz(func(t *testing.T, text, msgID, sessionID string) {
		ev, _ := encode(agent.Event{Type: agent.EventContent, Content: text, MessageID: msgID}, sessionID)
		want, _ := json.Marshal(ev)
		if got := newContentEvents(sessionID).encode(text, msgID); !bytes.Equal(got, want) {
			t.Fatalf("got %s, want %s", got, want)
		}
	})
}

package store

import (
	"bytes"
	"testing"
)

func TestTurnEventsBlob(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events [][]byte
	}{
		{"none", nil},
		{"one", [][]byte{[]byte(`{"a":1}`)}},
		{"empty events", [][]byte{{}, []byte("x"), {}}},
		{"long length", [][]byte{bytes.Repeat([]byte("y"), 300)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := EncodeTurnEvents(tc.events)
			got, err := DecodeTurnEvents(b, int64(len(tc.events)))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if len(got) != len(tc.events) {
				t.Fatalf("%d events, want %d", len(got), len(tc.events))
			}
			for i := range got {
				if !bytes.Equal(got[i], tc.events[i]) || got[i] == nil {
					t.Errorf("event %d = %q, want %q (non-nil)", i, got[i], tc.events[i])
				}
			}
			if _, err := DecodeTurnEvents(b, int64(len(tc.events))+1); err == nil {
				t.Errorf("decode of one event more than written: no error")
			}
			if len(tc.events) > 0 {
				if _, err := DecodeTurnEvents(b, int64(len(tc.events))-1); err == nil {
					t.Errorf("decode of one event less than written: no error")
				}
			}
		})
	}
}

func TestTakeTurnEvents(t *testing.T) {
	small, large := []byte("s"), make([]byte, MaxTurnEventsRead)
	for _, tc := range []struct {
		name        string
		events      [][]byte
		first, next int64
		want        int
		whole       bool
	}{
		{"all", [][]byte{small, small, small}, 1, 1, 3, true},
		{"from the middle", [][]byte{small, small, small}, 1, 3, 1, true},
		{"one large", [][]byte{large, small}, 5, 5, 1, false},
		{"small then large", [][]byte{small, large}, 1, 1, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, whole := TakeTurnEvents(nil, 0, tc.events, tc.first, tc.next)
			if len(got) != tc.want || whole != tc.whole {
				t.Errorf("%d events, whole %v; want %d, %v", len(got), whole, tc.want, tc.whole)
			}
		})
	}
}

package ssetest

import (
	"strings"
	"testing"
)

func TestReadFrames(t *testing.T) {
	body := ": stream open\n\n" +
		"id: t:1\ndata: {\"type\":\"content\",\"content\":\"Hel\"}\n\n" +
		"data: {\"type\":\"heartbeat\"}\n\n" +
		"id: t:2\ndata: {\"type\":\"content\",\n" + "data: \"content\":\"lo\"}\n\n" +
		"id: t:3\ndata: {\"type\":\"done\"}\n\n"
	fs := ReadFrames(strings.NewReader(body), nil)
	if len(fs) != 3 || fs[0].ID != "t:1" || fs[2].ID != "t:3" {
		t.Fatalf("frames %+v", fs)
	}
	if got, n := Content(fs); got != "Hello" || n != 2 {
		t.Fatalf("content %q from %d events", got, n)
	}
	if want := "id: t:1\ndata: {\"type\":\"content\",\"content\":\"Hel\"}\n\n"; !strings.HasPrefix(Joined(fs), want) {
		t.Fatalf("joined %q", Joined(fs))
	}
	if typ, _ := fs[2].Event(); typ != "done" {
		t.Fatalf("last event %q", typ)
	}
	if two := ReadFrames(strings.NewReader(body), func(fs []Frame) bool { return len(fs) == 2 }); len(two) != 2 {
		t.Fatalf("stopped after %d frames", len(two))
	}
}

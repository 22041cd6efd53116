package agent

import (
	"context"
	"testing"
	"time"

	"agentchat/internal/store"
)

// An abort requested through a store that notifies (the local server's)
// stops the turn without waiting for the next poll of the flag: with a
// poll an hour apart, only the notification can stop it.
func TestAbortNotificationStopsTurnBeforeThePoll(t *testing.T) {
	var notifying store.Store
	h := newHarness(t, nil, func(o *Options) {
		notifying = store.WithAbortNotifications(o.Store)
		o.Store = notifying
		o.AbortPoll = time.Hour
	})
	reply, onEvent, first := interruptible()
	h.llm.Enqueue(reply)
	k := newKey()
	go func() {
		<-first
		if err := notifying.RequestAbort(context.Background(), k); err != nil {
			t.Errorf("request abort: %v", err)
		}
	}()
	ended := make(chan events, 1)
	go func() { ended <- h.turnCtx(context.Background(), k, "tell me", onEvent) }()
	var ev events
	select {
	case ev = <-ended:
	case <-time.After(time.Minute): // a hang detector, not a timing assertion
		t.Fatal("the aborted turn still runs: the notification did not reach it")
	}
	checkEnd(t, ev, false)
	checkInterrupted(t, h, k)
	if s := h.session(k); s.Stats.AbortedTurns != 1 {
		t.Fatalf("stats = %+v, want one aborted turn", s.Stats)
	}
}

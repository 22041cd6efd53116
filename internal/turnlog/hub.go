package turnlog

import "sync"

// Hub tells the followers of a turn in this process that its log grew, so
// that they read it at once instead of at their next poll. A nil *Hub
// tells nobody. The zero Hub is ready to use.
type Hub struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

// Subscribe returns a channel that receives a value (coalesced) after each
// batch of turn's log is written in this process, and the function that
// ends the subscription.
func (h *Hub) Subscribe(turn string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	if h == nil {
		return ch, func() {}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = make(map[string]map[chan struct{}]struct{})
	}
	set := h.subs[turn]
	if set == nil {
		set = make(map[chan struct{}]struct{})
		h.subs[turn] = set
	}
	set[ch] = struct{}{}
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(set, ch)
		if len(set) == 0 && h.subs[turn] != nil && len(h.subs[turn]) == 0 {
			delete(h.subs, turn)
		}
	}
}

// notify wakes the followers of turn.
func (h *Hub) notify(turn string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[turn] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

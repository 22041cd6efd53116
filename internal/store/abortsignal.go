package store

import (
	"context"
	"sync"
)

// AbortNotifier is implemented by a store that tells the turns running in
// its own process, at once, that an abort was requested for their session:
// a turn then reads the abort flag right away instead of at its next poll.
// Aborts requested through another process (another Lambda instance) are
// still found by polling, so a notification is only ever a hint to read the
// flag now; it carries no decision of its own.
type AbortNotifier interface {
	// WatchAbort returns a channel that receives a value whenever an abort
	// of the session of k is requested through this store, and a function
	// that stops the watch. Only k's project and thread ids are compared.
	WatchAbort(k Key) (<-chan struct{}, func())
}

// WithAbortNotifications returns st, whose RequestAbort now also notifies
// the watchers of the session in this process (see AbortNotifier). Use it
// where the abort route and the turns share one process and one store
// value: the local server.
func WithAbortNotifications(st Store) Store {
	return &notifyingStore{Store: st, watchers: map[threadRef]map[chan struct{}]struct{}{}}
}

// threadRef names a session across users: notifications are hints, so
// matching on the thread id alone is enough.
type threadRef struct{ project, thread string }

// notifyingStore is a Store that notifies abort watchers.
type notifyingStore struct {
	Store
	mu       sync.Mutex
	watchers map[threadRef]map[chan struct{}]struct{}
}

// Unwrap implements Wrapper.
func (s *notifyingStore) Unwrap() Store { return s.Store }

// RequestAbort implements Leases and notifies the session's watchers once
// the flag is stored.
func (s *notifyingStore) RequestAbort(ctx context.Context, k Key) error {
	if err := s.Store.RequestAbort(ctx, k); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.watchers[threadRef{k.ProjectID, k.ThreadID}] {
		select {
		case ch <- struct{}{}:
		default: // a notification is already pending
		}
	}
	return nil
}

// WatchAbort implements AbortNotifier.
func (s *notifyingStore) WatchAbort(k Key) (<-chan struct{}, func()) {
	ref := threadRef{k.ProjectID, k.ThreadID}
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	if s.watchers[ref] == nil {
		s.watchers[ref] = map[chan struct{}]struct{}{}
	}
	s.watchers[ref][ch] = struct{}{}
	s.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			delete(s.watchers[ref], ch)
			if len(s.watchers[ref]) == 0 {
				delete(s.watchers, ref)
			}
		})
	}
}

package sqlite

import (
	"sync"
	"time"
)

// readTTL bounds how long a cached read (an owner's default LLM
// configuration, a user's budget) is used without reading the file again.
// Writes made through the Store invalidate the cache at once; the bound
// is for another process writing the same file, whose change is seen
// within it.
const readTTL = 2 * time.Second

// maxCachedOwners bounds a cache: it is emptied when it would grow past.
const maxCachedOwners = 4096

// readCache keeps a read made on every turn and /v1 request, so that it
// is a map lookup: the owners' default LLM configurations as their stored
// row (a reader transaction and a join, 5 % of a streamed /v1 request's
// CPU in make bench-e2e's profile; a hit is decoded afresh, so no caller
// shares a map with another), the users' budgets. An entry is valid while
// no write of its kind was made through the Store since its read (gen) and
// it is younger than readTTL; absent items are cached too.
type readCache[K comparable, V any] struct {
	mu      sync.Mutex
	gen     uint64
	entries map[K]cached[V]
}

// cached is one cached read and when it was made.
type cached[V any] struct {
	v   V
	gen uint64
	at  time.Time
}

// configOwnerKey is an owner as stored (owner_kind, owner_id).
type configOwnerKey struct{ kind, id string }

// cachedConfig is a cached default configuration: the row, or found false
// for no default.
type cachedConfig struct {
	row   llmConfigRow
	found bool
}

// generation returns the current generation; read it before the query
// whose result is then stored with it.
func (c *readCache[K, V]) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// get returns the valid entry of k at now.
func (c *readCache[K, V]) get(k K, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || e.gen != c.gen || now.Sub(e.at) >= readTTL || now.Before(e.at) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// put stores v, read at now in generation gen; a read that a write
// overtook is not kept.
func (c *readCache[K, V]) put(k K, v V, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.entries == nil || len(c.entries) >= maxCachedOwners {
		c.entries = make(map[K]cached[V])
	}
	c.entries[k] = cached[V]{v: v, gen: gen, at: now}
}

// invalidate drops every entry; call it after every write of the cached
// kind (successful or not: a failed commit may still have changed the
// file).
func (c *readCache[K, V]) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.entries)
}

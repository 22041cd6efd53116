package sqlite

import (
	"sync"
	"time"
)

// defaultConfigTTL bounds how long a cached default LLM configuration is
// used without reading the file again. Writes made through the Store
// invalidate the cache at once; the bound is for another process writing
// the same file, whose change is seen within it.
const defaultConfigTTL = 2 * time.Second

// maxCachedOwners bounds the cache: it is emptied when it would grow past.
const maxCachedOwners = 4096

// configCache keeps the owners' default LLM configurations as their stored
// row, so that the default read on every turn and /v1 request (a reader
// transaction and a join, 5 % of a streamed /v1 request's CPU in make
// bench-e2e's profile) is a map lookup. A hit is decoded afresh, so no
// caller shares a map with another. An entry is valid while no LLM
// configuration write was made through the Store since its read (gen) and
// it is younger than defaultConfigTTL; absent defaults are cached too.
type configCache struct {
	mu      sync.Mutex
	gen     uint64
	entries map[configOwnerKey]cachedConfig
}

// configOwnerKey is an owner as stored (owner_kind, owner_id).
type configOwnerKey struct{ kind, id string }

// cachedConfig is a cached read: the row, or found false for no default.
type cachedConfig struct {
	row   llmConfigRow
	found bool
	gen   uint64
	at    time.Time
}

// generation returns the current generation; read it before the query
// whose result is then stored with it.
func (c *configCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// get returns the valid entry of k at now.
func (c *configCache) get(k configOwnerKey, now time.Time) (cachedConfig, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || e.gen != c.gen || now.Sub(e.at) >= defaultConfigTTL || now.Before(e.at) {
		return cachedConfig{}, false
	}
	return e, true
}

// put stores a read made at generation e.gen; a read that a write
// overtook is not kept.
func (c *configCache) put(k configOwnerKey, e cachedConfig) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.gen != c.gen {
		return
	}
	if c.entries == nil || len(c.entries) >= maxCachedOwners {
		c.entries = make(map[configOwnerKey]cachedConfig)
	}
	c.entries[k] = e
}

// invalidate drops every entry; call it after every LLM configuration
// write (successful or not: a failed commit may still have changed the
// file).
func (c *configCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.entries)
}

package llm

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"sync"
)

// maxValidSchemas bounds a validJSON: it starts over when it would grow
// past.
const maxValidSchemas = 256

// validJSON remembers the JSON texts (the tool schemas of a client's
// requests) that json.Valid accepted. An agent sends the same schemas with
// every call, and checking them is most of the cost of encoding a request
// by hand (json.Valid reads a 7 kB set of schemas in about 40 us; a hash
// and a comparison take well under 1 us). A text is only remembered whole
// (compared byte for byte on a hit), never by its hash alone. The zero
// value is ready; a nil *validJSON checks every time.
type validJSON struct {
	once sync.Once
	seed maphash.Seed
	mu   sync.Mutex
	seen map[uint64][]byte
}

// valid reports whether p is valid JSON.
func (v *validJSON) valid(p []byte) bool {
	if v == nil {
		return json.Valid(p)
	}
	v.once.Do(func() { v.seed = maphash.MakeSeed() })
	h := maphash.Bytes(v.seed, p)
	v.mu.Lock()
	known, ok := v.seen[h]
	v.mu.Unlock()
	if ok && bytes.Equal(known, p) {
		return true
	}
	if !json.Valid(p) {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.seen == nil || len(v.seen) >= maxValidSchemas {
		v.seen = make(map[uint64][]byte)
	}
	v.seen[h] = bytes.Clone(p)
	return true
}

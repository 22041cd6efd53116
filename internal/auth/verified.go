package auth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// maxVerifiedTokens bounds the remembered tokens: the set is emptied when
// it would grow past (tokens are re-verified in full then).
const maxVerifiedTokens = 4096

// verifiedTokens are the tokens that passed JWTVerifier.Verify, by the
// SHA-256 of their text, each with its subject and the end of its
// validity (exp plus Leeway). A token is only remembered once every check
// passed, nbf and iat included (neither can fail later for the same
// token: the clock only moves past them); on a hit only the end of
// validity is checked.
type verifiedTokens struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]verifiedToken
}

type verifiedToken struct {
	sub   string
	until time.Time
}

// get returns the subject of a remembered token still valid at now.
func (v *verifiedTokens) get(sum [sha256.Size]byte, now time.Time) (string, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	t, ok := v.m[sum]
	if !ok {
		return "", false
	}
	if !now.Before(t.until) {
		delete(v.m, sum)
		return "", false
	}
	return t.sub, true
}

// put remembers a verified token until until.
func (v *verifiedTokens) put(sum [sha256.Size]byte, sub string, until, now time.Time) {
	if !now.Before(until) {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil || len(v.m) >= maxVerifiedTokens {
		v.m = make(map[[sha256.Size]byte]verifiedToken)
	}
	v.m[sum] = verifiedToken{sub: sub, until: until}
}

// len returns how many tokens are remembered.
func (v *verifiedTokens) len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.m)
}

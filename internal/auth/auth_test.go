package auth

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/store"
)

var (
	secret      = []byte("test-secret-0123456789abcdef-0123456789")
	otherSecret = []byte("another-secret-0123456789abcdef-01234567")
	t0          = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)
)

func clock() time.Time { return t0 }

// rawToken builds a JWT by hand so that tests control every byte of it.
func rawToken(t *testing.T, header, claims map[string]any, key []byte, h func() hash.Hash) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signing := enc(header) + "." + enc(claims)
	if h == nil {
		return signing + "."
	}
	mac := hmac.New(h, key)
	mac.Write([]byte(signing))
	return signing + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func hs256(alg string) map[string]any { return map[string]any{"alg": alg, "typ": "JWT"} }

func claims(sub any, exp time.Time) map[string]any {
	c := map[string]any{"exp": exp.Unix()}
	if sub != nil {
		c["sub"] = sub
	}
	return c
}

// memKeys is an in-memory test double of store.APIKeys.
type memKeys struct {
	mu   sync.Mutex
	keys map[string]store.APIKey // by hash
	err  error

	// TouchAPIKey: touchErr fails it; when set before use, touchEntered
	// receives on each call and touchGate must then be closed to let it go on.
	touchErr     error
	touchEntered chan struct{}
	touchGate    chan struct{}
	touches      []touchCall
}

// touchCall is one TouchAPIKey call as the store saw it.
type touchCall struct {
	user, id    string
	at          time.Time
	ctxErr      error
	hasDeadline bool
}

func (m *memKeys) TouchAPIKey(ctx context.Context, userID, keyID string, t time.Time) error {
	if m.touchEntered != nil {
		m.touchEntered <- struct{}{}
		<-m.touchGate
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, hasDeadline := ctx.Deadline()
	m.touches = append(m.touches, touchCall{user: userID, id: keyID, at: t, ctxErr: ctx.Err(), hasDeadline: hasDeadline})
	if m.touchErr != nil {
		return m.touchErr
	}
	for h, k := range m.keys {
		if k.UserID == userID && k.ID == keyID {
			if t.After(k.LastUsed) {
				k.LastUsed = t
				m.keys[h] = k
			}
			return nil
		}
	}
	return fmt.Errorf("touch api key %s: %w", keyID, store.ErrNotFound)
}

// touchCalls returns the TouchAPIKey calls so far.
func (m *memKeys) touchCalls() []touchCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.touches)
}

// lastUsed returns the LastUsed of the user's key id.
func (m *memKeys) lastUsed(user, id string) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range m.keys {
		if k.UserID == user && k.ID == id {
			return k.LastUsed
		}
	}
	return time.Time{}
}

func (m *memKeys) CreateAPIKey(_ context.Context, k *store.APIKey) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.keys == nil {
		m.keys = map[string]store.APIKey{}
	}
	m.keys[k.Hash] = *k
	return nil
}

func (m *memKeys) ListAPIKeys(_ context.Context, userID string) ([]store.APIKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.APIKey
	for _, k := range m.keys {
		if k.UserID == userID {
			out = append(out, k)
		}
	}
	return out, nil
}

func (m *memKeys) RevokeAPIKey(_ context.Context, userID, keyID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for h, k := range m.keys {
		if k.UserID == userID && k.ID == keyID {
			k.RevokedAt = t0
			m.keys[h] = k
			return nil
		}
	}
	return store.ErrNotFound
}

func (m *memKeys) APIKeyByHash(_ context.Context, hash string) (*store.APIKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	k, ok := m.keys[hash]
	if !ok {
		return nil, fmt.Errorf("api key: %w", store.ErrNotFound)
	}
	return &k, nil
}

// newKey stores a fresh key for user and returns its secret.
func newKey(t *testing.T, m *memKeys, id, user string, expires, revoked time.Time) string {
	t.Helper()
	sec, prefix, h, err := GenerateAPIKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CreateAPIKey(context.Background(), &store.APIKey{
		ID: id, UserID: user, Name: id, Hash: h, Prefix: prefix, CreatedAt: t0.Add(-time.Hour),
		ExpiresAt: expires, RevokedAt: revoked,
	}); err != nil {
		t.Fatal(err)
	}
	return sec
}

func TestAuthenticate(t *testing.T) {
	keys := &memKeys{}
	good := newKey(t, keys, "k-good", "carol", time.Time{}, time.Time{})
	future := newKey(t, keys, "k-future", "dave", t0.Add(time.Hour), time.Time{})
	revoked := newKey(t, keys, "k-revoked", "erin", time.Time{}, t0.Add(-time.Minute))
	expired := newKey(t, keys, "k-expired", "frank", t0.Add(-time.Second), time.Time{})
	expiresNow := newKey(t, keys, "k-now", "gina", t0, time.Time{})
	unknown, _, _, _ := GenerateAPIKey()

	a, err := NewAuthenticator(secret, keys, clock)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := NewJWTVerifier(secret, clock)
	issued, err := v.Issue("alice", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	exp := t0.Add(time.Hour)
	valid := rawToken(t, hs256("HS256"), claims("bob", exp), secret, sha256.New)

	tests := []struct {
		name   string
		header string
		user   string // "" means an error is expected
		via    string
		err    error
	}{
		{"issued token", "Bearer " + issued, "alice", ViaJWT, nil},
		{"hand-made token", "Bearer " + valid, "bob", ViaJWT, nil},
		{"lower-case scheme", "bearer " + valid, "bob", ViaJWT, nil},
		{"upper-case scheme, spaces around", "  BEARER   " + valid + " ", "bob", ViaJWT, nil},
		{"GNS3-style claims only sub and exp", "Bearer " + rawToken(t, map[string]any{"alg": "HS256"}, map[string]any{"sub": "admin", "exp": exp.Unix()}, secret, sha256.New), "admin", ViaJWT, nil},
		{"expired within leeway", "Bearer " + rawToken(t, hs256("HS256"), claims("bob", t0.Add(-Leeway/2)), secret, sha256.New), "bob", ViaJWT, nil},

		{"missing header", "", "", "", ErrNoCredentials},
		{"blank header", "   ", "", "", ErrNoCredentials},
		{"other secret", "Bearer " + rawToken(t, hs256("HS256"), claims("bob", exp), otherSecret, sha256.New), "", "", ErrInvalidCredentials},
		{"expired", "Bearer " + rawToken(t, hs256("HS256"), claims("bob", t0.Add(-Leeway-time.Second)), secret, sha256.New), "", "", ErrInvalidCredentials},
		{"no exp", "Bearer " + rawToken(t, hs256("HS256"), map[string]any{"sub": "bob"}, secret, sha256.New), "", "", ErrInvalidCredentials},
		{"exp as string", "Bearer " + rawToken(t, hs256("HS256"), map[string]any{"sub": "bob", "exp": "tomorrow"}, secret, sha256.New), "", "", ErrInvalidCredentials},
		{"not valid yet", "Bearer " + rawToken(t, hs256("HS256"), map[string]any{"sub": "bob", "exp": exp.Unix(), "nbf": t0.Add(time.Hour).Unix()}, secret, sha256.New), "", "", ErrInvalidCredentials},
		{"alg none", "Bearer " + rawToken(t, hs256("none"), claims("bob", exp), nil, nil), "", "", ErrInvalidCredentials},
		{"alg None", "Bearer " + rawToken(t, hs256("None"), claims("bob", exp), nil, nil), "", "", ErrInvalidCredentials},
		{"alg none with HS256 signature", "Bearer " + rawToken(t, hs256("none"), claims("bob", exp), secret, sha256.New), "", "", ErrInvalidCredentials},
		{"HS512", "Bearer " + rawToken(t, hs256("HS512"), claims("bob", exp), secret, sha512.New), "", "", ErrInvalidCredentials},
		{"HS384", "Bearer " + rawToken(t, hs256("HS384"), claims("bob", exp), secret, sha512.New384), "", "", ErrInvalidCredentials},
		{"RS256 header signed with the secret", "Bearer " + rawToken(t, hs256("RS256"), claims("bob", exp), secret, sha256.New), "", "", ErrInvalidCredentials},
		{"missing sub", "Bearer " + rawToken(t, hs256("HS256"), claims(nil, exp), secret, sha256.New), "", "", ErrInvalidCredentials},
		{"empty sub", "Bearer " + rawToken(t, hs256("HS256"), claims("", exp), secret, sha256.New), "", "", ErrInvalidCredentials},
		{"numeric sub", "Bearer " + rawToken(t, hs256("HS256"), claims(42, exp), secret, sha256.New), "", "", ErrInvalidCredentials},
		{"tampered payload", "Bearer " + tamper(valid), "", "", ErrInvalidCredentials},
		{"malformed token", "Bearer not.a.jwt", "", "", ErrInvalidCredentials},
		{"two segments", "Bearer abc.def", "", "", ErrInvalidCredentials},
		{"token only, no scheme", valid, "", "", ErrInvalidCredentials},
		{"basic scheme", "Basic YWxpY2U6c2VjcmV0", "", "", ErrInvalidCredentials},
		{"scheme only", "Bearer", "", "", ErrInvalidCredentials},
		{"scheme and spaces", "Bearer    ", "", "", ErrInvalidCredentials},
		{"two credentials", "Bearer " + valid + " " + valid, "", "", ErrInvalidCredentials},
		{"comma-joined credentials", "Bearer " + valid + "," + valid, "", "", ErrInvalidCredentials},
		{"control character", "Bearer " + valid + "\x00", "", "", ErrInvalidCredentials},
		{"oversize", "Bearer " + strings.Repeat("a", MaxCredentialLen+1), "", "", ErrInvalidCredentials},

		{"api key", "Bearer " + good, "carol", ViaAPIKey, nil},
		{"api key expiring later", "Bearer " + future, "dave", ViaAPIKey, nil},
		{"api key revoked", "Bearer " + revoked, "", "", ErrInvalidCredentials},
		{"api key expired", "Bearer " + expired, "", "", ErrInvalidCredentials},
		{"api key expiring now", "Bearer " + expiresNow, "", "", ErrInvalidCredentials},
		{"api key unknown", "Bearer " + unknown, "", "", ErrInvalidCredentials},
		{"api key truncated", "Bearer " + good[:len(good)-1], "", "", ErrInvalidCredentials},
		{"api key prefix only", "Bearer ack_", "", "", ErrInvalidCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := a.Authenticate(context.Background(), tt.header)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v (identity %v)", err, tt.err, id)
				}
				if id != (Identity{}) {
					t.Errorf("identity %#v returned with an error", id)
				}
				if tok := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(tt.header), "Bearer ")); len(tok) > 8 && strings.Contains(err.Error(), tok) {
					t.Errorf("error leaks the credential: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v, want user %s", err, tt.user)
			}
			if id.UserID != tt.user || id.Via != tt.via {
				t.Fatalf("identity = %v, want user=%s via=%s", id, tt.user, tt.via)
			}
			switch tt.via {
			case ViaJWT:
				if id.Token != strings.Fields(tt.header)[1] {
					t.Errorf("token %q is not the bearer credential", id.Token)
				}
			case ViaAPIKey:
				// The forwarded token is a JWT for the key's owner, never the key.
				if IsAPIKey(id.Token) {
					t.Fatalf("api key forwarded as token")
				}
				user, err := v.Verify(id.Token)
				if err != nil || user != tt.user {
					t.Errorf("forwarded token: user %q err %v", user, err)
				}
			}
		})
	}
}

// tamper changes the payload of a token, keeping its signature.
func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	payload = bytes.Replace(payload, []byte(`"bob"`), []byte(`"eve"`), 1)
	parts[1] = base64.RawURLEncoding.EncodeToString(payload)
	return strings.Join(parts, ".")
}

func TestAuthenticateStoreFailure(t *testing.T) {
	keys := &memKeys{}
	good := newKey(t, keys, "k", "carol", time.Time{}, time.Time{})
	keys.err = errors.New("dynamodb: throttled")
	a, err := NewAuthenticator(secret, keys, clock)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Authenticate(context.Background(), "Bearer "+good)
	if err == nil || errors.Is(err, ErrInvalidCredentials) || errors.Is(err, ErrNoCredentials) {
		t.Fatalf("a store failure must be an internal error, got %v", err)
	}
	if strings.Contains(err.Error(), good) {
		t.Errorf("error leaks the key: %v", err)
	}
}

func TestAuthenticateWithoutKeyStore(t *testing.T) {
	a, err := NewAuthenticator(secret, nil, clock)
	if err != nil {
		t.Fatal(err)
	}
	key, _, _, _ := GenerateAPIKey()
	if _, err := a.Authenticate(context.Background(), "Bearer "+key); !errors.Is(err, ErrInvalidCredentials) {
		t.Fatalf("err = %v, want ErrInvalidCredentials", err)
	}
}

func TestSingleUser(t *testing.T) {
	keys := &memKeys{}
	a, err := NewAuthenticator(nil, keys, clock)
	if err != nil {
		t.Fatal(err)
	}
	if !a.SingleUser() || a.Verifier() != nil {
		t.Fatal("nil secret must select single-user mode")
	}
	key, prefix, hash, _ := GenerateAPIKey()
	_ = keys.CreateAPIKey(context.Background(), &store.APIKey{ID: "k1", UserID: LocalUserID, Hash: hash, Prefix: prefix})
	revoked, rprefix, rhash, _ := GenerateAPIKey()
	_ = keys.CreateAPIKey(context.Background(), &store.APIKey{ID: "k2", UserID: LocalUserID, Hash: rhash, Prefix: rprefix, RevokedAt: clock().Add(-time.Minute)})
	unknown, _, _, _ := GenerateAPIKey()
	for _, bad := range []string{revoked, unknown} {
		if _, err := a.Authenticate(context.Background(), "Bearer "+bad); !errors.Is(err, ErrInvalidCredentials) {
			t.Errorf("single-user mode accepted a revoked or unknown key: %v", err)
		}
	}
	tests := []struct {
		header, token string
	}{
		{"", ""},
		{"Bearer gns3-token.abc.def", "gns3-token.abc.def"},
		{"bearer   xyz", "xyz"},
		{"Basic Zm9vOmJhcg==", ""},
		{"garbage", ""},
		{"Bearer " + key, ""}, // API keys are never forwarded
	}
	for _, tt := range tests {
		id, err := a.Authenticate(context.Background(), tt.header)
		if err != nil {
			t.Fatalf("%q: %v", tt.header, err)
		}
		if id.UserID != LocalUserID || id.Via != ViaLocal || id.Token != tt.token {
			t.Errorf("%q: identity %v token %q, want local with token %q", tt.header, id, id.Token, tt.token)
		}
	}
	if a2, err := NewAuthenticator([]byte{}, nil, nil); err != nil || !a2.SingleUser() {
		t.Errorf("empty secret: single-user=%v err=%v", a2 != nil && a2.SingleUser(), err)
	}
}

func TestNewAuthenticatorShortSecret(t *testing.T) {
	if _, err := NewAuthenticator([]byte("short"), nil, nil); err == nil {
		t.Fatal("a 5-byte secret was accepted")
	} else if strings.Contains(err.Error(), "short") {
		t.Errorf("error leaks the secret: %v", err)
	}
}

func TestIssue(t *testing.T) {
	v, err := NewJWTVerifier(secret, clock)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		user string
		ttl  time.Duration
		ok   bool
	}{{"alice", time.Minute, true}, {"", time.Minute, false}, {"alice", 0, false}, {"alice", -time.Minute, false}} {
		tok, err := v.Issue(tt.user, tt.ttl)
		if (err == nil) != tt.ok {
			t.Errorf("Issue(%q, %v) err = %v", tt.user, tt.ttl, err)
			continue
		}
		if !tt.ok {
			continue
		}
		// Valid now, still valid within the leeway, refused after it.
		later := t0
		v2, _ := NewJWTVerifier(secret, func() time.Time { return later })
		for _, c := range []struct {
			at time.Time
			ok bool
		}{{t0, true}, {t0.Add(tt.ttl + Leeway - time.Second), true}, {t0.Add(tt.ttl + Leeway + time.Second), false}} {
			later = c.at
			user, err := v2.Verify(tok)
			if (err == nil) != c.ok || (c.ok && user != tt.user) {
				t.Errorf("Verify at %v: user %q err %v, want ok=%v", c.at.Sub(t0), user, err, c.ok)
			}
		}
	}
}

func TestGenerateAPIKey(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		sec, prefix, h, err := GenerateAPIKey()
		if err != nil {
			t.Fatal(err)
		}
		if len(sec) != APIKeyLen || !strings.HasPrefix(sec, APIKeyPrefix) || !wellFormedAPIKey(sec) {
			t.Fatalf("bad key format %q", sec)
		}
		if prefix != sec[:APIKeyDisplayLen] || !strings.HasPrefix(prefix, APIKeyPrefix) {
			t.Fatalf("prefix %q of %q", prefix, sec)
		}
		if h != HashAPIKey(sec) || len(h) != 64 || strings.Contains(h, sec) {
			t.Fatalf("hash %q of %q", h, sec)
		}
		if seen[sec] {
			t.Fatal("duplicate key")
		}
		seen[sec] = true
	}
	// Known vector: hex SHA-256.
	if got := HashAPIKey("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("HashAPIKey(abc) = %s", got)
	}
}

func TestIdentityNeverShowsToken(t *testing.T) {
	const tok = "eyJhbGciOiJIUzI1NiJ9.SECRET-PAYLOAD.SIG"
	id := Identity{UserID: "alice", Token: tok, Via: ViaJWT}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("req", "identity", id)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("req", "identity", &id)
	js, err := json.Marshal(id)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{
		"String": id.String(), "%v": fmt.Sprintf("%v", id), "%+v": fmt.Sprintf("%+v", id),
		"%#v": fmt.Sprintf("%#v", id), "%v ptr": fmt.Sprintf("%v", &id), "slog": logged.String(), "json": string(js),
	} {
		if strings.Contains(out, "SECRET") {
			t.Errorf("%s leaks the token: %s", name, out)
		}
		if !strings.Contains(out, "alice") {
			t.Errorf("%s lacks the user: %s", name, out)
		}
	}
}

func TestContext(t *testing.T) {
	ctx := context.Background()
	if _, ok := FromContext(ctx); ok {
		t.Fatal("identity in an empty context")
	}
	want := Identity{UserID: "alice", Token: "t", Via: ViaJWT}
	got, ok := FromContext(WithIdentity(ctx, want))
	if !ok || got != want {
		t.Fatalf("FromContext = %v %v", got, ok)
	}
}

func TestCredentialErrorMessages(t *testing.T) {
	if ErrNoCredentials.Error() != "Not authenticated" || ErrInvalidCredentials.Error() != "Could not validate credentials" {
		t.Fatal("public messages changed")
	}
}

func FuzzAuthenticate(f *testing.F) {
	keys := &memKeys{}
	a, err := NewAuthenticator(secret, keys, clock)
	if err != nil {
		f.Fatal(err)
	}
	v, _ := NewJWTVerifier(secret, clock)
	tok, _ := v.Issue("alice", time.Hour)
	key, _, _, _ := GenerateAPIKey()
	for _, s := range []string{"", "Bearer " + tok, "Bearer " + key, "bearer a.b.c", "Basic x", "Bearer ack_", "Bearer \x00", "Bearer eyJ.eyJ.", tok} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		id, err := a.Authenticate(context.Background(), header)
		if err != nil {
			if !errors.Is(err, ErrNoCredentials) && !errors.Is(err, ErrInvalidCredentials) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if id.Via != ViaJWT || id.UserID == "" || id.Token == "" {
			t.Fatalf("accepted %q as %v", header, id)
		}
	})
}

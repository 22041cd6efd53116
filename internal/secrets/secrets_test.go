package secrets_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"agentchat/internal/secrets"
)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, secrets.KeyLen) }

func newBox(t *testing.T, current []byte, previous ...[]byte) *secrets.Box {
	t.Helper()
	b, err := secrets.NewBox(current, previous...)
	if err != nil {
		t.Fatalf("NewBox: %v", err)
	}
	return b
}

// keyForms are the renderings of a key that must never appear in an error.
func keyForms(k []byte) []string {
	return []string{
		string(k), hex.EncodeToString(k), base64.StdEncoding.EncodeToString(k),
		base64.RawURLEncoding.EncodeToString(k), fmt.Sprint(k), fmt.Sprintf("%x", k[:8]),
	}
}

// checkClean fails when err's text contains any of secret.
func checkClean(t *testing.T, err error, secret ...string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range secret {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("error %q contains a secret (%q)", err, s)
		}
	}
}

var sealedRE = regexp.MustCompile(`^v1\.([0-9a-f]{8})\.([A-Za-z0-9_-]+)$`)

func TestSealOpenRoundTrip(t *testing.T) {
	box := newBox(t, key(1))
	tests := []struct {
		name, plaintext, aad string
	}{
		{"api key", "sk-proj-0123456789abcdefghijklmnop", "llmcfg:U#alice:cfg-1"},
		{"empty plaintext", "", "llmcfg:U#alice:cfg-1"},
		{"empty aad", "sk-secret", ""},
		{"unicode", "clé-secrète-🔑", "llmcfg:G#admins:é"},
		{"long", strings.Repeat("x", 4096), "a"},
		{"nul bytes", "a\x00b", "c\x00d"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sealed, err := box.Seal(tc.plaintext, tc.aad)
			if err != nil {
				t.Fatalf("Seal: %v", err)
			}
			m := sealedRE.FindStringSubmatch(sealed)
			if m == nil {
				t.Fatalf("sealed %q is not v1.<kid>.<base64url>", sealed)
			}
			if m[1] != secrets.KeyID(key(1)) {
				t.Errorf("kid %s, want KeyID of the current key %s", m[1], secrets.KeyID(key(1)))
			}
			data, err := base64.RawURLEncoding.DecodeString(m[2])
			if err != nil {
				t.Fatalf("data is not unpadded base64url: %v", err)
			}
			if want := 12 + len(tc.plaintext) + 16; len(data) != want {
				t.Errorf("data is %d bytes, want nonce+ciphertext+tag = %d", len(data), want)
			}
			if tc.plaintext != "" && strings.Contains(sealed, tc.plaintext) {
				t.Errorf("sealed %q shows the plaintext", sealed)
			}
			got, err := box.Open(sealed, tc.aad)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if got != tc.plaintext {
				t.Errorf("Open = %q, want %q", got, tc.plaintext)
			}
			again, err := box.Seal(tc.plaintext, tc.aad)
			if err != nil {
				t.Fatal(err)
			}
			if again == sealed {
				t.Error("two seals of the same plaintext are equal: the nonce is not random")
			}
		})
	}
}

func TestRotation(t *testing.T) {
	oldKey, newKey, otherKey := key(1), key(2), key(3)
	sealedOld, err := newBox(t, oldKey).Seal("sk-old-secret-value", "rec")
	if err != nil {
		t.Fatal(err)
	}
	rotated := newBox(t, newKey, oldKey)
	sealedNew, err := rotated.Seal("sk-new-secret-value", "rec")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sealedNew, "v1."+secrets.KeyID(newKey)+".") {
		t.Errorf("rotated box sealed %q, want it under the new key %s", sealedNew, secrets.KeyID(newKey))
	}
	tests := []struct {
		name   string
		box    *secrets.Box
		sealed string
		want   string // "" means: must fail with ErrUndecryptable
	}{
		{"old value, new key with old as previous", rotated, sealedOld, "sk-old-secret-value"},
		{"new value, new key with old as previous", rotated, sealedNew, "sk-new-secret-value"},
		{"old value, new key alone", newBox(t, newKey), sealedOld, ""},
		{"old value, new key with another previous", newBox(t, newKey, otherKey), sealedOld, ""},
		{"old value, old key alone", newBox(t, oldKey), sealedOld, "sk-old-secret-value"},
		{"new value, old key with new as previous", newBox(t, oldKey, newKey), sealedNew, "sk-new-secret-value"},
		{"new value, old key alone", newBox(t, oldKey), sealedNew, ""},
		{"several previous keys", newBox(t, otherKey, newKey, oldKey), sealedOld, "sk-old-secret-value"},
		{"current repeated as previous", newBox(t, oldKey, oldKey, oldKey), sealedOld, "sk-old-secret-value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.box.Open(tc.sealed, "rec")
			if tc.want == "" {
				if !errors.Is(err, secrets.ErrUndecryptable) {
					t.Fatalf("Open = %q, %v; want ErrUndecryptable", got, err)
				}
				if !strings.Contains(err.Error(), "unknown key") {
					t.Errorf("error %q does not say the key is unknown", err)
				}
				checkClean(t, err, "sk-old-secret-value", "sk-new-secret-value")
				for _, k := range [][]byte{oldKey, newKey, otherKey} {
					checkClean(t, err, keyForms(k)...)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Open = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestOpenRefuses(t *testing.T) {
	k, prev := key(7), key(8)
	box := newBox(t, k, prev)
	const plaintext, aad = "sk-live-TOPSECRET-0123456789", "llmcfg:U#alice:cfg-1"
	sealed, err := box.Seal(plaintext, aad)
	if err != nil {
		t.Fatal(err)
	}
	m := sealedRE.FindStringSubmatch(sealed)
	kid, data := m[1], m[2]
	raw, _ := base64.RawURLEncoding.DecodeString(data)
	flip := func(i int) string {
		b := bytes.Clone(raw)
		b[i] ^= 0x01
		return "v1." + kid + "." + base64.RawURLEncoding.EncodeToString(b)
	}
	tests := []struct {
		name, sealed, aad, msg string
	}{
		{"wrong aad", sealed, "llmcfg:U#alice:cfg-2", "authentication failed"},
		{"another owner's record", sealed, "llmcfg:U#bob:cfg-1", "authentication failed"},
		{"empty aad", sealed, "", "authentication failed"},
		{"nonce tampered", flip(0), aad, "authentication failed"},
		{"ciphertext tampered", flip(14), aad, "authentication failed"},
		{"tag tampered", flip(len(raw) - 1), aad, "authentication failed"},
		{"truncated", "v1." + kid + "." + base64.RawURLEncoding.EncodeToString(raw[:len(raw)-1]), aad, "authentication failed"},
		{"too short", "v1." + kid + "." + base64.RawURLEncoding.EncodeToString(raw[:20]), aad, "too short"},
		{"extra data", "v1." + kid + "." + base64.RawURLEncoding.EncodeToString(append(bytes.Clone(raw), 0)), aad, "authentication failed"},
		{"sealed under the current key, labelled as the previous", "v1." + secrets.KeyID(prev) + "." + data, aad, "authentication failed"},
		{"unknown version", "v2." + kid + "." + data, aad, "unsupported format"},
		{"no version", kid + "." + data, aad, "unsupported format"},
		{"plaintext stored as is", plaintext, aad, "not a sealed value"},
		{"empty", "", aad, "not a sealed value"},
		{"no data", "v1." + kid, aad, "malformed"},
		{"empty key id", "v1.." + data, aad, "malformed"},
		{"unknown key id", "v1.00000000." + data, aad, "unknown key"},
		{"garbage key id", "v1.sk-live-TOPSECRET." + data, aad, "malformed key id"},
		{"padded base64", sealed + "==", aad, "malformed"},
		{"standard base64 alphabet", "v1." + kid + "." + strings.NewReplacer("-", "+", "_", "/").Replace(data) + "+/", aad, "malformed"},
		{"dots in data", sealed + ".x", aad, "malformed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := box.Open(tc.sealed, tc.aad)
			if !errors.Is(err, secrets.ErrUndecryptable) {
				t.Fatalf("Open = %q, %v; want ErrUndecryptable", got, err)
			}
			if got != "" {
				t.Errorf("Open returned %q with its error", got)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q, want it to say %q", err, tc.msg)
			}
			checkClean(t, err, plaintext, "TOPSECRET", data, data[:16])
			checkClean(t, err, keyForms(k)...)
			checkClean(t, err, keyForms(prev)...)
		})
	}
}

func TestNewBoxRefuses(t *testing.T) {
	k := key(9)
	tests := []struct {
		name     string
		current  []byte
		previous [][]byte
		msg      string
	}{
		{"nil current", nil, nil, "current key must be 32 bytes, got 0"},
		{"short current", k[:16], nil, "current key must be 32 bytes, got 16"},
		{"long current", append(bytes.Clone(k), 1), nil, "got 33"},
		{"short previous", k, [][]byte{key(1), key(2)[:31]}, "previous key 2 must be 32 bytes, got 31"},
		{"empty previous", k, [][]byte{{}}, "previous key 1 must be 32 bytes, got 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := secrets.NewBox(tc.current, tc.previous...)
			if err == nil {
				t.Fatalf("NewBox succeeded: %v", b)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q, want it to say %q", err, tc.msg)
			}
			checkClean(t, err, keyForms(k)...)
			checkClean(t, err, keyForms(k[:16])...)
		})
	}
}

func TestKeyID(t *testing.T) {
	seen := map[string]bool{}
	for i := range 64 {
		k := key(byte(i))
		id := secrets.KeyID(k)
		if !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(id) {
			t.Fatalf("KeyID = %q, want 8 lowercase hex characters", id)
		}
		if id != secrets.KeyID(bytes.Clone(k)) {
			t.Fatal("KeyID is not deterministic")
		}
		if seen[id] {
			t.Fatalf("KeyID %s repeated for different keys", id)
		}
		seen[id] = true
		sum := sha256.Sum256(k)
		for _, f := range append(keyForms(k), hex.EncodeToString(sum[:])[:8]) {
			if strings.Contains(f, id) {
				t.Errorf("KeyID %s is a plain rendering of the key or its hash", id)
			}
		}
	}
}

func TestHint(t *testing.T) {
	tests := []struct{ secret, want string }{
		{"", ""},
		{"a", "…"},
		{"ab", "…"},
		{"abc", "…c"},
		{"abcde", "…e"},
		{"abcdef", "…ef"},
		{"sk-1234567", "…67"},
		{"abcdefghijk", "…jk"},
		{"abcdefghijkl", "…ijkl"},
		{"sk-abcdefghijklmnop", "sk-…mnop"},
		{"sk-proj-abcdefghijklmnopqrstuvwxyz0123", "sk-…0123"},
		{"abc-defghijklmnop", "abc-…mnop"},
		{"abcd-efghijklmnop", "…mnop"},
		{"gsk_abcdefghijklmnop", "…mnop"},
		{"sk-ant-api03-abcdefghij-wxyz", "sk-…wxyz"},
		{"AIzaSyA-0123456789abcdefgh", "…efgh"},
		{"ключ-секретный", "…тный"},
		{"ключ-тайна", "…на"},
		{"sk-ключсекретный", "sk-…тный"},
	}
	for _, tc := range tests {
		t.Run(tc.secret, func(t *testing.T) {
			got := secrets.Hint(tc.secret)
			if got != tc.want {
				t.Errorf("Hint(%q) = %q, want %q", tc.secret, got, tc.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("Hint(%q) = %q is not valid UTF-8", tc.secret, got)
			}
		})
	}
	// A short key never shows more than a third of itself.
	for n := 1; n < 12; n++ {
		s := strings.Repeat("z", n)
		if shown := utf8.RuneCountInString(secrets.Hint(s)) - 1; shown*3 > n {
			t.Errorf("Hint of a %d-character key shows %d characters", n, shown)
		}
	}
}

// Package secrets seals the short secrets that agentchat stores for its
// users (the API keys of LLM configurations) with AES-256-GCM, and manages
// the local encryption key file.
//
// A sealed secret is the text "v1.<kid>.<data>": the format version, the id
// of the key that sealed it (KeyID) and base64url (unpadded) of the 12-byte
// nonce followed by the GCM ciphertext and tag. The caller's associated data
// (aad) is authenticated with it, together with the version and key id, so
// that a sealed value only opens for the record it was sealed for.
//
// Keys rotate by sealing under a new current key while the previous ones
// can still open what they sealed: NewBox(current, previous...).
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeyLen is the length of a key: AES-256.
const KeyLen = 32

// version is the first field of every sealed value.
const version = "v1"

// ErrUndecryptable means a sealed value cannot be opened: its format or key
// id is unknown, it was tampered with, or it belongs to another record.
var ErrUndecryptable = errors.New("secret cannot be decrypted")

// Box seals and opens short secrets (LLM API keys) with AES-256-GCM. It is
// safe for concurrent use.
type Box struct {
	kid  string                 // the current key's id
	aead map[string]cipher.AEAD // every key by id, the current one included
}

// NewBox returns a Box that seals under current, the 32-byte key, and opens
// what current or any of the previous keys (rotation) sealed. A previous key
// equal to current, or repeated, is ignored. The keys are not retained: the
// caller may clear them after the call.
func NewBox(current []byte, previous ...[]byte) (*Box, error) {
	b := &Box{aead: map[string]cipher.AEAD{}}
	seen := map[string]string{} // kid -> sha256 of the key, to tell a repeat from a collision
	add := func(what string, key []byte) error {
		if len(key) != KeyLen {
			return fmt.Errorf("secrets: %s must be %d bytes, got %d", what, KeyLen, len(key))
		}
		kid := KeyID(key)
		sum := sha256.Sum256(key)
		if prev, ok := seen[kid]; ok {
			if prev == string(sum[:]) {
				return nil // the same key again
			}
			return fmt.Errorf("secrets: %s has the same key id %s as another key; generate a new key", what, kid)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return fmt.Errorf("secrets: %s: %w", what, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return fmt.Errorf("secrets: %s: %w", what, err)
		}
		seen[kid] = string(sum[:])
		b.aead[kid] = aead
		return nil
	}
	if err := add("the current key", current); err != nil {
		return nil, err
	}
	b.kid = KeyID(current)
	for i, k := range previous {
		if err := add(fmt.Sprintf("previous key %d", i+1), k); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// additionalData is what GCM authenticates besides the ciphertext: the
// format version, the key id and the caller's aad, unambiguously joined
// (the version and key id never contain a NUL byte).
func additionalData(kid, aad string) []byte {
	return []byte(version + "\x00" + kid + "\x00" + aad)
}

// Seal encrypts plaintext under the current key and returns
// "v1.<kid>.<base64url(nonce||ciphertext)>". aad binds the ciphertext to
// its record (e.g. "llmcfg:<owner>:<config_id>"): Open with another aad
// fails, so a sealed value cannot be moved to another record.
func (b *Box) Seal(plaintext, aad string) (string, error) {
	aead := b.aead[b.kid]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("secrets: seal: read random nonce: %w", err)
	}
	data := aead.Seal(nonce, nonce, []byte(plaintext), additionalData(b.kid, aad))
	return version + "." + b.kid + "." + base64.RawURLEncoding.EncodeToString(data), nil
}

// Open decrypts a value returned by Seal with the same aad. The error wraps
// ErrUndecryptable when the format or the key id is unknown, the data was
// tampered with, or the aad differs; it never contains the plaintext, the
// sealed data or key material.
func (b *Box) Open(sealed, aad string) (string, error) {
	ver, rest, ok := strings.Cut(sealed, ".")
	if !ok {
		return "", fmt.Errorf("%w: not a sealed value", ErrUndecryptable)
	}
	if ver != version {
		return "", fmt.Errorf("%w: unsupported format version", ErrUndecryptable)
	}
	kid, enc, ok := strings.Cut(rest, ".")
	if !ok || kid == "" {
		return "", fmt.Errorf("%w: malformed sealed value", ErrUndecryptable)
	}
	aead, ok := b.aead[kid]
	if !ok {
		if !validKeyID(kid) {
			return "", fmt.Errorf("%w: malformed key id", ErrUndecryptable)
		}
		return "", fmt.Errorf("%w: sealed with unknown key %s (not the current key nor a previous one)", ErrUndecryptable, kid)
	}
	data, err := base64.RawURLEncoding.Strict().DecodeString(enc)
	if err != nil {
		return "", fmt.Errorf("%w: malformed sealed data", ErrUndecryptable)
	}
	if len(data) < aead.NonceSize()+aead.Overhead() {
		return "", fmt.Errorf("%w: sealed data too short", ErrUndecryptable)
	}
	nonce, ct := data[:aead.NonceSize()], data[aead.NonceSize():]
	pt, err := aead.Open(nil, nonce, ct, additionalData(kid, aad))
	if err != nil {
		return "", fmt.Errorf("%w: authentication failed (tampered with, or sealed for another record)", ErrUndecryptable)
	}
	return string(pt), nil
}

// keyIDLen is the length of a key id in hex characters.
const keyIDLen = 8

// validKeyID reports whether kid looks like a KeyID, so that an error can
// name it without echoing arbitrary stored data.
func validKeyID(kid string) bool {
	if len(kid) != keyIDLen {
		return false
	}
	_, err := hex.DecodeString(kid)
	return err == nil && strings.ToLower(kid) == kid
}

// KeyID is a short non-secret id of a key: the first 8 hex characters of
// SHA-256 over a domain-separated encoding of the key. It tells which key
// sealed a value; it reveals nothing usable about the key.
func KeyID(key []byte) string {
	h := sha256.New()
	h.Write([]byte("agentchat secrets key id v1\x00"))
	h.Write(key)
	return hex.EncodeToString(h.Sum(nil))[:keyIDLen]
}

// Hint masks a secret for display. A secret of 12 characters or more gives
// its prefix, the "…" sign and its last 4 characters: "sk-…abcd". The
// prefix is the secret up to and including its first '-', kept only when it
// is at most 4 characters long ("sk-", "pk-"), else left out ("…abcd").
// A shorter secret gives "…" and its last 2 characters, fewer when 2 would
// be more than a third of the secret ("…" alone under 3 characters); the
// empty secret gives "". Characters are counted as runes.
func Hint(secret string) string {
	if secret == "" {
		return ""
	}
	r := []rune(secret) // invalid UTF-8 bytes count as one character each
	n := len(r)
	if n < 12 {
		tail := min(2, n/3)
		return "…" + string(r[n-tail:])
	}
	prefix := ""
	for i, c := range r {
		if c == '-' {
			if i+1 <= 4 {
				prefix = string(r[:i+1])
			}
			break
		}
	}
	return prefix + "…" + string(r[n-4:])
}

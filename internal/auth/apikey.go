package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// API key format: APIKeyPrefix followed by 32 random bytes in unpadded
// base64url (43 characters), 47 characters in all, for example
// "ack_3q2-7wz...". Only HashAPIKey(secret) is stored; the first
// APIKeyDisplayLen characters are kept as a display prefix.
const (
	APIKeyPrefix     = "ack_"
	apiKeyRandBytes  = 32
	APIKeyLen        = len(APIKeyPrefix) + 43
	APIKeyDisplayLen = len(APIKeyPrefix) + 8
)

// GenerateAPIKey returns a new API key secret (shown to its owner once),
// its display prefix and its hash (hex SHA-256, what the store keeps).
func GenerateAPIKey() (secret, prefix, hash string, err error) {
	b := make([]byte, apiKeyRandBytes)
	if _, err := rand.Read(b); err != nil {
		return "", "", "", fmt.Errorf("generate api key: %w", err)
	}
	secret = APIKeyPrefix + base64.RawURLEncoding.EncodeToString(b)
	return secret, secret[:APIKeyDisplayLen], HashAPIKey(secret), nil
}

// HashAPIKey returns the hex SHA-256 of an API key secret. Keys carry 256
// random bits, so a fast unsalted hash is safe, and the lookup is by hash
// (an index lookup, not a comparison of secrets), so no constant-time
// compare is needed.
func HashAPIKey(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// IsAPIKey reports whether a bearer credential looks like an API key (as
// opposed to a JWT).
func IsAPIKey(credential string) bool { return strings.HasPrefix(credential, APIKeyPrefix) }

// wellFormedAPIKey checks the exact format, so garbage never reaches the store.
func wellFormedAPIKey(s string) bool {
	if len(s) != APIKeyLen || !IsAPIKey(s) {
		return false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s[len(APIKeyPrefix):])
	return err == nil && len(b) == apiKeyRandBytes
}

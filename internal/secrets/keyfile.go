package secrets

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// KeyFileName is the name of the key file in the data directory.
const KeyFileName = "encryption.key"

// LoadOrCreateKey returns the key stored as base64 in dir/encryption.key.
// When the file does not exist it creates it with 32 random bytes (file
// mode 0600, and dir with mode 0700 when it does not exist either). An
// existing file that others may read or write (any permission bit beyond
// 0600), that is not a regular file, or that does not hold the base64 of 32
// bytes is an error that says so, without showing its content. Two
// processes creating the key at once end up with the same key.
func LoadOrCreateKey(dir string) ([]byte, error) {
	if dir == "" {
		return nil, errors.New("encryption key file: empty directory")
	}
	path := filepath.Join(dir, KeyFileName)
	key, err := readKeyFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("encryption key file: create directory %s: %w", dir, err)
	}
	key = make([]byte, KeyLen)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("encryption key file: read random key: %w", err)
	}
	created, err := createKeyFile(dir, path, key)
	if err != nil {
		return nil, err
	}
	if !created { // another process created it first: use its key
		return readKeyFile(path)
	}
	return key, nil
}

// readKeyFile reads and checks an existing key file; an error wrapping
// fs.ErrNotExist when there is none.
func readKeyFile(path string) ([]byte, error) {
	fi, err := os.Stat(path) // a symbolic link (a mounted secret) is followed
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("encryption key file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("encryption key file %s is not a regular file (%s)", path, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&0o177 != 0 && runtime.GOOS != "windows" {
		return nil, fmt.Errorf("encryption key file %s has permissions %04o, want 0600 (readable and writable by its owner only): run chmod 600 %s",
			path, perm, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("encryption key file %s: %w", path, err)
	}
	key, err := decodeKey(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("encryption key file %s does not hold a base64 key", path)
	}
	if len(key) != KeyLen {
		return nil, fmt.Errorf("encryption key file %s must hold the base64 of %d bytes, got %d bytes", path, KeyLen, len(key))
	}
	return key, nil
}

// createKeyFile writes key to path unless a file is already there. The key
// is written to a temporary file first and linked into place, so that no
// reader ever sees a partial key file. It reports whether it created the
// file (false: one already existed).
func createKeyFile(dir, path string, key []byte) (bool, error) {
	content := []byte(base64.StdEncoding.EncodeToString(key) + "\n")
	tmp, err := os.CreateTemp(dir, "."+KeyFileName+".*") // mode 0600
	if err != nil {
		return false, fmt.Errorf("encryption key file: %w", err)
	}
	tmpName := tmp.Name()
	defer func() { _ = os.Remove(tmpName) }()
	_, werr := tmp.Write(content)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return false, fmt.Errorf("encryption key file: write %s: %w", tmpName, werr)
	}
	err = os.Link(tmpName, path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil
	}
	// No hard links on this file system: create the file exclusively.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("encryption key file %s: %w", path, err)
	}
	_, werr = f.Write(content)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(path)
		return false, fmt.Errorf("encryption key file %s: %w", path, werr)
	}
	return true, nil
}

// decodeKey accepts standard or URL-safe base64, padded or not.
func decodeKey(v string) ([]byte, error) {
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		var b []byte
		if b, err = enc.DecodeString(v); err == nil {
			return b, nil
		}
	}
	return nil, err
}

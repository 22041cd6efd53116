package secrets_test

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"agentchat/internal/secrets"
)

func TestLoadOrCreateKeyCreates(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes are not Unix permissions on Windows")
	}
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
	}{
		{"missing nested directory", func(t *testing.T) string { return filepath.Join(t.TempDir(), "a", "data") }},
		{"existing directory", func(t *testing.T) string { return t.TempDir() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir(t)
			_, statErr := os.Stat(dir)
			existed := statErr == nil
			k1, err := secrets.LoadOrCreateKey(dir)
			if err != nil {
				t.Fatalf("LoadOrCreateKey: %v", err)
			}
			if len(k1) != secrets.KeyLen || bytes.Equal(k1, make([]byte, secrets.KeyLen)) {
				t.Fatalf("key of %d bytes: %x", len(k1), k1)
			}
			path := filepath.Join(dir, secrets.KeyFileName)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if perm := fi.Mode().Perm(); perm != 0o600 {
				t.Errorf("key file mode %04o, want 0600", perm)
			}
			if !existed {
				di, err := os.Stat(dir)
				if err != nil {
					t.Fatal(err)
				}
				if perm := di.Mode().Perm(); perm != 0o700 {
					t.Errorf("created directory mode %04o, want 0700", perm)
				}
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b))); err != nil || !bytes.Equal(got, k1) {
				t.Errorf("key file holds %q, want the base64 of the key", b)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("directory holds %d entries, want only the key file (no temporary file left)", len(entries))
			}

			k2, err := secrets.LoadOrCreateKey(dir)
			if err != nil {
				t.Fatalf("second LoadOrCreateKey: %v", err)
			}
			if !bytes.Equal(k1, k2) {
				t.Error("second call returned another key: the file was not reused")
			}
			if _, err := secrets.NewBox(k1); err != nil {
				t.Errorf("NewBox with the created key: %v", err)
			}
		})
	}
}

func TestLoadOrCreateKeyConcurrent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	const n = 8
	keys := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { keys[i], errs[i] = secrets.LoadOrCreateKey(dir) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("LoadOrCreateKey %d: %v", i, errs[i])
		}
		if !bytes.Equal(keys[i], keys[0]) {
			t.Fatalf("concurrent creators got different keys")
		}
	}
}

func TestLoadOrCreateKeyExisting(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes are not Unix permissions on Windows")
	}
	good := bytes.Repeat([]byte{0x5a}, secrets.KeyLen)
	const secretText = "TOPSECRETCONTENT"
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		dir     bool // a directory instead of a file
		want    []byte
		msg     string // error fragment
	}{
		{name: "valid, 0600", content: base64.StdEncoding.EncodeToString(good) + "\n", mode: 0o600, want: good},
		{name: "valid, 0400", content: base64.StdEncoding.EncodeToString(good), mode: 0o400, want: good},
		{name: "valid url-safe unpadded", content: base64.RawURLEncoding.EncodeToString(good), mode: 0o600, want: good},
		{name: "group readable", content: base64.StdEncoding.EncodeToString(good), mode: 0o640, msg: "permissions 0640, want 0600"},
		{name: "world readable", content: base64.StdEncoding.EncodeToString(good), mode: 0o644, msg: "permissions 0644, want 0600"},
		{name: "executable", content: base64.StdEncoding.EncodeToString(good), mode: 0o700, msg: "permissions 0700"},
		{name: "16 bytes", content: base64.StdEncoding.EncodeToString(good[:16]), mode: 0o600, msg: "must hold the base64 of 32 bytes, got 16 bytes"},
		{name: "not base64", content: secretText + "!!", mode: 0o600, msg: "does not hold a base64 key"},
		{name: "empty", content: "", mode: 0o600, msg: "got 0 bytes"},
		{name: "a directory", dir: true, msg: "not a regular file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, secrets.KeyFileName)
			if tc.dir {
				if err := os.Mkdir(path, 0o700); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tc.mode); err != nil {
					t.Fatal(err)
				}
			}
			got, err := secrets.LoadOrCreateKey(dir)
			if tc.msg == "" {
				if err != nil || !bytes.Equal(got, tc.want) {
					t.Fatalf("LoadOrCreateKey = %x, %v; want %x", got, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("LoadOrCreateKey succeeded with %x", got)
			}
			if !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q, want it to name %s and say %q", err, path, tc.msg)
			}
			checkClean(t, err, secretText, base64.StdEncoding.EncodeToString(good), base64.StdEncoding.EncodeToString(good[:16]))
			if !tc.dir {
				if b, _ := os.ReadFile(path); string(b) != tc.content {
					t.Error("the refused key file was modified")
				}
			}
		})
	}
}

func TestLoadOrCreateKeyEmptyDir(t *testing.T) {
	if _, err := secrets.LoadOrCreateKey(""); err == nil {
		t.Fatal("LoadOrCreateKey(\"\") succeeded")
	}
}

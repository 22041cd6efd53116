package webui

import "testing"

// The content type of a built file comes from its extension, the same on
// every host.
func TestContentTypes(t *testing.T) {
	for name, want := range map[string]string{
		"app-X.js": "text/javascript; charset=utf-8", "LICENSES.txt": "text/plain; charset=utf-8",
		"icon.svg": "image/svg+xml", "index.html": "text/html; charset=utf-8", "blob.bin": "application/octet-stream",
	} {
		f, err := newFile(name, []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		if f.ctype != want {
			t.Errorf("%s: %q, want %q", name, f.ctype, want)
		}
	}
}

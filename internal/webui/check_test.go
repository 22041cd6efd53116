package webui

import (
	"testing"
	"testing/fstest"
)

// check, Routes' check at start, refuses what load refuses and accepts
// what it accepts.
func TestCheckAgreesWithLoad(t *testing.T) {
	index := `<script src="/assets/app-ABCD1234.js"></script>`
	cases := map[string]fstest.MapFS{
		"complete": {"dist/index.html": {Data: []byte(index)}, "dist/app-ABCD1234.js": {Data: []byte("x")}},
		"no index": {"dist/app-ABCD1234.js": {Data: []byte("x")}},
		"no asset": {"dist/index.html": {Data: []byte(index)}},
		"asset in a folder": {"dist/index.html": {Data: []byte(`<link href="/assets/sub/a.css">`)},
			"dist/sub/a.css": {Data: []byte("x")}},
	}
	for name, fsys := range cases {
		_, loadErr := load(fsys)
		if err := check(fsys); (err == nil) != (loadErr == nil) {
			t.Errorf("%s: check says %v, load %v", name, err, loadErr)
		}
	}
	if err := check(dist); err != nil {
		t.Fatalf("the embedded console: %v", err)
	}
}

package webui_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"agentchat/internal/httpapi"
	"agentchat/internal/localserver"
	"agentchat/internal/webui"
)

// server serves the console's routes through the API's router, as the
// local server mounts them.
func server(t *testing.T) *httptest.Server {
	t.Helper()
	c, err := webui.New()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.NewRouter(httpapi.Deps{SingleUser: true}, c.Routes()...))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	// Accept-Encoding set by hand: the transport does not decompress.
	if _, ok := header["Accept-Encoding"]; !ok {
		req.Header.Set("Accept-Encoding", "identity")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

func distFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("dist", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// assets returns the names of the bundle's script and stylesheet.
func assets(t *testing.T) (js, css string) {
	t.Helper()
	for _, ref := range webui.AssetRefs(distFile(t, "index.html")) {
		switch {
		case strings.HasSuffix(ref, ".js"):
			js = ref
		case strings.HasSuffix(ref, ".css"):
			css = ref
		}
	}
	if js == "" || css == "" {
		t.Fatalf("index.html names no script or no stylesheet (script %q, stylesheet %q)", js, css)
	}
	return js, css
}

func TestIndex(t *testing.T) {
	srv := server(t)
	res, body := get(t, srv.URL+"/", nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /: %d %s", res.StatusCode, body)
	}
	for k, want := range map[string]string{
		"Content-Type":            "text/html; charset=utf-8",
		"Cache-Control":           "no-cache",
		"Content-Security-Policy": webui.ContentSecurityPolicy,
		"X-Content-Type-Options":  "nosniff",
		"X-Frame-Options":         "DENY",
		"Referrer-Policy":         "no-referrer",
	} {
		if got := res.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if !bytes.Equal(body, distFile(t, "index.html")) {
		t.Error("GET / is not dist/index.html")
	}
	if !bytes.Contains(body, []byte(`id="messages"`)) {
		t.Error("index.html has no conversation")
	}
	etag := res.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	res, _ = get(t, srv.URL+"/", map[string]string{"If-None-Match": etag})
	if res.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", res.StatusCode)
	}
}

func TestAssets(t *testing.T) {
	srv := server(t)
	js, css := assets(t)
	for name, ctype := range map[string]string{js: "text/javascript; charset=utf-8", css: "text/css; charset=utf-8"} {
		res, body := get(t, srv.URL+"/assets/"+name, nil)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET /assets/%s: %d", name, res.StatusCode)
		}
		if got := res.Header.Get("Content-Type"); got != ctype {
			t.Errorf("%s: Content-Type %q, want %q", name, got, ctype)
		}
		if got := res.Header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q, want immutable (the name carries a content hash)", name, got)
		}
		if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q", name, got)
		}
		if !bytes.Equal(body, distFile(t, name)) {
			t.Errorf("%s: body is not the file in dist", name)
		}

		// Compressed when the client accepts it, the same bytes inside.
		res, gz := get(t, srv.URL+"/assets/"+name, map[string]string{"Accept-Encoding": "br, gzip"})
		if res.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(res.Header.Get("Vary"), "Accept-Encoding") {
			t.Fatalf("%s with Accept-Encoding gzip: Content-Encoding %q, Vary %q", name, res.Header.Get("Content-Encoding"), res.Header.Get("Vary"))
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(plain, body) {
			t.Errorf("%s: gzip body does not decompress to the file (%v)", name, err)
		}
		if res.Header.Get("ETag") == "" {
			t.Errorf("%s: no ETag", name)
		}
		res, _ = get(t, srv.URL+"/assets/"+name, map[string]string{"Accept-Encoding": "gzip;q=0"})
		if res.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s: gzip;q=0 still got %q", name, res.Header.Get("Content-Encoding"))
		}
	}
	res, _ := get(t, srv.URL+"/assets/nope.js", nil)
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("unknown asset: %d, want 404", res.StatusCode)
	}
	res, _ = get(t, srv.URL+"/assets/LICENSES.txt", nil)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("LICENSES.txt: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/", nil)
	post, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	post.Body.Close()
	if post.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d, want 405", post.StatusCode)
	}
}

// urlPattern finds absolute and protocol-relative URLs.
var urlPattern = regexp.MustCompile(`(?i)(?:https?:)?//[a-z0-9-]+(?:\.[a-z0-9-]+)+[^\s"'` + "`" + `)]*`)

// allowedURLs are URLs the bundled libraries name without loading them:
// XML namespaces (DOMPurify, the inline favicon) and a link in a message.
var allowedURLs = regexp.MustCompile(`^(?i)(?:https?:)?//(?:www\.w3\.org/(?:1999/xhtml|2000/svg|1998/Math/MathML)|github\.com/markedjs/marked)`)

// The page loads nothing from elsewhere: no CDN, no remote font, no
// absolute URL in the bundle but XML namespaces; scripts and styles from
// /assets/ only. (The browser tests also watch every request the page
// makes, and the Content-Security-Policy enforces it.)
func TestNoExternalURLs(t *testing.T) {
	js, css := assets(t)
	for _, name := range []string{"index.html", js, css} {
		body := distFile(t, name)
		if name == "index.html" {
			// The inline favicon is URL-encoded SVG.
			body = bytes.ReplaceAll(body, []byte("http://www.w3.org/2000/svg"), nil)
		}
		for _, u := range urlPattern.FindAll(body, -1) {
			if !allowedURLs.Match(u) {
				t.Errorf("%s names an external URL: %s", name, u)
			}
		}
	}
	idx := distFile(t, "index.html")
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllSubmatch(idx, -1) {
		v := string(m[1])
		if !strings.HasPrefix(v, "/assets/") && !strings.HasPrefix(v, "data:") {
			t.Errorf("index.html loads %q (want /assets/ or data:)", v)
		}
	}
	style := distFile(t, css)
	if bytes.Contains(style, []byte("@import")) || regexp.MustCompile(`url\((?:["']?)(?:https?:)?//`).Match(style) {
		t.Errorf("%s loads a remote stylesheet or resource", css)
	}
	const maxBundle = 160 << 10
	if n := len(distFile(t, js)); n > maxBundle {
		t.Errorf("%s is %d bytes, more than %d: keep the bundle small", js, n, maxBundle)
	}
}

// dist holds only what the build writes: the page, the hashed bundle and
// stylesheet, and the licenses of the bundled packages.
func TestDistContents(t *testing.T) {
	js, css := assets(t)
	entries, err := os.ReadDir("dist")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"index.html": true, js: true, css: true, "LICENSES.txt": true}
	for _, e := range entries {
		if !want[e.Name()] {
			t.Errorf("dist/%s is not part of the build (stale? run make web)", e.Name())
		}
		delete(want, e.Name())
	}
	for name := range want {
		t.Errorf("dist/%s is missing", name)
	}
	if !bytes.Contains(distFile(t, "LICENSES.txt"), []byte("marked")) || !bytes.Contains(distFile(t, "LICENSES.txt"), []byte("dompurify")) {
		t.Error("LICENSES.txt lacks the licenses of marked and dompurify")
	}
}

// The console is served by the local server, with its single-user checks
// (another host name is refused: no DNS rebinding of the page either).
func TestLocalServerServesConsole(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	env := map[string]string{"ADDR": "127.0.0.1:0", "DATA_DIR": dir, "LOG_LEVEL": "error"}
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- localserver.Run(ctx, func(k string) string { return env[k] }, io.Discard, io.Discard, ready)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("local server: %v", err)
		}
	})
	var addr string
	select {
	case addr = <-ready:
	case err := <-errc:
		t.Fatalf("local server: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the local server did not start")
	}
	res, body := get(t, "http://"+addr+"/", nil)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	js, _ := assets(t)
	if !bytes.Contains(body, []byte("/assets/"+js)) {
		t.Error("the page does not name the bundle")
	}
	res, _ = get(t, "http://"+addr+"/assets/"+js, nil)
	if res.StatusCode != http.StatusOK {
		t.Errorf("GET the bundle: %d", res.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	req.Host = "attacker.example"
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != http.StatusForbidden {
		t.Errorf("GET / for another host name: %d, want 403", r2.StatusCode)
	}
}

// No Lambda function links the console: only functions/local (and its
// build with DynamoDB, functions/local/withdynamo) serves it.
func TestNoFunctionLinksConsole(t *testing.T) {
	if testing.Short() {
		t.Skip("go list of every function")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goCmd, "list", "-tags", "lambda.norpc", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./functions/...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const pkg = "agentchat/internal/webui"
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		seen++
		links := false
		for _, d := range f[1:] {
			if d == pkg {
				links = true
			}
		}
		// The local server, and its build with DynamoDB.
		local := f[0] == "agentchat/functions/local" || f[0] == "agentchat/functions/local/withdynamo"
		switch {
		case local && !links:
			t.Errorf("%s does not link %s: the local server has no console", f[0], pkg)
		case !local && links:
			t.Errorf("%s links %s: only the local server serves the console", f[0], pkg)
		}
	}
	if seen < 2 {
		t.Fatalf("go list listed %d functions", seen)
	}
}

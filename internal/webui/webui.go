// Package webui serves the web console of the local server: the chat page
// built from web/ (TypeScript bundled by esbuild into dist/, committed) and
// embedded in the binary. Only the local server mounts it; no Lambda
// function links this package.
//
// index.html is never cached (it names the assets); the assets carry a
// content hash in their names and are cached for good. Every response of
// the console forbids loading anything from elsewhere (Content-Security-
// Policy): the page talks to this server only.
package webui

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"agentchat/internal/httpapi"
)

//go:embed dist
var dist embed.FS

// Paths of the console.
const (
	PathIndex  = "/{$}"
	PathAssets = "/assets/{name}"
)

// ContentSecurityPolicy is the policy of every response of the console:
// scripts, styles and requests of this origin only, images only inline.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self' data:; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Cache policies.
const (
	cacheIndex     = "no-cache"
	cacheImmutable = "public, max-age=31536000, immutable"
	cacheOther     = "public, max-age=300"
)

// hashed matches the names esbuild gives the bundle ("app-ABCD1234.js").
var hashed = regexp.MustCompile(`-[A-Z0-9]{8}\.(js|css)$`)

// file is one embedded file, ready to serve.
type file struct {
	body  []byte
	gz    []byte // nil when compression does not pay
	ctype string
	cache string
	etag  string
}

// Console serves the embedded files.
type Console struct {
	index  *file
	assets map[string]*file
}

// New loads the console from the embedded dist folder.
func New() (*Console, error) { return load(dist) }

// shared is the console of Routes, loaded on its first request: the files
// and their compressed copies are a quarter of a MiB of heap, held for the
// process's life, and most of the local server's uses (the API, /v1)
// never ask for the page.
var shared = sync.OnceValues(New)

// Routes returns the console's routes (public: the page asks for
// credentials itself when the server needs them), or panics when the
// embedded files are broken (a build mistake, caught by the tests). The
// files are checked now and loaded on the first request.
func Routes() []httpapi.Route {
	if err := check(dist); err != nil {
		panic(err)
	}
	lazy := func(serve func(*Console, http.ResponseWriter, *http.Request)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			c, err := shared()
			if err != nil { // checked by Routes: not expected
				httpapi.Error(w, r, http.StatusInternalServerError, "The web console is not available")
				return
			}
			serve(c, w, r)
		}
	}
	return []httpapi.Route{
		{Method: http.MethodGet, Path: PathIndex, Handler: lazy((*Console).serveIndex), Public: true},
		{Method: http.MethodGet, Path: PathAssets, Handler: lazy((*Console).serveAsset), Public: true},
	}
}

// check finds in fsys what load needs: a dist folder whose index.html
// names only files the folder has. It keeps nothing it read.
func check(fsys fs.FS) error {
	sub, err := fs.Sub(fsys, "dist")
	if err != nil {
		return err
	}
	index, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		return fmt.Errorf("webui: dist has no index.html (run make web): %w", err)
	}
	for _, ref := range AssetRefs(index) {
		// load keeps the folder's own files only, by name.
		if st, err := fs.Stat(sub, ref); err != nil || st.IsDir() || strings.Contains(ref, "/") {
			return fmt.Errorf("webui: index.html names /assets/%s, which dist lacks (run make web)", ref)
		}
	}
	return nil
}

// Routes returns the console's routes.
func (c *Console) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: http.MethodGet, Path: PathIndex, Handler: c.serveIndex, Public: true},
		{Method: http.MethodGet, Path: PathAssets, Handler: c.serveAsset, Public: true},
	}
}

func load(fsys fs.FS) (*Console, error) {
	sub, err := fs.Sub(fsys, "dist")
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(sub, ".")
	if err != nil {
		return nil, fmt.Errorf("webui: read dist: %w", err)
	}
	c := &Console{assets: map[string]*file{}}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		body, err := fs.ReadFile(sub, e.Name())
		if err != nil {
			return nil, fmt.Errorf("webui: read %s: %w", e.Name(), err)
		}
		f, err := newFile(e.Name(), body)
		if err != nil {
			return nil, err
		}
		if e.Name() == "index.html" {
			f.cache = cacheIndex
			c.index = f
			continue
		}
		c.assets[e.Name()] = f
	}
	if c.index == nil {
		return nil, fmt.Errorf("webui: dist has no index.html (run make web)")
	}
	for _, ref := range AssetRefs(c.index.body) {
		if _, ok := c.assets[ref]; !ok {
			return nil, fmt.Errorf("webui: index.html names /assets/%s, which dist lacks (run make web)", ref)
		}
	}
	return c, nil
}

var assetRef = regexp.MustCompile(`(?:src|href)="/assets/([^"]+)"`)

// AssetRefs returns the asset names an index.html refers to.
func AssetRefs(index []byte) []string {
	var out []string
	for _, m := range assetRef.FindAllSubmatch(index, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// contentTypes are the content types of the files a build writes to dist,
// by extension. The console's own table rather than mime.TypeByExtension,
// which reads the host's MIME tables (several hundred kB of heap, for
// the rest of the process's life) and could answer differently per host.
var contentTypes = map[string]string{
	".html":        "text/html; charset=utf-8",
	".js":          "text/javascript; charset=utf-8",
	".css":         "text/css; charset=utf-8",
	".txt":         "text/plain; charset=utf-8",
	".json":        "application/json",
	".map":         "application/json",
	".webmanifest": "application/manifest+json",
	".svg":         "image/svg+xml",
	".png":         "image/png",
	".ico":         "image/x-icon",
	".woff2":       "font/woff2",
}

func newFile(name string, body []byte) (*file, error) {
	ctype, ok := contentTypes[path.Ext(name)]
	if !ok {
		ctype = "application/octet-stream"
	}
	sum := sha256.Sum256(body)
	f := &file{body: body, ctype: ctype, cache: cacheOther, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
	if hashed.MatchString(name) {
		f.cache = cacheImmutable
	}
	if len(body) > 1024 {
		var b bytes.Buffer
		zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
		if err != nil {
			return nil, err
		}
		_, _ = zw.Write(body)
		if err := zw.Close(); err != nil {
			return nil, fmt.Errorf("webui: gzip %s: %w", name, err)
		}
		if b.Len() < len(body)*9/10 {
			f.gz = b.Bytes()
		}
	}
	return f, nil
}

func (c *Console) serveIndex(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	c.index.serve(w, r)
}

func (c *Console) serveAsset(w http.ResponseWriter, r *http.Request) {
	f, ok := c.assets[r.PathValue("name")]
	if !ok {
		httpapi.Error(w, r, http.StatusNotFound, "Not found")
		return
	}
	f.serve(w, r)
}

func (f *file) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Type", f.ctype)
	h.Set("Cache-Control", f.cache)
	body, etag := f.body, f.etag
	if f.gz != nil {
		h.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			body, etag = f.gz, strings.TrimSuffix(f.etag, `"`)+`-gz"`
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("ETag", etag)
	if etagMatch(r.Header.Get("If-None-Match"), etag) {
		h.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// acceptsGzip reports whether an Accept-Encoding value allows gzip.
func acceptsGzip(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// etagMatch reports whether If-None-Match names etag (or is "*").
func etagMatch(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

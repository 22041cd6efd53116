package llm_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"agentchat/internal/config"
	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"
)

// victim is a listener an attacker's base URL aims at: it must see no
// connection.
type victim struct {
	ln   net.Listener
	port string
	mu   sync.Mutex
	seen []string // remote addresses accepted
	// sentinels are the connections of connections itself.
	sentinels map[string]bool
	done      chan struct{}
}

// listenVictim listens on host (any port); ok is false when the host
// cannot be bound here (an IPv6 loopback on a host without IPv6).
func listenVictim(t *testing.T, host string) (*victim, bool) {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, false
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	v := &victim{ln: ln, port: port, done: make(chan struct{}), sentinels: map[string]bool{}}
	go func() {
		defer close(v.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			v.mu.Lock()
			v.seen = append(v.seen, c.RemoteAddr().String())
			v.mu.Unlock()
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-v.done })
	return v, true
}

// connections returns how many connections the victim accepted before
// now: it connects itself and waits until the listener accepted that
// connection (the backlog is accepted in order), so that a connection the
// client made is never still waiting to be counted.
func (v *victim) connections(t *testing.T) int {
	t.Helper()
	c, err := net.Dial("tcp", v.ln.Addr().String())
	if err != nil {
		t.Fatalf("sentinel: %v", err)
	}
	defer c.Close()
	mine := c.LocalAddr().String()
	deadline := time.Now().Add(waitLimit)
	for time.Now().Before(deadline) {
		v.mu.Lock()
		n := 0
		for _, s := range v.seen {
			switch {
			case s == mine:
				v.sentinels[mine] = true
				v.mu.Unlock()
				return n
			case !v.sentinels[s]:
				n++
			}
		}
		v.mu.Unlock()
		select {
		case <-v.done:
			t.Fatal("victim listener closed")
		default:
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the sentinel connection was never accepted")
	return 0
}

// allowScripted is LLM_ALLOW_PRIVATE_HOSTS=127.0.0.1/32: the scripted
// servers of the tests listen there, the victims on 127.0.0.2 and ::1.
var allowScripted = config.HostAllowList{Prefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}

// guardedClient is a user's configuration at baseURL, called through the
// guarded pool; the base URL is not checked early (CheckURL), so that the
// connection-time check is what is tested.
func guardedClient(t *testing.T, baseURL string, g llm.Guard) llm.Client {
	t.Helper()
	c, err := llm.NewClient(llm.Config{APIKey: testKey, BaseURL: baseURL, Model: "m", MaxRetries: -1},
		llm.WithHTTPClient(llm.NewGuardedHTTPClient(g)), llm.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestGuardedClientConnectsNowhereItMustNot: a user's base URL aiming at
// the server itself, its network or a metadata service, written plainly,
// obfuscated, behind a host name or behind a redirect of an allowed model
// server, makes no connection there, and the error says why.
func TestGuardedClientConnectsNowhereItMustNot(t *testing.T) {
	v4, ok := listenVictim(t, "127.0.0.2")
	if !ok {
		t.Skip("127.0.0.2 cannot be bound here")
	}
	v6, has6 := listenVictim(t, "::1")

	// The model server the redirects come from, allowed.
	var mu sync.Mutex
	var to string
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		defer mu.Unlock()
		http.Redirect(w, r, to, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)

	// Names resolve through the hook, never through DNS.
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "victim.test":
			return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
		case "intranet.test":
			return []netip.Addr{netip.MustParseAddr("10.0.0.5")}, nil
		case "metadata.test":
			return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
		case "mixed.test": // the allowed address is tried, not the victim
			return []netip.Addr{netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("10.0.0.5")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	g := llm.Guard{Allow: allowScripted, Lookup: lookup}
	p := v4.port
	tests := []struct {
		name    string
		baseURL string // "": the redirector, which sends to redirectTo
		to      string
		want    string // in the user message
		v6      bool
	}{
		{"loopback", "http://127.0.0.2:" + p + "/v1", "", "loopback address (127.0.0.2)", false},
		{"short form", "http://127.2:" + p + "/v1", "", "loopback address (127.0.0.2)", false},
		{"hexadecimal", "http://0x7f000002:" + p + "/v1", "", "loopback address (127.0.0.2)", false},
		{"decimal", "http://2130706434:" + p + "/v1", "", "loopback address (127.0.0.2)", false},
		{"octal", "http://0177.0.0.02:" + p + "/v1", "", "loopback address (127.0.0.2)", false},
		{"mapped IPv6", "http://[::ffff:127.0.0.2]:" + p + "/v1", "", "loopback address (127.0.0.2)", false},
		{"name of a loopback address", "http://victim.test:" + p + "/v1", "", "victim.test resolves to a loopback address", false},
		{"name of a private address", "http://intranet.test:" + p + "/v1", "", "resolves to a private network address", false},
		{"name of the metadata address", "http://metadata.test/latest", "", "resolves to a link-local or cloud metadata address", false},
		{"names with no allowed address", "http://mixed.test:" + p + "/v1", "", "mixed.test resolves to a loopback address", false},
		{"metadata", "http://169.254.169.254/latest", "", "link-local or cloud metadata address (169.254.169.254)", false},
		{"unspecified", "http://0.0.0.0:" + p + "/v1", "", "unspecified address", false},
		{"redirect to loopback", "", "http://127.0.0.2:" + p + "/v1/chat/completions", "redirect (HTTP 307)", false},
		{"redirect to a name", "", "http://victim.test:" + p + "/v1/chat/completions", "redirect (HTTP 307)", false},
		{"redirect to metadata", "", "http://169.254.169.254/latest/meta-data/", "redirect (HTTP 307)", false},
		{"IPv6 loopback", "http://[::1]:" + portOf(v6) + "/v1", "", "loopback address (::1)", true},
		{"redirect to IPv6 loopback", "", "http://[::1]:" + portOf(v6) + "/v1/chat/completions", "redirect (HTTP 307)", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.v6 && !has6 {
				t.Skip("::1 cannot be bound here")
			}
			base := tt.baseURL
			if base == "" {
				base = redirector.URL + "/v1"
				mu.Lock()
				to = tt.to
				mu.Unlock()
			}
			c := guardedClient(t, base, g)
			for _, call := range []func() error{
				func() error { _, err := c.Stream(context.Background(), userMsg("hi"), nil); return err },
				func() error { _, err := c.Complete(context.Background(), userMsg("hi")); return err },
			} {
				err := call()
				if err == nil || !strings.Contains(llm.UserMessage(err), tt.want) {
					t.Fatalf("error %v, user message %q: want %q", err, llm.UserMessage(err), tt.want)
				}
				if strings.Contains(llm.UserMessage(err), testKey) || strings.Contains(err.Error(), testKey) {
					t.Fatalf("the error holds the key: %v", err)
				}
			}
			if n := v4.connections(t); n != 0 {
				t.Fatalf("the victim on 127.0.0.2 accepted %d connections", n)
			}
			if has6 {
				if n := v6.connections(t); n != 0 {
					t.Fatalf("the victim on ::1 accepted %d connections", n)
				}
			}
		})
	}

	// The control: without the guard (the operator's client), the same
	// URL reaches the victim, which the count sees.
	c := newClient(t, "http://127.0.0.2:"+p+"/v1", func(c *llm.Config) { c.MaxRetries = -1 })
	_, _ = c.Stream(context.Background(), userMsg("hi"), nil)
	if n := v4.connections(t); n != 1 {
		t.Fatalf("unguarded: the victim accepted %d connections, want 1", n)
	}
}

func portOf(v *victim) string {
	if v == nil {
		return "1"
	}
	return v.port
}

// TestGuardedClientReachesWhatIsAllowed: the guard lets through what
// LLM_ALLOW_PRIVATE_HOSTS names, by network or by host name (whatever it
// resolves to), skips a name's refused addresses for its allowed ones, and
// the operator's unguarded client reaches loopback.
func TestGuardedClientReachesWhatIsAllowed(t *testing.T) {
	v4, ok := listenVictim(t, "127.0.0.2")
	if !ok {
		t.Skip("127.0.0.2 cannot be bound here")
	}
	srv := llmtest.NewServer(t)
	srv.SetDefault(llmtest.Reply{Text: "hello"})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		switch strings.ToLower(strings.TrimSuffix(host, ".")) {
		case "model.test":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		case "mixed.test":
			return []netip.Addr{netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	byName := llm.Guard{Allow: config.HostAllowList{Hosts: []string{"model.test"}}, Lookup: lookup}
	byNet := llm.Guard{Allow: allowScripted, Lookup: lookup}
	tests := []struct {
		name    string
		baseURL string
		g       llm.Guard
		ok      bool
	}{
		{"allowed network", srv.BaseURL(), byNet, true},
		{"allowed host name", "http://model.test:" + port + "/v1", byName, true},
		{"allowed host name, upper case", "http://MODEL.test.:" + port + "/v1", byName, true},
		{"the address of an allowed name is not allowed itself", srv.BaseURL(), byName, false},
		{"a name's allowed address after a refused one", "http://mixed.test:" + port + "/v1", byNet, true},
		{"single-user mode allows loopback", srv.BaseURL(), llm.Guard{Local: true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := guardedClient(t, tt.baseURL, tt.g)
			res, err := c.Stream(context.Background(), userMsg("hi"), nil)
			if tt.ok && (err != nil || res.Content != "hello") {
				t.Fatalf("%q, %v", res.Content, err)
			}
			if !tt.ok && !errors.Is(err, llm.ErrBlockedAddress) {
				t.Fatalf("error %v, want the address refused", err)
			}
			if n := v4.connections(t); n != 0 {
				t.Fatalf("the victim accepted %d connections", n)
			}
		})
	}

	// The server-wide configuration is the operator's: not guarded.
	c := newClient(t, srv.BaseURL(), nil)
	if res, err := c.Stream(context.Background(), userMsg("hi"), nil); err != nil || res.Content != "hello" {
		t.Fatalf("server-wide client: %q, %v", res.Content, err)
	}
}

// TestNoClientFollowsRedirects: a 3xx is an error saying so, on both
// paths, even with an HTTP client of the caller's that would follow it,
// and the target (an allowed one here) sees no request, so that the key
// never goes there.
func TestNoClientFollowsRedirects(t *testing.T) {
	target := llmtest.NewServer(t)
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+r.URL.Path, status)
		}))
		for _, hc := range []*http.Client{nil, llm.NewHTTPClient(), llm.NewGuardedHTTPClient(llm.Guard{Allow: allowScripted}), {}} {
			opts := []llm.Option{llm.WithLogger(slog.New(slog.DiscardHandler))}
			if hc != nil {
				opts = append(opts, llm.WithHTTPClient(hc))
			}
			c, err := llm.NewClient(llm.Config{APIKey: testKey, BaseURL: redirector.URL + "/v1", Model: "m"}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			_, serr := c.Stream(context.Background(), userMsg("hi"), nil)
			_, cerr := c.Complete(context.Background(), userMsg("hi"))
			for _, err := range []error{serr, cerr} {
				var le *llm.Error
				if !errors.As(err, &le) || le.Status != status || le.Retryable() ||
					!strings.Contains(le.UserMessage(), "redirect") {
					t.Fatalf("status %d: error %v", status, err)
				}
			}
		}
		redirector.Close()
	}
	if n := len(target.Requests()); n != 0 {
		t.Fatalf("the redirect target got %d requests", n)
	}
}

package llmconfigs

import (
	"net"
	"net/url"
	"strings"

	"agentchat/internal/store"
)

// keyMoves reports whether an update from cur to next would send the
// stored API key somewhere else: the provider changed (case aside) or the
// base URL points at another endpoint (compared normalised, see
// sameEndpoint). An update that does so without a new api_key clears the
// stored key, so that a stolen session or ack_ key cannot redirect the
// user's provider key to a server of its own.
func keyMoves(cur, next map[string]any) bool {
	oldProvider, _ := cur[fieldProvider].(string)
	newProvider, _ := next[fieldProvider].(string)
	if !strings.EqualFold(strings.TrimSpace(oldProvider), strings.TrimSpace(newProvider)) {
		return true
	}
	oldURL, _ := cur[fieldBaseURL].(string)
	newURL, _ := next[fieldBaseURL].(string)
	return !sameEndpoint(oldURL, newURL)
}

// sameEndpoint reports whether two base URLs name the same endpoint: equal
// once the scheme and host are lower-cased, a default port (80 for http,
// 443 for https) dropped and trailing slashes of the path removed. Any
// other difference (host, port, path, scheme) is another endpoint; a URL
// that does not parse equals only itself.
func sameEndpoint(a, b string) bool {
	if a == b {
		return true
	}
	na, okA := normalEndpoint(a)
	nb, okB := normalEndpoint(b)
	return okA && okB && na == nb
}

// normalEndpoint is the normal form of a base URL for sameEndpoint.
func normalEndpoint(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host + strings.TrimRight(u.EscapedPath(), "/"), true
}

// dropMovedKey clears next's stored key when the update moves it (see
// keyMoves) and the request does not bring a new one; it reports whether
// it did. The decision is made on cur, the version the update is
// conditioned on, so it is atomic with the write: a concurrent change of
// the base URL makes the write fail and the update is decided again.
func dropMovedKey(cur, next *store.LLMConfig, p *patch) bool {
	if p.key != keyKeep || cur.APIKeyCipher == "" || !keyMoves(cur.Config, next.Config) {
		return false
	}
	next.APIKeyCipher, next.APIKeyHint = "", ""
	return true
}

package llmconfig

import (
	"net"
	"net/url"
	"strings"

	"agentchat/internal/store"
)

// KeyAAD is the associated data the API key of configuration id of owner
// is sealed with (secrets.Box.Seal): "llmcfg:U#<user>:<id>" or
// "llmcfg:G#<group>:<id>". A sealed key only opens for its own record.
func KeyAAD(owner store.Owner, id string) string {
	return "llmcfg:" + ownerKey(owner) + ":" + id
}

func ownerKey(o store.Owner) string {
	if o.GroupID != "" {
		return "G#" + o.GroupID
	}
	return "U#" + o.UserID
}

// KeyMoves reports whether changing a configuration's config object from
// cur to next would send its stored API key somewhere else: the provider
// changed (case aside) or the base URL points at another endpoint
// (compared normalised, see sameEndpoint). A sealed key is bound to its
// record (KeyAAD) and to its endpoint: an update that moves it without a
// new api_key must clear the stored key, so that a stolen session or ack_
// key cannot redirect the user's provider key to a server of its own.
func KeyMoves(cur, next map[string]any) bool {
	oldProvider, _ := cur["provider"].(string)
	newProvider, _ := next["provider"].(string)
	if !strings.EqualFold(strings.TrimSpace(oldProvider), strings.TrimSpace(newProvider)) {
		return true
	}
	oldURL, _ := cur["base_url"].(string)
	newURL, _ := next["base_url"].(string)
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

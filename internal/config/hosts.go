package config

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"sync"
)

// HostAllowList is a set of networks and host names an operator allows
// (LLM_ALLOW_PRIVATE_HOSTS, CONSOLE_ALLOWED_HOSTS). The zero value allows
// nothing.
type HostAllowList struct {
	// Prefixes are the allowed networks; a single address is a /32 or /128.
	Prefixes []netip.Prefix
	// Hosts are the allowed host names, lower case, without a trailing dot.
	Hosts []string
}

// ParseHostAllowList parses a comma-separated list of CIDRs ("10.0.0.0/8"),
// addresses ("192.168.1.20", "::1") and host names ("ollama.lan").
func ParseHostAllowList(v string) (HostAllowList, error) {
	var list HostAllowList
	for _, e := range strings.Split(v, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if strings.Contains(e, "/") {
			p, err := netip.ParsePrefix(e)
			if err != nil {
				return HostAllowList{}, fmt.Errorf("%s is not a valid CIDR", quote(e))
			}
			list.Prefixes = append(list.Prefixes, p.Masked())
			continue
		}
		if a, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil {
			a = a.Unmap()
			list.Prefixes = append(list.Prefixes, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		h := strings.TrimSuffix(strings.ToLower(e), ".")
		if !hostNameRE().MatchString(h) {
			return HostAllowList{}, fmt.Errorf("%s is neither a CIDR, an IP address nor a host name", quote(e))
		}
		list.Hosts = append(list.Hosts, h)
	}
	return list, nil
}

// AllowsAddr reports whether addr lies in one of the allowed networks.
func (l HostAllowList) AllowsAddr(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, p := range l.Prefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// AllowsHost reports whether host (a name, compared without case and
// trailing dot, or an address literal) is allowed.
func (l HostAllowList) AllowsHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if a, err := netip.ParseAddr(host); err == nil {
		return l.AllowsAddr(a)
	}
	for _, h := range l.Hosts {
		if h == host {
			return true
		}
	}
	return false
}

// Empty reports whether the list allows nothing.
func (l HostAllowList) Empty() bool { return len(l.Prefixes) == 0 && len(l.Hosts) == 0 }

// String lists the entries, comma-separated.
func (l HostAllowList) String() string {
	parts := make([]string, 0, len(l.Prefixes)+len(l.Hosts))
	for _, p := range l.Prefixes {
		parts = append(parts, p.String())
	}
	parts = append(parts, l.Hosts...)
	return strings.Join(parts, ",")
}

// hostNameRE matches a DNS host name: dot-separated labels of letters,
// digits and inner hyphens (underscores allowed, as some LANs use them).
// Compiled on first use: most configurations list no host.
var hostNameRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$`)
})

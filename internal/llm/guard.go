package llm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"agentchat/internal/config"
)

// Guard is the address policy of the LLM calls of per-user configurations:
// a user's base URL must not make the server connect to itself, its
// private network or a cloud metadata service (SSRF). The server-wide
// configuration (OPENAI_BASE_URL), set by the operator, is not guarded.
//
// The zero Guard refuses every address that is not public: loopback,
// link-local (the metadata address 169.254.169.254 and fd00:ec2::254
// included), private (RFC 1918, 100.64.0.0/10, fc00::/7), unspecified,
// multicast, broadcast and reserved ones. Allow lets some through; Local
// lets loopback, private and unspecified addresses through (link-local,
// metadata, multicast and reserved ones stay refused).
//
// The policy holds where it cannot be bypassed: at connect time, on the
// address actually dialled, after DNS resolution (NewGuardedHTTPClient),
// so that neither a DNS answer nor a rebinding DNS nor an obfuscated
// address (127.1, 0x7f000001, 2130706433, [::ffff:127.0.0.1]) escapes it.
// CheckURL applies it early to an address written in the URL, for a clear
// error before any call.
type Guard struct {
	// Allow lists the networks and host names allowed although not public
	// (LLM_ALLOW_PRIVATE_HOSTS). A host name in it is allowed whatever it
	// resolves to; a network allows the addresses in it.
	Allow config.HostAllowList
	// Local allows loopback, private and unspecified addresses: the local
	// single-user mode, where the model often runs on the same laptop or
	// its LAN (Ollama, LM Studio).
	Local bool
	// Lookup resolves a host name to its addresses; nil:
	// net.DefaultResolver.LookupNetIP. For tests.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// addrClass is the kind of a non-public address.
type addrClass int

// The classes of address the guard knows.
const (
	classPublic addrClass = iota
	classLoopback
	classPrivate
	classUnspecified
	classLinkLocal // metadata addresses included
	classMulticast // broadcast included
	classReserved
)

// describe names the class in an error message.
func (c addrClass) describe() string {
	switch c {
	case classLoopback:
		return "a loopback address"
	case classPrivate:
		return "a private network address"
	case classUnspecified:
		return "an unspecified address"
	case classLinkLocal:
		return "a link-local or cloud metadata address"
	case classMulticast:
		return "a multicast or broadcast address"
	case classReserved:
		return "a reserved address"
	}
	return "a public address"
}

// Address ranges of the classes (IPv4-mapped addresses are unmapped first).
var (
	linkLocalNets = prefixes("169.254.0.0/16", "fe80::/10", "fd00:ec2::254/128")
	privateNets   = prefixes("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10",
		"fc00::/7", "fec0::/10", "64:ff9b:1::/48")
	unspecifiedNets = prefixes("0.0.0.0/8", "::/128")
	loopbackNets    = prefixes("127.0.0.0/8", "::1/128")
	multicastNets   = prefixes("224.0.0.0/4", "255.255.255.255/32", "ff00::/8")
	// 240/4 (future use), 192.0.0.0/24 (IETF protocol assignments, the
	// Oracle cloud metadata address among them) and the deprecated
	// IPv4-compatible IPv6 addresses.
	reservedNets = prefixes("240.0.0.0/4", "192.0.0.0/24", "::/96")
	// nat64Net and sixToFourNet embed an IPv4 address, classified instead.
	nat64Net     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFourNet = netip.MustParsePrefix("2002::/16")
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

func inAny(a netip.Addr, nets []netip.Prefix) bool {
	for _, p := range nets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// classOf classifies a; the order matters where ranges nest (the metadata
// address fd00:ec2::254 lies in fc00::/7, ::1 in ::/96).
func classOf(a netip.Addr) addrClass {
	a = a.WithZone("").Unmap()
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64Net.Contains(a):
			return classOf(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFourNet.Contains(a):
			return classOf(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	switch {
	case inAny(a, loopbackNets):
		return classLoopback
	case inAny(a, unspecifiedNets):
		return classUnspecified
	case inAny(a, linkLocalNets):
		return classLinkLocal
	case inAny(a, multicastNets):
		return classMulticast
	case inAny(a, privateNets):
		return classPrivate
	case inAny(a, reservedNets):
		return classReserved
	}
	return classPublic
}

// BlockedAddressError is a connection the Guard refused. Its message names
// the address only when the URL wrote it (a resolved address of a host
// name is not shown, so that the error does not map the server's network).
type BlockedAddressError struct {
	// Host is the host name of the URL, empty when it is an address.
	Host string
	// Addr is the refused address.
	Addr netip.Addr
	// Class describes the kind of address ("a loopback address").
	Class string
}

// Error is a sentence for the person who wrote the base URL.
func (e *BlockedAddressError) Error() string {
	if e.Host != "" {
		return fmt.Sprintf("The LLM base URL's host %s resolves to %s, which this server does not connect to; set LLM_ALLOW_PRIVATE_HOSTS to allow it.", e.Host, e.Class)
	}
	return fmt.Sprintf("The LLM base URL points to %s (%s), which this server does not connect to; set LLM_ALLOW_PRIVATE_HOSTS to allow it.", e.Class, e.Addr)
}

// Is makes a *BlockedAddressError match ErrBlockedAddress.
func (e *BlockedAddressError) Is(target error) bool { return target == ErrBlockedAddress }

// ErrBlockedAddress matches every *BlockedAddressError.
var ErrBlockedAddress = errors.New("llm: address not allowed")

// check refuses a unless the policy allows it; host is the URL's host
// name, empty for an address literal.
func (g *Guard) check(host string, a netip.Addr) error {
	a = a.WithZone("").Unmap()
	c := classOf(a)
	switch {
	case c == classPublic, g.Allow.AllowsAddr(a):
		return nil
	case g.Local && (c == classLoopback || c == classPrivate || c == classUnspecified):
		return nil
	}
	return &BlockedAddressError{Host: host, Addr: a, Class: c.describe()}
}

// CheckURL applies the policy to the host of rawURL when the URL gives an
// address (in any of the forms a resolver accepts: 127.1, 0x7f000001,
// 2130706433, [::ffff:127.0.0.1]) or the name localhost, without any DNS
// lookup: a clear error before a call. A host name is checked when a
// connection is made (NewGuardedHTTPClient).
func (g *Guard) CheckURL(rawURL string) error {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return fmt.Errorf("llm base URL is not a URL")
	}
	host := u.Hostname()
	if g.Allow.AllowsHost(host) {
		return nil
	}
	if a, ok := parseAddr(host); ok {
		return g.check("", a)
	}
	if h := strings.TrimSuffix(strings.ToLower(host), "."); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return g.check(host, netip.IPv6Loopback())
	}
	return nil
}

// parseAddr reads an address literal as the resolvers of the C library
// do (inet_aton): dotted quads, and one to four parts in decimal, octal
// (leading 0) or hexadecimal (0x), the last filling the remaining bytes
// ("127.1", "0x7f000001", "2130706433", "0177.0.0.1"), or an IPv6 address
// (with or without brackets and zone).
func parseAddr(host string) (netip.Addr, bool) {
	host = strings.Trim(host, "[]")
	if a, err := netip.ParseAddr(host); err == nil {
		return a.WithZone("").Unmap(), true
	}
	host = strings.TrimSuffix(host, ".")
	parts := strings.Split(host, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, ok := parseAtonPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 0xff {
			return netip.Addr{}, false
		}
		n |= v << (24 - 8*i)
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// parseAtonPart reads one part of an inet_aton address.
func parseAtonPart(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
		base, p = 16, p[2:]
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	v, err := strconv.ParseUint(p, base, 32)
	return v, err == nil
}

// lookup resolves host, an address literal of any form included.
func (g *Guard) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, ok := parseAddr(host); ok {
		return []netip.Addr{a}, nil
	}
	if g.Lookup != nil {
		return g.Lookup(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// allowedByNameKey marks the context of a dial whose host name the allow
// list names: its addresses are not checked.
type allowedByNameKey struct{}

// dialContext dials addr through d, resolving the host itself and
// connecting only to the addresses the policy allows, each dialled as the
// address checked (a second DNS answer cannot differ from the first).
func (g *Guard) dialContext(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("llm dial %s: %w", network, err)
		}
		byName := g.Allow.AllowsHost(host)
		if byName {
			ctx = context.WithValue(ctx, allowedByNameKey{}, true)
		}
		addrs, err := g.lookup(ctx, host)
		if err != nil {
			return nil, err
		}
		// The addresses are tried one after the other, IPv4 first: a
		// broken IPv6 route costs a dial timeout, where Go's own dialer
		// would race the families.
		slices.SortStableFunc(addrs, func(a, b netip.Addr) int {
			return cmp.Compare(btoi(!a.Unmap().Is4()), btoi(!b.Unmap().Is4()))
		})
		name := "" // the host name, for the error; empty for an address
		if _, ok := parseAddr(host); !ok {
			name = host
		}
		var first error
		for _, a := range addrs {
			if !byName {
				if err := g.check(name, a); err != nil {
					first = cmpErr(first, &net.OpError{Op: "dial", Net: network, Err: err})
					continue
				}
			}
			c, err := d.DialContext(ctx, network, net.JoinHostPort(a.WithZone("").Unmap().String(), port))
			if err == nil {
				return c, nil
			}
			first = cmpErr(first, err)
			if ctx.Err() != nil {
				break
			}
		}
		if first == nil {
			first = &net.DNSError{Err: "no address", Name: host, IsNotFound: true}
		}
		return nil, first
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// control checks the address of every socket the guarded dialer connects,
// whatever led to it: the last line of the policy.
func (g *Guard) control(ctx context.Context, _, address string, _ syscall.RawConn) error {
	if byName, _ := ctx.Value(allowedByNameKey{}).(bool); byName {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("llm dial: unexpected address %q", address)
	}
	return g.check("", ap.Addr())
}

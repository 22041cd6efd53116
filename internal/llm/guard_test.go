package llm

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"agentchat/internal/config"
)

func TestParseAddrReadsEveryResolverForm(t *testing.T) {
	tests := []struct {
		host string
		want string // "" = not an address
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0X7F.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"0", "0.0.0.0"},
		{"169.254.43518", "169.254.169.254"},
		{"0xa9fea9fe", "169.254.169.254"},
		{"10.5", "10.0.0.5"},
		{"127.0.0.1.", "127.0.0.1"},
		{"::1", "::1"},
		{"[::1]", "::1"},
		{"[::ffff:127.0.0.1]", "127.0.0.1"},
		{"::ffff:7f00:1", "127.0.0.1"},
		{"fe80::1%eth0", "fe80::1"},
		{"api.openai.com", ""},
		{"1.2.3.4.5", ""},
		{"256.0.0.1", ""},
		{"1.16777216", ""},
		{"0x", ""},
		{"08.0.0.1", ""}, // not octal: a name
		{"4294967296", ""},
		{"", ""},
	}
	for _, tt := range tests {
		a, ok := parseAddr(tt.host)
		got := ""
		if ok {
			got = a.String()
		}
		if got != tt.want {
			t.Errorf("parseAddr(%q) = %q, want %q", tt.host, got, tt.want)
		}
	}
}

func TestClassOf(t *testing.T) {
	tests := []struct {
		addr string
		want addrClass
	}{
		{"8.8.8.8", classPublic},
		{"2606:4700::1111", classPublic},
		{"127.0.0.1", classLoopback},
		{"127.255.0.9", classLoopback},
		{"::1", classLoopback},
		{"::ffff:127.0.0.1", classLoopback},
		{"10.0.0.5", classPrivate},
		{"172.16.0.1", classPrivate},
		{"172.31.255.255", classPrivate},
		{"172.32.0.1", classPublic},
		{"192.168.1.1", classPrivate},
		{"100.64.0.1", classPrivate},
		{"100.100.100.200", classPrivate}, // a cloud metadata address in CGNAT space
		{"fd12::1", classPrivate},
		{"169.254.169.254", classLinkLocal},
		{"fe80::1", classLinkLocal},
		{"fd00:ec2::254", classLinkLocal},
		{"0.0.0.0", classUnspecified},
		{"0.1.2.3", classUnspecified},
		{"::", classUnspecified},
		{"224.0.0.1", classMulticast},
		{"255.255.255.255", classMulticast},
		{"ff02::1", classMulticast},
		{"240.0.0.1", classReserved},
		{"192.0.0.192", classReserved},
		{"::7f00:1", classReserved},                // IPv4-compatible
		{"64:ff9b::a9fe:a9fe", classLinkLocal},     // NAT64 of 169.254.169.254
		{"64:ff9b::808:808", classPublic},          // NAT64 of 8.8.8.8
		{"2002:7f00:1::1", classLoopback},          // 6to4 of 127.0.0.1
		{"2002:a00:5::", classPrivate},             // 6to4 of 10.0.0.5
		{"64:ff9b:1::1", classPrivate},             // local-use NAT64
		{"2001:db8::1", classPublic},               // documentation: harmless
		{"fe80::1%eth0", classLinkLocal},           // zone ignored
		{"::ffff:169.254.169.254", classLinkLocal}, // mapped
	}
	for _, tt := range tests {
		if got := classOf(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("classOf(%s) = %s, want %s", tt.addr, got.describe(), tt.want.describe())
		}
	}
}

func TestGuardCheckURL(t *testing.T) {
	allow, err := config.ParseHostAllowList("192.168.1.0/24,ollama.lan,127.0.0.9")
	if err != nil {
		t.Fatal(err)
	}
	strict, local, allowing := Guard{}, Guard{Local: true}, Guard{Allow: allow}
	tests := []struct {
		url   string
		g     Guard
		class string // "" = allowed
	}{
		{"https://api.openai.com/v1", strict, ""},
		{"https://8.8.8.8/v1", strict, ""},
		{"http://ollama.internal:11434/v1", strict, ""}, // a name: checked when dialled
		{"http://127.0.0.1:11434/v1", strict, "loopback"},
		{"http://127.1:11434/v1", strict, "loopback"},
		{"http://0x7f000001/v1", strict, "loopback"},
		{"http://2130706433/v1", strict, "loopback"},
		{"http://[::1]:8080/v1", strict, "loopback"},
		{"http://[::ffff:127.0.0.1]/v1", strict, "loopback"},
		{"http://localhost:11434/v1", strict, "loopback"},
		{"http://LOCALHOST./v1", strict, "loopback"},
		{"http://a.localhost/v1", strict, "loopback"},
		{"http://169.254.169.254/latest", strict, "link-local or cloud metadata"},
		{"http://[fd00:ec2::254]/latest", strict, "link-local or cloud metadata"},
		{"http://[fe80::1%25eth0]/v1", strict, "link-local"},
		{"http://10.0.0.5/v1", strict, "private"},
		{"http://100.64.1.1/v1", strict, "private"},
		{"http://[fc00::5]/v1", strict, "private"},
		{"http://0.0.0.0:11434/v1", strict, "unspecified"},
		{"http://[::]:11434/v1", strict, "unspecified"},
		{"http://224.0.0.1/v1", strict, "multicast"},
		{"http://255.255.255.255/v1", strict, "broadcast"},

		// Single-user mode: the laptop's own and its LAN's models.
		{"http://127.0.0.1:11434/v1", local, ""},
		{"http://localhost:11434/v1", local, ""},
		{"http://[::1]:11434/v1", local, ""},
		{"http://0.0.0.0:11434/v1", local, ""},
		{"http://192.168.1.20:11434/v1", local, ""},
		{"http://169.254.169.254/latest", local, "metadata"},
		{"http://[fd00:ec2::254]/latest", local, "metadata"},
		{"http://224.0.0.1/v1", local, "multicast"},

		// LLM_ALLOW_PRIVATE_HOSTS.
		{"http://192.168.1.20:11434/v1", allowing, ""},
		{"http://192.168.2.20:11434/v1", allowing, "private"},
		{"http://ollama.lan:11434/v1", allowing, ""},
		{"http://127.0.0.9/v1", allowing, ""},
		{"http://127.0.0.1/v1", allowing, "loopback"},
	}
	for _, tt := range tests {
		err := tt.g.CheckURL(tt.url)
		if tt.class == "" {
			if err != nil {
				t.Errorf("%s (%+v): %v", tt.url, tt.g, err)
			}
			continue
		}
		var be *BlockedAddressError
		if !errors.As(err, &be) || !errors.Is(err, ErrBlockedAddress) || !strings.Contains(err.Error(), tt.class) ||
			!strings.Contains(err.Error(), "LLM_ALLOW_PRIVATE_HOSTS") {
			t.Errorf("%s (%+v): error %v, want it refused as %s", tt.url, tt.g, err, tt.class)
		}
	}
}

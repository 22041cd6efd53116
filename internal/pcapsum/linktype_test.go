package pcapsum

import "testing"

func TestLinkTypeString(t *testing.T) {
	for _, tt := range []struct {
		lt   LinkType
		want string
	}{
		{LinkTypeEthernet, "Ethernet"},
		{LinkTypePPP, "PPP"},
		{LinkTypePPPHDLC, "PPP_HDLC"},
		{LinkTypeRaw, "Raw"},
		{LinkTypeCHDLC, "C_HDLC"},
		{LinkTypeIPv4, "IPv4"},
		{0, "UnknownLinkType(0)"},
		{65535, "UnknownLinkType(65535)"},
	} {
		if got := tt.lt.String(); got != tt.want {
			t.Errorf("%d: %q, want %q", uint32(tt.lt), got, tt.want)
		}
	}
}

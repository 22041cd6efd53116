package console

import (
	"bytes"
	"strings"
	"testing"
)

func TestMatchPrompt(t *testing.T) {
	ios, _ := Lookup(TypeCiscoIOSTelnet)
	vpcs, _ := Lookup(TypeVPCS)
	cases := []struct {
		typ  DeviceType
		line string
		mode Mode
		host string
	}{
		{ios, "R1>", ModeUser, "R1"},
		{ios, "R1#", ModeEnable, "R1"},
		{ios, "R1# ", ModeEnable, "R1"},
		{ios, "R1(config)#", ModeConfig, "R1"},
		{ios, "R1(config-if)#", ModeConfig, "R1"},
		{ios, "core-sw.lab(config-router)#", ModeConfig, "core-sw.lab"},
		{ios, "R1(dhcp-config)#", ModeConfig, "R1"},
		{ios, "R1(config-ext-nacl)#", ModeConfig, "R1"},
		{ios, "Switch>", ModeUser, "Switch"},
		{ios, "R1#show ip interface brief", ModeUnknown, ""},
		{ios, "Interface IP-Address OK? Method Status Protocol", ModeUnknown, ""},
		{ios, " --More-- ", ModeUnknown, ""},
		{ios, "Password:", ModeUnknown, ""},
		{ios, "", ModeUnknown, ""},
		{ios, "% Invalid input detected at '^' marker.", ModeUnknown, ""},
		{ios, "banner motd #", ModeUnknown, ""},
		{ios, "R1 #", ModeUnknown, ""},
		{vpcs, "PC1>", ModeUser, "PC1"},
		{vpcs, "PC1> ", ModeUser, "PC1"},
		{vpcs, "PC1#", ModeUnknown, ""},
		{vpcs, "PC1 : 10.0.0.1 255.255.255.0 gateway 10.0.0.254", ModeUnknown, ""},
	}
	for _, c := range cases {
		mode, host, ok := c.typ.MatchPrompt(c.line)
		if mode != c.mode || host != c.host || ok != (c.mode != ModeUnknown) {
			t.Errorf("%s %q: %v %q %v, want %v %q", c.typ.Name, c.line, mode, host, ok, c.mode, c.host)
		}
	}
}

func TestQuestionsAndMore(t *testing.T) {
	ios, _ := Lookup(TypeCiscoIOSTelnet)
	for line, want := range map[string]bool{
		"Proceed with reload? [confirm]":                                      true,
		"Destination filename [startup-config]?":                              true,
		"How many bits in the modulus [512]:":                                 true,
		"Would you like to enter the initial configuration dialog? [yes/no]:": true,
		"Password:":                 true,
		"[OK]":                      false,
		"R1#":                       false,
		"Building configuration...": false,
	} {
		if got := ios.Question.MatchString(line); got != want {
			t.Errorf("question %q: %v", line, got)
		}
	}
	for line, want := range map[string]bool{" --More--": true, "--More--": true, "-- More --": true, "more": false} {
		if got := ios.More.MatchString(strings.TrimSpace(line)); got != want {
			t.Errorf("more %q: %v", line, got)
		}
	}
}

func TestReadOnlyRefusal(t *testing.T) {
	ios, _ := Lookup(TypeCiscoIOSTelnet)
	vpcs, _ := Lookup(TypeVPCS)
	cases := []struct {
		typ     DeviceType
		cmd     string
		refused bool
	}{
		{ios, "show ip interface brief", false},
		{ios, "ping 10.0.0.2", false},
		{ios, "configure terminal", true},
		{ios, "conf t", true},
		{ios, "CONFIG   terminal", true},
		{ios, "configure", true},
		{ios, "do conf t", true},
		{ios, "copy running-config startup-config", false},
		{ios, "con", false},
		{vpcs, "show ip", false},
		{vpcs, "ping 10.0.0.254", false},
		{vpcs, "ip 10.0.0.1/24", true},
		{vpcs, "save", true},
		{vpcs, "showip", true},
	}
	for _, c := range cases {
		if got := c.typ.ReadOnlyRefusal(c.cmd) != ""; got != c.refused {
			t.Errorf("%s %q refused=%v", c.typ.Name, c.cmd, got)
		}
	}
}

func TestClean(t *testing.T) {
	cases := map[string]string{
		"a\r\nb\r\n":                        "a\nb\n",
		"\x1b[1mInterface\x1b[0m\x1b[K  IP": "Interface  IP",
		"\x1b]0;title\x07prompt":            "prompt",
		"\x1b]0;title\x1b\\prompt":          "prompt",
		"\x1b(Bx\x1b7y\x1b[?25lz":           "xyz",
		"line1\n --More-- \b\b\b\b\b\b\b\b\b\b          \b\b\b\b\b\b\b\b\b\bline2": "line1\nline2",
		"progress 10%\rprogress 100%\r\n":                                          "progress 100%\n",
		"a\r\x00b":                                                                 "b",
		"x\r\r\ny":                                                                 "x\ny",
		"tab\there\x07\x00":                                                        "tab\there",
		"é\bx":                                                                     "x",
		"\n\b":                                                                     "\n",
	}
	for in, want := range cases {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
	// split across reads
	var c cleaner
	var out []byte
	for _, part := range []string{"a\x1b[", "1;3", "1mb\r", "\nc\x1b", "]0;t", "\x07d"} {
		out = c.feed(out, []byte(part))
	}
	if string(out) != "ab\ncd" {
		t.Errorf("split: %q", out)
	}
}

func TestTelnetDecode(t *testing.T) {
	var tn telnet
	in := []byte{
		'h', tnIAC, tnWILL, optEcho, 'i', tnIAC, tnWILL, optSGA, tnIAC, tnDO, 31, tnIAC, tnDO, 24,
		tnIAC, tnDO, optSGA, tnIAC, tnIAC, tnIAC, 241, tnIAC, tnSB, 24, 1, tnIAC, tnIAC, tnIAC, tnSE, '!',
		tnIAC, tnWILL, optEcho, // already on: no answer
		tnIAC, tnWILL, 0, // binary refused
		tnIAC, tnWONT, optEcho, // turned off: acknowledged
		tnIAC, tnDONT, 31, // never on: no answer
	}
	// feed byte by byte: every sequence may be split
	var out []byte
	for _, b := range in {
		out = tn.decode([]byte{b}, out)
	}
	if string(out) != "hi\xff!" {
		t.Errorf("data %q", out)
	}
	want := []byte{
		tnIAC, tnDO, optEcho, tnIAC, tnDO, optSGA, tnIAC, tnWONT, 31, tnIAC, tnWONT, 24, tnIAC, tnWILL, optSGA,
		tnIAC, tnDONT, 0, tnIAC, tnDONT, optEcho,
	}
	if got := tn.takeAnswer(); !bytes.Equal(got, want) {
		t.Errorf("answers %v, want %v", got, want)
	}
	if got := encode([]byte{'a', tnIAC, 'b'}); !bytes.Equal(got, []byte{'a', tnIAC, tnIAC, 'b'}) {
		t.Errorf("encode %v", got)
	}
}

func TestSupportedTypes(t *testing.T) {
	if got := strings.Join(SupportedTypes(), ","); got != "cisco_ios_telnet,vpcs" {
		t.Errorf("types %s", got)
	}
	if _, ok := Lookup(" Cisco_IOS_Telnet "); !ok {
		t.Error("lookup is not case-insensitive")
	}
	if _, ok := Lookup("juniper"); ok {
		t.Error("unknown type found")
	}
}

func TestCapped(t *testing.T) {
	c := capped{max: 10}
	c.write([]byte("12345"))
	c.write([]byte("678901234"))
	if got := c.String(); !strings.HasPrefix(got, "1234567890\n[output truncated") || !strings.Contains(got, "4 more bytes") {
		t.Errorf("capped %q", got)
	}
}

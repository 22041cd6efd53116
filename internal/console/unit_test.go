package console

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestMatchPrompt(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	ios, _ := Lookup(TypeCiscoIOSTelnet)
	vpcs, _ := Lookup(TypeVPCS)
	cases := []struct {
		typ     DeviceType
		cmd     string
		refused string // a part of the reason; "" allowed
	}{
		{ios, "show ip interface brief", ""},
		{ios, "sh ip int br", ""},
		{ios, "SHOW  running-config", ""},
		{ios, "ping 10.0.0.2", ""},
		{ios, "pi 10.0.0.2", ""},
		{ios, "traceroute 10.0.0.2", ""},
		{ios, "trace 10.0.0.2", ""},
		{ios, "dir flash:", ""},
		{ios, "more flash:config.txt", ""},
		{ios, "pwd", ""},
		{ios, "terminal length 0", ""},
		{ios, "ter wid 200", ""},
		{ios, "show version | include IOS", ""},
		{ios, "sh run | i hostname", ""},
		{ios, "show run | section router | ex !", ""},
		{ios, "show reload", ""},
		{ios, "configure terminal", "configuration mode"},
		{ios, "conf t", "configuration mode"},
		{ios, "CONFIG   terminal", "configuration mode"},
		{ios, "configure", "configuration mode"},
		{ios, "do conf t", "configuration mode"},
		{ios, "con", "only read-only commands"},
		{ios, "copy running-config startup-config", "only read-only commands (show, ping, traceroute, dir, more, pwd, terminal length|width)"},
		{ios, "write", "only read-only"},
		{ios, "wr mem", "only read-only"},
		{ios, "clear counters", "only read-only"},
		{ios, "erase startup-config", "only read-only"},
		{ios, "delete flash:vlan.dat", "only read-only"},
		{ios, "reload", "only read-only"},
		{ios, "debug all", "only read-only"},
		{ios, "undebug all", "only read-only"},
		{ios, "do show clock", "only read-only"},
		{ios, "s ip", "only read-only"}, // ambiguous on IOS: not known to be show
		{ios, "showx", "only read-only"},
		{ios, "terminal monitor", "terminal is allowed here only as terminal length|width"},
		{ios, "terminal", "only as terminal length|width"},
		{ios, "show run | redirect flash:x", "output modifiers"},
		{ios, "show run | append flash:x", "output modifiers"},
		{ios, "show run | tee flash:x", "output modifiers"},
		{ios, "sh run | r flash:x", "output modifiers"},
		{ios, "show run | include a | tee x", "output modifiers"},
		{ios, "show run |", "output modifiers"},
		{ios, "show run | include ospf|bgp", ""},
		{ios, "show ip route | include ^O|^B|^S", ""},
		{ios, "show run | include a | re flash:x", "output modifiers"},
		{ios, "show run | i a |app flash:x", "output modifiers"},
		{ios, "", "only read-only"},
		{vpcs, "show ip", ""},
		{vpcs, "sh ip", ""},
		{vpcs, "ping 10.0.0.254", ""},
		{vpcs, "p 10.0.0.254", ""},
		{vpcs, "@show ip", ""},
		{vpcs, "ip 10.0.0.1/24", "only read-only commands (show, ping)"},
		{vpcs, "save", "only read-only"},
		{vpcs, "trace 10.0.0.1", "only read-only"},
		{vpcs, "arp", "only read-only"},
		{vpcs, "quit", "only read-only"},
		{vpcs, "showip", "only read-only"},
		{DeviceType{Name: "bare"}, "show version", "only read-only commands () are allowed"},
	}
	for _, c := range cases {
		got := c.typ.ReadOnlyRefusal(c.cmd)
		if (got == "") != (c.refused == "") || !strings.Contains(got, c.refused) {
			t.Errorf("%s %q: refusal %q, want %q", c.typ.Name, c.cmd, got, c.refused)
		}
	}
}

func TestCheckLine(t *testing.T) {
	t.Parallel()
	ok := []string{"show ip interface brief", "description liaison vers R2 – étage 3", "banner text: 100% ~!@#$^&*()[]{}", "", "\uFFFD as text: \ufffd"}
	for _, l := range ok {
		if err := CheckLine(l); err != nil {
			t.Errorf("CheckLine(%q) = %v", l, err)
		}
	}
	bad := map[string]string{
		"show clock\nreload": "line break (U+000A)",
		"show clock\rreload": "line break (U+000D)",
		"show clock\r":       "line break (U+000D)",
		"reload\x15show":     "control character (U+0015)",
		"rel\x7foad":         "control character (U+007F)",
		"\x03reload":         "control character (U+0003)",
		"show\x1ereload":     "control character (U+001E)",
		"show\x00":           "control character (U+0000)",
		"show\x1b[Areload":   "control character (U+001B)",
		"show\x08\x08":       "control character (U+0008)",
		"show clock\treload": "tab",
		"show \u0085reload":  "control character (U+0085)",
		"show \u009breload":  "control character (U+009B)",
		"show \u2028reload":  "line separator (U+2028)",
		"show \xffreload":    "not UTF-8 (at byte 5)",
		"\xc2\x9bshow":       "control character (U+009B)",
		"show \xc2":          "not UTF-8",
	}
	for l, want := range bad {
		err := CheckLine(l)
		var le *LineError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "not sent") {
			t.Errorf("CheckLine(%q) = %v, want %q", l, err, want)
		}
	}
	ios, _ := Lookup(TypeCiscoIOSTelnet)
	vpcs, _ := Lookup(TypeVPCS)
	if r := ios.CommandRefusal("rel?oad"); !strings.Contains(r, "holds a ?") {
		t.Errorf("IOS ?: %q", r)
	}
	if r := vpcs.CommandRefusal("?"); r != "" {
		t.Errorf("VPCS ? (its help command): %q", r)
	}
	if r := ios.CommandRefusal("show\nreload"); !strings.Contains(r, "line break") {
		t.Errorf("IOS newline: %q", r)
	}
}

func TestAbbreviations(t *testing.T) {
	t.Parallel()
	ios, _ := Lookup(TypeCiscoIOSTelnet)
	vpcs, _ := Lookup(TypeVPCS)
	cases := []struct {
		typ         DeviceType
		typed, full string
		config      bool
		want        bool
	}{
		{ios, "rel", "reload", false, true},
		{ios, "re", "reload", false, false},
		{ios, "reloa", "reload", false, true},
		{ios, "reload", "reload", false, true},
		{ios, "reloads", "reload", false, false},
		{ios, "wr", "write", false, true},
		{ios, "w", "write", false, false},
		{ios, "er", "erase", false, true},
		{ios, "deb", "debug", false, true},
		{ios, "de", "debug", false, false},
		{ios, "tr", "traceroute", false, true},
		{ios, "trace", "traceroute", false, true},
		{ios, "t", "traceroute", false, false},
		{ios, "ex", "exit", true, true},
		{ios, "exit-address-family", "exit", true, false},
		{ios, "sh", "show", false, true},
		{ios, "cop", "copy", false, true},
		{ios, "unknownword", "unknownword", false, true},
		{ios, "unk", "unknownword", false, true}, // DefaultMinAbbrev
		{ios, "un", "unknownword", false, false},
		{ios, "ab", "ab", false, true}, // shorter than the default: the whole word
		{ios, "a", "ab", false, false},
		{vpcs, "t", "traceroute", false, true},
		{vpcs, "tracer", "traceroute", false, true},
		{vpcs, "sh", "show", false, true},
		{vpcs, "s", "show", false, false},
		{vpcs, "q", "quit", false, true},
	}
	for _, c := range cases {
		if got := c.typ.Abbreviates(c.typed, c.full, c.config); got != c.want {
			t.Errorf("%s: %q abbreviates %q (config %v) = %v, want %v", c.typ.Name, c.typed, c.full, c.config, got, c.want)
		}
	}
	if w := vpcs.Words("  @Show  IP "); strings.Join(w, " ") != "show ip" {
		t.Errorf("VPCS words %q", w)
	}
	if w := ios.Words("@show ip"); w[0] != "@show" {
		t.Errorf("IOS words %q", w)
	}
}

func TestSplitConfigChecksEveryLine(t *testing.T) {
	t.Parallel()
	ios, _ := Lookup(TypeCiscoIOSTelnet)
	steps := ios.SplitConfig([]string{
		"hostname R1\r\ninterface g0/0", "banner motd #\nline one\nline\x15two\n#", "ip route 0.0.0.0 0.0.0.0 10.0.0.1",
		"banner login ^\nfine\n^", "description \x1b[2K",
	})
	type want struct {
		first string
		err   string
	}
	wants := []want{
		{"hostname R1\r", "line break (U+000D)"},
		{"interface g0/0", ""},
		{"banner motd #", "line 3 of the text block: it holds a control character (U+0015)"},
		{"ip route 0.0.0.0 0.0.0.0 10.0.0.1", ""},
		{"banner login ^", ""},
		{"description \x1b[2K", "U+001B"},
	}
	if len(steps) != len(wants) {
		t.Fatalf("steps %+v", steps)
	}
	for i, w := range wants {
		st := steps[i]
		if st.Lines[0] != w.first || (st.Err == nil) != (w.err == "") || (st.Err != nil && !strings.Contains(st.Err.Error(), w.err)) {
			t.Errorf("step %d: %q err %v, want %q %q", i, st.Lines, st.Err, w.first, w.err)
		}
	}
	if got := steps[2].Lines; len(got) != 4 || got[3] != "#" {
		t.Errorf("the refused block does not run to its delimiter: %q", got)
	}
}

func TestClean(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	c := capped{max: 10}
	c.write([]byte("12345"))
	c.write([]byte("678901234"))
	if got := c.String(); !strings.HasPrefix(got, "1234567890\n[output truncated") || !strings.Contains(got, "4 more bytes") {
		t.Errorf("capped %q", got)
	}
}

package console

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Names of the built-in device types.
const (
	TypeCiscoIOSTelnet = "cisco_ios_telnet"
	TypeVPCS           = "vpcs"
)

// Mode is the command mode a prompt shows.
type Mode int

// Modes of a device console.
const (
	ModeUnknown Mode = iota
	// ModeUser is the unprivileged prompt (R1>, PC1>).
	ModeUser
	// ModeEnable is the privileged prompt (R1#).
	ModeEnable
	// ModeConfig is a configuration prompt (R1(config)#, R1(config-if)#).
	ModeConfig
)

func (m Mode) String() string {
	switch m {
	case ModeUser:
		return "user"
	case ModeEnable:
		return "enable"
	case ModeConfig:
		return "config"
	}
	return "unknown"
}

// Answer is a question a console may ask when it is woken, with the reply
// to type (the newline is added).
type Answer struct {
	Pattern *regexp.Regexp
	Reply   string
}

// DeviceType is how to drive one kind of console. Adding a device type is
// adding one entry to the table of builtinTypes.
//
// Prompt patterns are matched against the last line of the output, with
// trailing blanks removed; their first group is the host name.
type DeviceType struct {
	// Name is the value of the node tag device_type:<Name>.
	Name string
	// UserPrompt matches the unprivileged prompt ("R1>"); required.
	UserPrompt *regexp.Regexp
	// EnablePrompt matches the privileged prompt ("R1#"); nil when the
	// device has none.
	EnablePrompt *regexp.Regexp
	// ConfigPrompt matches every configuration prompt ("R1(config)#",
	// "R1(config-if)#"); nil when the device has no configuration mode.
	ConfigPrompt *regexp.Regexp
	// Enable is the command that enters the privileged mode ("" none).
	Enable string
	// PagingOff are the commands run once at the privileged prompt so that
	// output is not paged (their errors are ignored).
	PagingOff []string
	// ConfigEnter and ConfigExit enter and leave the configuration mode
	// ("" when the device has none).
	ConfigEnter, ConfigExit string
	// More matches a pager prompt on the last line; it is answered with a
	// space.
	More *regexp.Regexp
	// ErrorMarkers are texts that, on a line of a command's output, make
	// the command failed ("% Invalid input detected").
	ErrorMarkers []string
	// Question matches a question a command asks (a "[confirm]", a
	// password): the command is interrupted and failed.
	Question *regexp.Regexp
	// Login matches a login or password prompt on an idle console: such
	// consoles are not supported.
	Login *regexp.Regexp
	// WakeAnswers are the questions answered while waking the console (the
	// initial configuration dialog of a new router).
	WakeAnswers []Answer
	// TextBlock matches the first line of a multi-line text (a banner);
	// its first group is the delimiter: the text ends at the first later
	// line containing the delimiter's first character.
	TextBlock *regexp.Regexp
	// EntersConfig matches an exec command that enters the configuration
	// mode; read-only tools name it so when they refuse it.
	EntersConfig *regexp.Regexp
	// ReadOnly lists the exec commands a read-only tool may send (the
	// first word, as abbreviated by ExecAbbrev); nil: none.
	ReadOnly []ReadOnlyCommand
	// PipeModifiers, when not nil, are the output modifiers a read-only
	// command may use after "|" (the others write files).
	PipeModifiers []string
	// ExecAbbrev and ConfigAbbrev are the CLI's abbreviation tables: for
	// a command word (in full, lower case), the length of its shortest
	// abbreviation the CLI reads as that word, at the exec prompt and in
	// the configuration mode (a word absent from ConfigAbbrev is looked
	// up in ExecAbbrev, then DefaultMinAbbrev applies). Where images
	// differ, the shortest is kept: blocking "rel" is safer than letting
	// an image without "release" read it as "reload".
	ExecAbbrev, ConfigAbbrev map[string]int
	// InlineHelp: the CLI answers "?" as soon as it is typed and keeps the
	// line being edited (Cisco IOS), so a command holding "?" is refused.
	InlineHelp bool
	// IgnoredLead are characters the CLI ignores at the start of a
	// command ("@" on VPCS, which only silences the echo).
	IgnoredLead string
	// Interrupt aborts a running command or question (Ctrl-C).
	Interrupt string
	// Newline ends a line sent to the device.
	Newline string
}

// hostChars are the characters of a host name in a prompt.
const hostChars = `[\w.\-@/:+~]{1,63}`

var builtinTypes = sync.OnceValue(func() map[string]DeviceType {
	return map[string]DeviceType{
		TypeCiscoIOSTelnet: {
			Name:         TypeCiscoIOSTelnet,
			UserPrompt:   regexp.MustCompile(`^(` + hostChars + `)>$`),
			EnablePrompt: regexp.MustCompile(`^(` + hostChars + `)#$`),
			ConfigPrompt: regexp.MustCompile(`^(` + hostChars + `)\((?:[\w.\-@/:+ ]{1,40})\)#$`),
			Enable:       "enable",
			PagingOff:    []string{"terminal length 0", "terminal width 512"},
			ConfigEnter:  "configure terminal",
			ConfigExit:   "end",
			More:         regexp.MustCompile(`(?i)-+ ?more ?-+$`),
			ErrorMarkers: []string{
				"% Invalid input detected", "% Incomplete command", "% Ambiguous command",
				"% Unknown command", "% Unrecognized command", "% Invalid command",
			},
			Question: regexp.MustCompile(`(?i)(\[confirm\]|\[yes/no\]:?|\[y/n\]:?|\]\s?[?:]|\(y/n\)\??:?|password:)$`),
			Login:    regexp.MustCompile(`(?i)(username|login|password):$`),
			WakeAnswers: []Answer{
				{regexp.MustCompile(`(?i)initial configuration dialog\? \[yes/no\]:$`), "no"},
				{regexp.MustCompile(`(?i)terminate autoinstall\? \[yes\]:$`), "yes"},
			},
			TextBlock: regexp.MustCompile(`(?i)^\s*banner\s+(?:motd|login|exec|incoming|slip-ppp|prompt-timeout|config-save)\s+(\S)`),
			EntersConfig: regexp.MustCompile(
				`(?i)^(?:do\s+)?conf(?:i(?:g(?:u(?:r(?:e)?)?)?)?)?(?:\s|$)`),
			ReadOnly: []ReadOnlyCommand{
				{Word: "show"}, {Word: "ping"}, {Word: "traceroute"}, {Word: "dir"}, {Word: "more"}, {Word: "pwd"},
				{Word: "terminal", Args: []string{"length", "width"}},
			},
			PipeModifiers: []string{"begin", "count", "exclude", "include", "section"},
			ExecAbbrev:    iosExecAbbrev,
			ConfigAbbrev:  iosConfigAbbrev,
			InlineHelp:    true,
			Interrupt:     "\x03",
			Newline:       "\r",
		},
		TypeVPCS: {
			Name:         TypeVPCS,
			UserPrompt:   regexp.MustCompile(`^([\w.\-]{1,63})>$`),
			ErrorMarkers: []string{"Bad command", "Invalid address", "Incomplete command"},
			Question:     regexp.MustCompile(`(?i)(\(y/n\)\??:?|\[y/n\]\??:?)$`),
			Login:        regexp.MustCompile(`(?i)(username|login|password):$`),
			ReadOnly:     []ReadOnlyCommand{{Word: "show"}, {Word: "ping"}},
			ExecAbbrev:   vpcsAbbrev,
			IgnoredLead:  "@",
			Interrupt:    "\x03",
			Newline:      "\r",
		},
	}
})

// Lookup returns the device type of that name (case-insensitive), a copy
// the caller may change.
func Lookup(name string) (DeviceType, bool) {
	t, ok := builtinTypes()[strings.ToLower(strings.TrimSpace(name))]
	t.PagingOff = slices.Clone(t.PagingOff)
	t.ErrorMarkers = slices.Clone(t.ErrorMarkers)
	t.WakeAnswers = slices.Clone(t.WakeAnswers)
	t.ReadOnly = slices.Clone(t.ReadOnly)
	t.PipeModifiers = slices.Clone(t.PipeModifiers)
	t.ExecAbbrev = maps.Clone(t.ExecAbbrev)
	t.ConfigAbbrev = maps.Clone(t.ConfigAbbrev)
	return t, ok
}

// typeNames are the names of builtinTypes, sorted (a test keeps them
// so): the tools' descriptions name the types at start, and the table's
// prompt patterns, compiled when it is built, would then be held by every
// process, most of which never open a console.
var typeNames = [...]string{TypeCiscoIOSTelnet, TypeVPCS}

// SupportedTypes returns the names of the device types, sorted.
func SupportedTypes() []string { return slices.Clone(typeNames[:]) }

// HasConfigMode reports whether the device has a configuration mode.
func (t *DeviceType) HasConfigMode() bool { return t.ConfigEnter != "" && t.ConfigPrompt != nil }

// execMode is the mode commands run in: the privileged one when the
// device has one.
func (t *DeviceType) execMode() Mode {
	if t.Enable != "" && t.EnablePrompt != nil {
		return ModeEnable
	}
	return ModeUser
}

// MatchPrompt reports whether line (the last line of the output) is a
// prompt of the device, its mode and its host name.
func (t *DeviceType) MatchPrompt(line string) (Mode, string, bool) {
	line = strings.TrimRight(line, " \t")
	if line == "" || len(line) > 128 {
		return ModeUnknown, "", false
	}
	for _, p := range []struct {
		re   *regexp.Regexp
		mode Mode
	}{{t.ConfigPrompt, ModeConfig}, {t.EnablePrompt, ModeEnable}, {t.UserPrompt, ModeUser}} {
		if p.re == nil {
			continue
		}
		if m := p.re.FindStringSubmatch(line); m != nil {
			host := ""
			if len(m) > 1 {
				host = m[1]
			}
			return p.mode, host, true
		}
	}
	return ModeUnknown, "", false
}

// errorLine returns the first line of out holding one of the device's
// error markers, trimmed, or "".
func (t *DeviceType) errorLine(out string) string {
	if len(t.ErrorMarkers) == 0 {
		return ""
	}
	for line := range strings.SplitSeq(out, "\n") {
		for _, m := range t.ErrorMarkers {
			if strings.Contains(line, m) {
				return strings.TrimSpace(line)
			}
		}
	}
	return ""
}

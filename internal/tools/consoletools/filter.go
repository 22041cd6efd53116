package consoletools

import (
	"strings"

	"agentchat/internal/console"
)

// DefaultBlocked returns the default blocked commands: commands that hang
// a console, flood it, or destroy the device's configuration or session,
// and those that would run a blocked command under another name (an
// exec alias, a Tcl shell, an EEM applet, a kron policy).
func DefaultBlocked() []string {
	return []string{"traceroute", "tracepath", "tracert", "debug", "test", "ping -f", "reload", "erase", "write erase",
		"format", "exit", "quit", "alias", "tclsh", "event manager", "kron"}
}

// Filter blocks commands as the device's CLI reads them. A blocked
// command is a sequence of whole words ("write erase"); a command is
// blocked when its words, compared case-insensitively, cover the blocked
// words one by one:
//
//   - the first word is the blocked word, or an abbreviation of it at
//     least as long as the device type's table says the CLI needs
//     (console.DeviceType.MinAbbrev: "rel" and "reloa" are "reload" on
//     IOS, "t" is "traceroute" on VPCS; a word the table does not know
//     needs console.DefaultMinAbbrev characters);
//   - every later word is the blocked word or any prefix of it ("wr e"
//     is "write erase"): the CLI reads an unambiguous prefix, and a
//     shorter one is at worst refused by the device;
//   - a word may also be the blocked word followed by a non-letter
//     ("traceroute6"), but not by a letter or a hyphen, so "exit" blocks
//     neither "exit-address-family" nor "exiting".
//
// Extra words after the blocked ones are arguments ("reload in 5"). A
// leading "do" (an exec command run from the configuration mode) is
// looked through, and the rest is read with the exec table. Write
// blocked commands in full words: "wr er" would not block "write erase".
type Filter struct {
	blocked [][]string
	texts   []string
}

// NewFilter returns a filter of the blocked commands (empty ones are
// ignored).
func NewFilter(blocked []string) *Filter {
	f := &Filter{}
	for _, b := range blocked {
		if w := strings.Fields(strings.ToLower(b)); len(w) > 0 {
			f.blocked = append(f.blocked, w)
			f.texts = append(f.texts, strings.Join(w, " "))
		}
	}
	return f
}

// Prefixes returns the blocked commands, normalized.
func (f *Filter) Prefixes() []string { return append([]string(nil), f.texts...) }

// Match returns the blocked command that blocks command on a device of
// type typ, read in the configuration mode when config, if any.
func (f *Filter) Match(typ *console.DeviceType, config bool, command string) (string, bool) {
	w := typ.Words(command)
	for len(w) > 0 {
		for i, b := range f.blocked {
			if covers(typ, config, w, b) {
				return f.texts[i], true
			}
		}
		if w[0] != "do" {
			break
		}
		w, config = w[1:], false
	}
	return "", false
}

// covers reports whether the command words w cover the blocked words b.
func covers(typ *console.DeviceType, config bool, w, b []string) bool {
	if len(w) < len(b) {
		return false
	}
	for i, bw := range b {
		cw := w[i]
		switch {
		case cw == bw:
		case strings.HasPrefix(cw, bw) && wordBoundary(cw[len(bw)]):
		case i == 0 && typ.Abbreviates(cw, bw, config):
		case i > 0 && strings.HasPrefix(bw, cw):
		default:
			return false
		}
	}
	return true
}

// wordBoundary reports whether b, the byte after a blocked word, ends the
// word: the CLI would not read the longer word as another command.
func wordBoundary(b byte) bool {
	return !(b >= 'a' && b <= 'z' || b == '-' || b == '_')
}

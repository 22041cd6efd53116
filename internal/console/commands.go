package console

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultMinAbbrev is the shortest abbreviation assumed for a command
// word missing from a device type's tables (a word a user blocked that
// the tables do not know): three characters, or the whole word when it is
// shorter.
const DefaultMinAbbrev = 3

// LineError is a line that cannot be typed as one command line: it holds
// a control character, or bytes that are not UTF-8.
type LineError struct {
	// Reason says what the line holds ("a line break (U+000A)").
	Reason string
}

func (e *LineError) Error() string {
	return "it holds " + e.Reason + "; a command is one line of printable text, so it was not sent"
}

// CheckLine returns a *LineError when line is not one printable line:
// it holds a C0 control character (line breaks, tab, Ctrl-U, Ctrl-C,
// NUL, ESC, ...), DEL, a C1 control character (U+0080 to U+009F), a
// Unicode line or paragraph separator, or invalid UTF-8. A console would
// read such a character as a key (a new line, an erased line, an escape)
// rather than as text, so the device would not run the line that was
// checked. Tab is refused too: a CLI completes the word before it.
func CheckLine(line string) error {
	for i, r := range line {
		switch {
		case r == utf8.RuneError && isInvalidAt(line, i):
			return &LineError{Reason: fmt.Sprintf("bytes that are not UTF-8 (at byte %d)", i)}
		case r == '\n', r == '\r':
			return &LineError{Reason: fmt.Sprintf("a line break (%U)", r)}
		case r == '\t':
			return &LineError{Reason: "a tab (U+0009), which a CLI reads as word completion"}
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
			return &LineError{Reason: fmt.Sprintf("a control character (%U)", r)}
		case r == '\u2028', r == '\u2029':
			return &LineError{Reason: fmt.Sprintf("a line separator (%U)", r)}
		}
	}
	return nil
}

// isInvalidAt reports whether the rune at byte i of s is an invalid
// encoding (and not a literal U+FFFD).
func isInvalidAt(s string, i int) bool {
	_, n := utf8.DecodeRuneInString(s[i:])
	return n <= 1
}

// CommandRefusal returns why command, a line typed at a prompt (not text
// inside a banner), must not be sent to such a device ("" when it may):
// it is not one printable line (CheckLine), or it holds a ? on a CLI that
// answers ? at once with help and keeps the line ("rel?oad" would run
// "reload").
func (t *DeviceType) CommandRefusal(command string) string {
	if err := CheckLine(command); err != nil {
		return err.Error()
	}
	if t.InlineHelp && strings.Contains(command, "?") {
		return "it holds a ?, which the CLI answers at once with help while keeping the rest of the line as a command, " +
			"so it was not sent; ask without ?"
	}
	return ""
}

// Words returns the words of command as the device reads them: lower
// case, split at blanks, with the type's ignored leading characters
// removed from the first word ("@show" is "show" on VPCS).
func (t *DeviceType) Words(command string) []string {
	w := strings.Fields(strings.ToLower(command))
	if len(w) > 0 && t.IgnoredLead != "" {
		if rest := strings.TrimLeft(w[0], t.IgnoredLead); rest != w[0] {
			if rest == "" {
				w = w[1:]
			} else {
				w[0] = rest
			}
		}
	}
	return w
}

// MinAbbrev returns the shortest abbreviation of the command word full
// (lower case) that the device reads as full: from the configuration
// table when config, else (or when absent there) from the exec table,
// else DefaultMinAbbrev, never more than the word's length.
func (t *DeviceType) MinAbbrev(full string, config bool) int {
	n, ok := 0, false
	if config {
		n, ok = t.ConfigAbbrev[full]
	}
	if !ok {
		n, ok = t.ExecAbbrev[full]
	}
	if !ok {
		n = DefaultMinAbbrev
	}
	return max(1, min(n, len(full)))
}

// Abbreviates reports whether the device reads typed, the first word of
// a command, as the command word full: typed is full or a prefix of it at
// least MinAbbrev long.
func (t *DeviceType) Abbreviates(typed, full string, config bool) bool {
	return strings.HasPrefix(full, typed) && len(typed) >= t.MinAbbrev(full, config)
}

// ReadOnlyCommand is an exec command a read-only tool may send.
type ReadOnlyCommand struct {
	// Word is the command word, in full ("show").
	Word string
	// Args, when set, are the only second words allowed (in full, any
	// abbreviation accepted): "terminal" is allowed only as "terminal
	// length" and "terminal width".
	Args []string
}

// String is the command as listed in a refusal ("terminal length|width").
func (c ReadOnlyCommand) String() string {
	if len(c.Args) == 0 {
		return c.Word
	}
	return c.Word + " " + strings.Join(c.Args, "|")
}

// ReadOnlyRefusal returns why a read-only tool must not send command to
// such a device ("" when it may). The command's first word, read as the
// CLI reads abbreviations (MinAbbrev), must be one of the type's ReadOnly
// commands; a command entering the configuration mode is named as such;
// on a CLI with output modifiers, every "|" must be followed by one of
// the PipeModifiers (not "redirect", "append" or "tee", which write
// files). A type without ReadOnly commands allows none.
func (t *DeviceType) ReadOnlyRefusal(command string) string {
	c := strings.ToLower(strings.Join(strings.Fields(command), " "))
	if t.EntersConfig != nil && t.EntersConfig.MatchString(c) {
		return "it enters the configuration mode"
	}
	allowed := make([]string, len(t.ReadOnly))
	for i, r := range t.ReadOnly {
		allowed[i] = r.String()
	}
	only := "only read-only commands (" + strings.Join(allowed, ", ") + ") are allowed here"
	w := t.Words(c)
	if len(w) == 0 {
		return only
	}
	var cmd *ReadOnlyCommand
	for i := range t.ReadOnly {
		if t.Abbreviates(w[0], t.ReadOnly[i].Word, false) {
			cmd = &t.ReadOnly[i]
			break
		}
	}
	if cmd == nil {
		return only
	}
	if len(cmd.Args) > 0 && (len(w) < 2 || !abbreviatesAny(w[1], cmd.Args)) {
		return fmt.Sprintf("%s is allowed here only as %s", cmd.Word, cmd)
	}
	if t.PipeModifiers != nil {
		parts := strings.Split(c, "|")
		if len(parts) > 1 {
			// The first "|" must name an allowed modifier; the text after
			// it is its regular expression, where "|" is alternation
			// ("include ospf|bgp"). A CLI that chains modifiers would read
			// a later "|" as one more: none of those that write files may
			// follow, even abbreviated.
			m := strings.Fields(parts[1])
			if len(m) == 0 || !abbreviatesAny(m[0], t.PipeModifiers) {
				return "only these output modifiers are allowed after |: " + strings.Join(t.PipeModifiers, ", ")
			}
			for _, p := range parts[2:] {
				if m := strings.Fields(p); len(m) > 0 && abbreviatesAny(m[0], writingPipeModifiers) {
					return "output modifiers that write files (" + strings.Join(writingPipeModifiers, ", ") + ") are not allowed"
				}
			}
		}
	}
	return ""
}

// writingPipeModifiers are the output modifiers of Cisco-like CLIs that
// write the output to a file.
var writingPipeModifiers = []string{"append", "redirect", "tee"}

// abbreviatesAny reports whether typed is one of words or a prefix of one.
func abbreviatesAny(typed string, words []string) bool {
	for _, w := range words {
		if strings.HasPrefix(w, typed) {
			return true
		}
	}
	return false
}

package console

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnterminatedText is the error of a text block (a banner) whose
// delimiter never comes back: sending it would leave the device waiting
// for the end of the text.
var ErrUnterminatedText = errors.New("the text is not closed by its delimiter; nothing was sent")

// Step is one unit of configuration sent to the device: one line, or a
// text block (a multi-line banner) whose lines are sent together.
type Step struct {
	// Lines are the lines to type, in order.
	Lines []string
	// Text is true for a text block: the lines after the first are text,
	// not commands.
	Text bool
	// Err, when set, means the step is not sent (ErrUnterminatedText).
	Err error
}

// Command is the step as one string, its lines joined with newlines.
func (s Step) Command() string { return strings.Join(s.Lines, "\n") }

// splitLines splits items into lines at "\n" (an item may hold several
// lines). Nothing else is removed: a "\r" stays, for CheckLine to refuse.
func splitLines(items []string) []string {
	var out []string
	for _, it := range items {
		out = append(out, strings.Split(it, "\n")...)
	}
	return out
}

// SplitConfig returns the configuration steps of items. Every line is a
// step, blank lines dropped, except a text block: a line matching the
// type's TextBlock ("banner motd ^C") whose delimiter does not also close
// it on the same line starts a block that runs, across items, to the
// first line containing the delimiter ("^C"); its lines are kept as
// written. A block never closed is one step with ErrUnterminatedText.
//
// Every line is checked as the device will read it (CheckLine) before
// anything is trimmed: a step holding a line with a control character
// ("\r" included) or invalid UTF-8 has that *LineError, with the line's
// number, and must not be sent; for a text block, that is the whole
// block.
func (t *DeviceType) SplitConfig(items []string) []Step {
	lines := splitLines(items)
	var steps []Step
	for i := 0; i < len(lines); i++ {
		bad := CheckLine(lines[i])
		line := strings.TrimSpace(lines[i])
		if line == "" && bad == nil {
			continue
		}
		delim, open := t.opensText(line)
		if !open || bad != nil {
			if bad != nil {
				line = lines[i] // as written, for the report
			}
			steps = append(steps, Step{Lines: []string{line}, Err: bad})
			continue
		}
		block := Step{Lines: []string{line}, Text: true, Err: ErrUnterminatedText}
		for i+1 < len(lines) {
			i++
			block.Lines = append(block.Lines, lines[i])
			if err := CheckLine(lines[i]); err != nil {
				block.Err = fmt.Errorf("line %d of the text block: %w", len(block.Lines), err)
				// the device would end the block elsewhere: skip to the
				// delimiter as written, so the text is not read as commands
				for i+1 < len(lines) && !strings.Contains(lines[i], delim) {
					i++
					block.Lines = append(block.Lines, lines[i])
				}
				break
			}
			if strings.Contains(lines[i], delim) {
				block.Err = nil
				break
			}
		}
		steps = append(steps, block)
	}
	return steps
}

// opensText reports whether line starts a text block that goes on after
// it, and the delimiter that closes the block.
func (t *DeviceType) opensText(line string) (string, bool) {
	if t.TextBlock == nil {
		return "", false
	}
	m := t.TextBlock.FindStringSubmatchIndex(line)
	if len(m) < 4 || m[2] < 0 {
		return "", false
	}
	delim := line[m[2]:m[3]]
	return delim, !strings.Contains(line[m[3]:], delim)
}

package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// Defaults of Config.
const (
	DefaultCommandTimeout = 20 * time.Second
	DefaultDialTimeout    = 10 * time.Second
	DefaultMaxOutput      = 64 << 10
)

// Timing of the prompt detection.
const (
	// settle is the quiet time after a prompt that is not the expected
	// one (another host name, a console being woken) before it is taken.
	settle = 250 * time.Millisecond
	// noEchoSettle is the quiet time after a prompt when the command's
	// echo was not seen (the prompt may be a stale one).
	noEchoSettle = 2 * time.Second
	// questionSettle is the quiet time after a question before the
	// command counts as waiting for an answer.
	questionSettle = time.Second
	// wakeRetry is how long an idle console is given to answer a return
	// before another one is sent.
	wakeRetry = time.Second
	// recoverTimeout bounds the wait for a prompt after an interrupt.
	recoverTimeout = 3 * time.Second
	// drainWait is how long output already on its way is read before a
	// command is sent.
	drainWait = 15 * time.Millisecond
	// textLineWait is the quiet time after each line of a text block.
	textLineWait = 300 * time.Millisecond
	writeTimeout = 5 * time.Second
	// liveMax bounds the text of one command kept for prompt detection;
	// beyond it, all but its last liveKeep bytes go to the output.
	liveMax  = 256 << 10
	liveKeep = 8 << 10
)

// Config configures a session.
type Config struct {
	// Addr is the console address, host:port.
	Addr string
	// Type is the device type (Lookup).
	Type DeviceType
	// Dial connects (nil: a net.Dialer).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// CommandTimeout is how long a command may stay silent before it fails
	// (default 20s).
	CommandTimeout time.Duration
	// WakeTimeout bounds the wait for a first prompt on an idle console
	// (default CommandTimeout).
	WakeTimeout time.Duration
	// DialTimeout bounds the connection (default 10s).
	DialTimeout time.Duration
	// MaxOutput caps Output, in bytes (default 64 KiB).
	MaxOutput int
}

// Session is one console connection, ready at the device's working
// prompt. It is not safe for concurrent use.
type Session struct {
	ctx  context.Context
	cfg  Config
	typ  *DeviceType
	conn net.Conn
	stop func() bool
	tn   telnet
	cl   cleaner
	raw  []byte
	data []byte
	more *regexp.Regexp // a pager prompt anywhere, to erase leftovers

	// The command under way: its text so far, the line whose echo is
	// expected, and what was found in text already moved to the output.
	cur         []byte
	echo        string
	echoSeen    bool
	echoWritten bool
	flushedErr  string
	moreAt      int
	question    string

	out        capped
	mode       Mode
	host       string
	prompt     string // the last prompt, trimmed
	promptLine string // as shown, with its trailing blanks
	broken     error
}

// Open connects to the console at cfg.Addr and readies it: it wakes the
// console, leaves a configuration mode, enters the privileged mode and
// turns paging off. The session is bound to ctx: when ctx is done the
// connection is closed. Close the session when done.
func Open(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.Type.UserPrompt == nil {
		return nil, errors.New("console: the device type has no prompt patterns")
	}
	if cfg.CommandTimeout <= 0 {
		cfg.CommandTimeout = DefaultCommandTimeout
	}
	if cfg.WakeTimeout <= 0 {
		cfg.WakeTimeout = cfg.CommandTimeout
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = DefaultMaxOutput
	}
	dial := cfg.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	dctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	conn, err := dial(dctx, "tcp", cfg.Addr)
	cancel()
	if err != nil {
		return nil, dialError(ctx, cfg.Addr, err)
	}
	s := &Session{
		ctx:  ctx,
		cfg:  cfg,
		typ:  &cfg.Type,
		conn: conn,
		raw:  make([]byte, 4096),
		out:  capped{max: cfg.MaxOutput},
	}
	if cfg.Type.More != nil {
		s.more = regexp.MustCompile(`[ \t]*(?:` + strings.TrimSuffix(cfg.Type.More.String(), "$") + `)[ \t]*`)
	}
	s.stop = context.AfterFunc(ctx, func() { _ = conn.Close() })
	if err := s.setup(); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// dialError is a readable connection failure.
func dialError(ctx context.Context, addr string, err error) error {
	reason := "connection failed"
	var ne net.Error
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("cannot connect to the console at %s: %w", addr, context.Cause(ctx))
	case errors.Is(err, syscall.ECONNREFUSED):
		reason = "connection refused (is the node started?)"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		reason = "host unreachable"
	case errors.As(err, &ne) && ne.Timeout():
		reason = "timed out"
	}
	return fmt.Errorf("cannot connect to the console at %s: %s", addr, reason)
}

// Close closes the connection; the device is left at its prompt.
func (s *Session) Close() error {
	s.stop()
	err := s.conn.Close()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// Output returns the session as the console showed it since it was
// readied: the prompt, each command echoed and its output, ending with
// the current prompt; capped at Config.MaxOutput with a marker.
func (s *Session) Output() string { return s.out.String() }

// Prompt returns the last prompt seen ("R1#").
func (s *Session) Prompt() string { return s.prompt }

// Mode returns the mode of the last prompt seen.
func (s *Session) Mode() Mode { return s.mode }

// Exec runs one command at the working prompt (the privileged one when
// the device has it). A *CommandError means the device refused it; other
// errors (ErrTimeout, ErrClosed) mean the session may be unusable, and the
// commands after are not run (ErrNotRun).
func (s *Session) Exec(command string) error {
	if s.broken != nil {
		return notRun(s.broken)
	}
	if err := s.toExecMode(); err != nil {
		return err
	}
	return s.run(command)
}

// Configure enters the configuration mode, sends steps in order and
// leaves the mode. It returns the error of each step (nil when it
// succeeded) and an error when the device could not be brought back to
// its working prompt. A refused line does not stop the others; a line
// that leaves the configuration mode is followed by entering it again.
func (s *Session) Configure(steps []Step) ([]error, error) {
	errs := make([]error, len(steps))
	skip := func(from int, err error) {
		for i := from; i < len(steps); i++ {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	if !s.typ.HasConfigMode() {
		skip(0, ErrNoConfigMode)
		return errs, nil
	}
	if s.broken != nil {
		skip(0, notRun(s.broken))
		return errs, nil
	}
	for i, st := range steps {
		switch {
		case st.Err != nil:
			errs[i] = st.Err
			continue
		case len(st.Lines) == 0:
			continue
		case s.broken != nil:
			errs[i] = notRun(s.broken)
			continue
		}
		if s.mode != ModeConfig {
			if err := s.enterConfig(); err != nil {
				skip(i, err)
				break
			}
		}
		if st.Text {
			errs[i] = s.runText(st.Lines)
		} else {
			errs[i] = s.run(st.Lines[0])
		}
	}
	if s.broken != nil {
		return errs, fmt.Errorf("the device may still be in configuration mode: %w", s.broken)
	}
	return errs, s.toExecMode()
}

// setup readies a new session.
func (s *Session) setup() error {
	if err := s.wake(); err != nil {
		return err
	}
	if err := s.toExecMode(); err != nil {
		return err
	}
	for _, c := range s.typ.PagingOff {
		if err := s.run(c); err != nil && !isCommandError(err) {
			return err
		}
	}
	s.out = capped{max: s.cfg.MaxOutput}
	s.out.write([]byte(s.promptLine))
	return nil
}

// wake sends returns until the console shows a prompt, answering the
// type's wake questions, within WakeTimeout.
func (s *Session) wake() error {
	until := time.Now().Add(s.cfg.WakeTimeout)
	s.begin("")
	for {
		if err := s.send(s.typ.Newline); err != nil {
			return err
		}
		f, err := s.await(waitFor{idle: wakeRetry, until: until, wake: true})
		switch {
		case err == nil && f == foundPrompt:
			s.cur = s.cur[:0]
			return nil
		case err == nil: // a question left on the console
			if err := s.send(s.typ.Interrupt); err != nil {
				return err
			}
		case errors.Is(err, ErrTimeout) && time.Now().Before(until):
		case errors.Is(err, ErrTimeout):
			return fmt.Errorf("%w: no prompt on the console within %s (%s; is the device started and booted?)",
				ErrTimeout, s.cfg.WakeTimeout, preamble(s.cur))
		default:
			return err
		}
	}
}

// toExecMode brings the device to its working prompt.
func (s *Session) toExecMode() error {
	if s.mode == ModeConfig && s.typ.HasConfigMode() {
		if err := s.leaveConfig(); err != nil {
			return err
		}
	}
	if s.mode == ModeUser && s.typ.execMode() == ModeEnable {
		return s.enable()
	}
	return nil
}

// enable enters the privileged mode.
func (s *Session) enable() error {
	err := s.run(s.typ.Enable)
	var ce *CommandError
	switch {
	case errors.As(err, &ce) && strings.Contains(strings.ToLower(ce.Message), "password"):
		s.broken = ErrEnablePassword
		return ErrEnablePassword
	case err != nil:
		return err
	case s.mode != ModeEnable:
		s.broken = fmt.Errorf("enable did not give the privileged prompt (prompt %q)", s.prompt)
		return s.broken
	}
	return nil
}

// enterConfig enters the configuration mode from the working prompt.
func (s *Session) enterConfig() error {
	if err := s.toExecMode(); err != nil {
		return err
	}
	if err := s.run(s.typ.ConfigEnter); err != nil {
		return fmt.Errorf("cannot enter the configuration mode: %w", err)
	}
	if s.mode != ModeConfig {
		return fmt.Errorf("cannot enter the configuration mode (prompt %q)", s.prompt)
	}
	return nil
}

// leaveConfig leaves the configuration mode (ConfigExit, twice at most).
func (s *Session) leaveConfig() error {
	for range 2 {
		if s.mode != ModeConfig {
			return nil
		}
		if err := s.run(s.typ.ConfigExit); err != nil && !isCommandError(err) {
			return err
		}
	}
	if s.mode == ModeConfig {
		s.broken = fmt.Errorf("the device stayed in configuration mode (prompt %q)", s.prompt)
		return s.broken
	}
	return nil
}

// run sends one line and waits for the prompt. A line that is not one
// printable line (CheckLine) is never sent.
func (s *Session) run(line string) error {
	if err := CheckLine(line); err != nil {
		return &CommandError{Message: err.Error()}
	}
	s.begin(line)
	if err := s.send(line + s.typ.Newline); err != nil {
		return s.finish(0, err)
	}
	f, err := s.await(waitFor{idle: s.cfg.CommandTimeout})
	return s.finish(f, err)
}

// runText sends the lines of a text block, then waits for the prompt
// after the last one.
func (s *Session) runText(lines []string) error {
	for _, l := range lines {
		if err := CheckLine(l); err != nil {
			return &CommandError{Message: err.Error()}
		}
	}
	last := lines[len(lines)-1]
	s.begin(last)
	for _, l := range lines[:len(lines)-1] {
		if err := s.send(l + s.typ.Newline); err != nil {
			return s.finish(0, err)
		}
		if err := s.quiet(textLineWait, s.cfg.CommandTimeout); err != nil {
			return s.finish(0, err)
		}
	}
	if err := s.send(last + s.typ.Newline); err != nil {
		return s.finish(0, err)
	}
	f, err := s.await(waitFor{idle: s.cfg.CommandTimeout})
	return s.finish(f, err)
}

// begin starts a command whose echo is echo: the text still arriving is
// read first (it belongs before the command).
func (s *Session) begin(echo string) {
	s.cur = s.cur[:0]
	s.echo, s.echoSeen, s.echoWritten = echo, echo == "", false
	s.flushedErr, s.moreAt, s.question = "", -1, ""
	for range 8 {
		n, err := s.fill(time.Now().Add(drainWait))
		if n == 0 || err != nil {
			break
		}
	}
}

// finish ends the command under way: it moves its text to the output
// and returns its error. After a question the command is interrupted;
// after a timeout the device is interrupted and, when no prompt comes
// back, the session is broken.
func (s *Session) finish(f found, err error) error {
	switch {
	case err != nil && errors.Is(err, ErrTimeout):
		if rerr := s.interrupt(); rerr != nil {
			s.broken = err
		}
		s.flush()
		return err
	case err != nil:
		s.broken = err
		s.flush()
		return err
	case f == foundQuestion:
		q := s.question
		if rerr := s.interrupt(); rerr != nil {
			s.broken = rerr
		}
		s.flush()
		return &CommandError{Message: fmt.Sprintf("the device asked %q, which cannot be answered here; the command was interrupted", q)}
	}
	msg := s.flushedErr
	if msg == "" {
		msg = s.typ.errorLine(string(s.cur))
	}
	s.flush()
	if msg != "" {
		return &CommandError{Message: msg}
	}
	return nil
}

// interrupt sends the type's interrupt and waits for a prompt.
func (s *Session) interrupt() error {
	if err := s.send(s.typ.Interrupt); err != nil {
		return err
	}
	s.echo, s.echoSeen = "", true
	wait := min(recoverTimeout, s.cfg.CommandTimeout)
	f, err := s.await(waitFor{idle: wait, until: time.Now().Add(2 * wait)})
	if err == nil && f != foundPrompt {
		return fmt.Errorf("%w (the device still asks %q)", ErrTimeout, s.question)
	}
	return err
}

// flush moves the text of the command under way to the output: the
// command itself first when the device did not echo it, pager prompts
// erased.
func (s *Session) flush() {
	s.emit(s.cur)
	s.cur = s.cur[:0]
}

func (s *Session) emit(text []byte) {
	if !s.echoWritten {
		s.echoWritten = true
		if !s.echoSeen && s.echo != "" {
			s.out.write([]byte(s.echo + "\n"))
		}
	}
	if s.more != nil {
		text = s.more.ReplaceAll(text, nil)
	}
	s.out.write(text)
}

// send writes text to the device.
func (s *Session) send(text string) error {
	if text == "" {
		return nil
	}
	_ = s.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := s.conn.Write(encode([]byte(text))); err != nil {
		return s.connErr(err)
	}
	return nil
}

// fill reads once, until deadline at the latest, and adds the cleaned
// text to the command under way. It returns the number of data bytes
// read (telnet commands excluded).
func (s *Session) fill(deadline time.Time) (int, error) {
	_ = s.conn.SetReadDeadline(deadline)
	n, err := s.conn.Read(s.raw)
	got := 0
	if n > 0 {
		s.data = s.tn.decode(s.raw[:n], s.data[:0])
		if a := s.tn.takeAnswer(); len(a) > 0 {
			_ = s.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
			_, _ = s.conn.Write(a) // a failed write fails the next read
		}
		s.cur = s.cl.feed(s.cur, s.data)
		got = len(s.data)
		s.trimLive()
	}
	return got, err
}

// trimLive moves the start of a very long command text to the output.
func (s *Session) trimLive() {
	if len(s.cur) <= liveMax {
		return
	}
	cut := len(s.cur) - liveKeep
	if i := bytes.IndexByte(s.cur[cut:], '\n'); i >= 0 {
		cut += i + 1
	}
	if !s.echoSeen && echoed(s.cur, s.echo) {
		s.echoSeen = true
	}
	if s.flushedErr == "" {
		s.flushedErr = s.typ.errorLine(string(s.cur[:cut]))
	}
	s.emit(s.cur[:cut])
	s.cur = append(s.cur[:0], s.cur[cut:]...)
	if s.moreAt >= 0 {
		s.moreAt -= cut
	}
}

// quiet reads until the device has been silent for d, within max.
func (s *Session) quiet(d, max time.Duration) error {
	end := time.Now().Add(max)
	for {
		dl := time.Now().Add(d)
		if dl.After(end) {
			dl = end
		}
		n, err := s.fill(dl)
		switch {
		case err != nil && isTimeout(err) && n == 0:
			return nil
		case err != nil && !isTimeout(err):
			return s.connErr(err)
		case !time.Now().Before(end):
			return nil
		}
	}
}

// waitFor is what await waits for.
type waitFor struct {
	// idle: fail with ErrTimeout when the device is silent this long
	// without a prompt.
	idle time.Duration
	// until: fail with ErrTimeout at this time (zero: no bound).
	until time.Time
	// wake: the console is being woken: any prompt is taken after a short
	// quiet, wake questions are answered, login prompts fail.
	wake bool
}

type found int

const (
	foundPrompt found = iota + 1
	foundQuestion
)

// await reads until the last line is a prompt (or a question the
// command asks), answering pager prompts. A prompt is taken at once when
// the command's echo was seen and the host name is the known one; else
// only after a quiet time (it may be stale, or output that looks like a
// prompt).
func (s *Session) await(w waitFor) (found, error) {
	last := time.Now()
	answered := -1
	for {
		now := time.Now()
		rawTail := string(s.cur[bytes.LastIndexByte(s.cur, '\n')+1:])
		tail := strings.TrimRight(rawTail, " \t")
		if s.typ.More != nil && len(s.cur) != s.moreAt && s.typ.More.MatchString(tail) {
			s.moreAt = len(s.cur)
			if err := s.send(" "); err != nil {
				return 0, err
			}
		}
		if !s.echoSeen && echoed(s.cur, s.echo) {
			s.echoSeen = true
		}
		quiet := now.Sub(last)
		wait := time.Duration(-1)
		if mode, host, ok := s.typ.MatchPrompt(tail); ok {
			switch {
			case w.wake:
				wait = settle
			case !s.echoSeen:
				wait = noEchoSettle
			case s.host != "" && host != s.host:
				wait = settle
			default:
				wait = 0
			}
			if quiet >= wait {
				s.mode, s.host, s.prompt, s.promptLine = mode, host, tail, rawTail
				return foundPrompt, nil
			}
		} else if w.wake && s.typ.Login != nil && s.typ.Login.MatchString(tail) {
			wait = settle
			if quiet >= wait {
				return 0, ErrLogin
			}
		} else if a, ok := s.wakeAnswer(tail); w.wake && ok {
			if len(s.cur) != answered {
				answered = len(s.cur)
				if err := s.send(a + s.typ.Newline); err != nil {
					return 0, err
				}
			}
		} else if s.typ.Question != nil && s.typ.Question.MatchString(tail) {
			wait = questionSettle
			if quiet >= wait {
				s.question = tail
				return foundQuestion, nil
			}
		}
		dl := last.Add(w.idle)
		if !w.until.IsZero() && w.until.Before(dl) {
			dl = w.until
		}
		if wait >= 0 && last.Add(wait).Before(dl) {
			dl = last.Add(wait)
		}
		if !now.Before(dl) {
			return 0, fmt.Errorf("%w (no prompt within %s)", ErrTimeout, w.idle)
		}
		n, err := s.fill(dl)
		if n > 0 {
			last = time.Now()
		}
		if err != nil && !isTimeout(err) {
			if n > 0 {
				continue // look at the last data first; the error comes back
			}
			return 0, s.connErr(err)
		}
	}
}

// wakeAnswer returns the reply to a wake question on the last line.
func (s *Session) wakeAnswer(tail string) (string, bool) {
	for _, a := range s.typ.WakeAnswers {
		if a.Pattern.MatchString(tail) {
			return a.Reply, true
		}
	}
	return "", false
}

// connErr is the error of a failed read or write.
func (s *Session) connErr(err error) error {
	if s.ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", ErrClosed, context.Cause(s.ctx))
	}
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) {
		return ErrClosed
	}
	return fmt.Errorf("%w: %v", ErrClosed, err)
}

// preamble describes what a console printed before a device prompt was
// recognised, without quoting it: such text is not known to come from a
// device (a console may answer with anything, instructions to the model
// included), so it is withheld rather than returned.
func preamble(buf []byte) string {
	if len(bytes.TrimSpace(buf)) == 0 {
		return "it shows nothing"
	}
	return fmt.Sprintf("the console answered before a device prompt was recognised; its output (%d bytes) is withheld", len(buf))
}

// echoed reports whether buf holds the echo of cmd (its start, or for a
// long command its end, in case the device scrolled the line).
func echoed(buf []byte, cmd string) bool {
	if cmd == "" {
		return true
	}
	head := cmd[:min(len(cmd), 40)]
	if bytes.Contains(buf, []byte(head)) {
		return true
	}
	return len(cmd) > 20 && bytes.Contains(buf, []byte(cmd[len(cmd)-20:]))
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func isCommandError(err error) bool {
	var ce *CommandError
	return errors.As(err, &ce)
}

// capped is the output, cut at max bytes.
type capped struct {
	b       []byte
	max     int
	dropped int
}

func (c *capped) write(p []byte) {
	room := max(c.max-len(c.b), 0)
	if len(p) <= room {
		c.b = append(c.b, p...)
		return
	}
	c.b = append(c.b, p[:room]...)
	c.dropped += len(p) - room
}

func (c *capped) String() string {
	s := strings.ToValidUTF8(string(c.b), "")
	if c.dropped > 0 {
		s += fmt.Sprintf("\n[output truncated: the %d KiB limit per device was reached; %d more bytes not shown]",
			c.max>>10, c.dropped)
	}
	return s
}

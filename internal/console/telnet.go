package console

// Telnet (RFC 854, 855) commands and the options this client knows.
const (
	tnSE   = 240
	tnSB   = 250
	tnWILL = 251
	tnWONT = 252
	tnDO   = 253
	tnDONT = 254
	tnIAC  = 255

	optEcho = 1 // RFC 857
	optSGA  = 3 // RFC 858: suppress go-ahead
)

// telnet decodes the byte stream of a telnet server: it removes every
// telnet command and subnegotiation from the data and queues the answers
// to option negotiation. Its policy is minimal: the server may echo and
// suppress go-ahead (the character mode every console uses), this client
// suppresses go-ahead too, and every other option is refused. An answer is
// only sent when it changes an option's state or refuses a request, so
// negotiation cannot loop (RFC 1143).
type telnet struct {
	state  int
	cmd    byte      // WILL, WONT, DO or DONT awaiting its option
	us     [256]bool // options enabled on this side
	him    [256]bool // options enabled on the server's side
	answer []byte    // negotiation answers not yet written
}

// Decoder states.
const (
	tsData = iota
	tsIAC
	tsOption
	tsSB
	tsSBIAC
)

// decode appends the data bytes of in to out and returns out; answers
// are queued in t.answer.
func (t *telnet) decode(in, out []byte) []byte {
	for _, b := range in {
		switch t.state {
		case tsData:
			if b == tnIAC {
				t.state = tsIAC
				continue
			}
			out = append(out, b)
		case tsIAC:
			switch b {
			case tnIAC: // an escaped 255 data byte
				out = append(out, b)
				t.state = tsData
			case tnWILL, tnWONT, tnDO, tnDONT:
				t.cmd, t.state = b, tsOption
			case tnSB:
				t.state = tsSB
			default: // NOP, GA, AYT, DM, ...: no data, no answer
				t.state = tsData
			}
		case tsOption:
			t.negotiate(t.cmd, b)
			t.state = tsData
		case tsSB: // subnegotiations are for options this client refused
			if b == tnIAC {
				t.state = tsSBIAC
			}
		case tsSBIAC:
			switch b {
			case tnSE:
				t.state = tsData
			default: // IAC IAC inside the subnegotiation, or a broken one
				t.state = tsSB
			}
		}
	}
	return out
}

// negotiate answers one option request.
func (t *telnet) negotiate(cmd, opt byte) {
	switch cmd {
	case tnWILL: // the server offers to enable opt on its side
		if opt == optEcho || opt == optSGA {
			if !t.him[opt] {
				t.him[opt] = true
				t.reply(tnDO, opt)
			}
			return
		}
		t.reply(tnDONT, opt)
	case tnWONT:
		if t.him[opt] {
			t.him[opt] = false
			t.reply(tnDONT, opt)
		}
	case tnDO: // the server asks this side to enable opt
		if opt == optSGA {
			if !t.us[opt] {
				t.us[opt] = true
				t.reply(tnWILL, opt)
			}
			return
		}
		t.reply(tnWONT, opt)
	case tnDONT:
		if t.us[opt] {
			t.us[opt] = false
			t.reply(tnWONT, opt)
		}
	}
}

func (t *telnet) reply(cmd, opt byte) { t.answer = append(t.answer, tnIAC, cmd, opt) }

// takeAnswer returns the queued answers and clears them.
func (t *telnet) takeAnswer() []byte {
	a := t.answer
	t.answer = nil
	return a
}

// encode escapes the data bytes p for sending: a 255 byte is doubled.
func encode(p []byte) []byte {
	out := make([]byte, 0, len(p))
	for _, b := range p {
		if b == tnIAC {
			out = append(out, tnIAC)
		}
		out = append(out, b)
	}
	return out
}

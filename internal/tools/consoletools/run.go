package consoletools

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"agentchat/internal/console"
	"agentchat/internal/gns3"
	"agentchat/internal/tools/toolkit"
)

// errBudget ends the devices still running shortly before the tool's
// deadline, so that their partial results are returned.
var errBudget = errors.New("the tool's time limit was reached")

// maxListedErrors bounds the command errors listed in a result.
const maxListedErrors = 5

// plan is what one device will be sent, checked before anything is.
type plan struct {
	node    *gns3.Node
	typ     console.DeviceType
	addr    string
	exec    []string       // kindShow, kindVPCS
	steps   []console.Step // kindConfig
	blocked []string       // commands not sent
	refused []string       // why each blocked command was, "cmd: reason"
}

func (p *plan) empty() bool { return len(p.exec) == 0 && len(p.steps) == 0 }

// execute runs a console tool of kind k on the devices devs. Items naming
// the same device are merged, in order, into the first one: the device
// gets one session with all their commands and one result.
func (c *call) execute(ctx context.Context, k kind, devs []device) toolkit.Report[deviceResult] {
	nodes, err := c.client.GetNodes(ctx, c.Token, c.ProjectID)
	if err != nil {
		items := make([]deviceResult, len(devs))
		for i, d := range devs {
			items[i].DeviceName = d.name()
		}
		return toolkit.FailAll(items, "cannot read the project's nodes: "+gns3.Describe(err))
	}
	type entry struct {
		name  string
		node  *gns3.Node
		lines []string
		err   error
	}
	var entries []*entry
	seen := map[string]*entry{}
	for _, d := range devs {
		if strings.TrimSpace(d.name()) == "" {
			entries = append(entries, &entry{err: errors.New("the item has no device_name; name the device (its GNS3 name or node_id)")})
			continue
		}
		n, err := toolkit.Nodes(nodes).ResolveAs(toolkit.DeviceKind, d.name())
		if err != nil {
			entries = append(entries, &entry{name: d.name(), err: err})
			continue
		}
		if first, dup := seen[n.NodeID]; dup {
			first.lines = append(first.lines, d.lines()...)
			continue
		}
		e := &entry{name: d.name(), node: n, lines: append([]string(nil), d.lines()...)}
		seen[n.NodeID] = e
		entries = append(entries, e)
	}
	items := make([]deviceResult, len(entries))
	plans := make([]*plan, len(entries))
	for i, e := range entries {
		items[i].DeviceName = e.name
		if e.err != nil {
			items[i].Fail(e.err.Error())
			continue
		}
		p, err := c.plan(ctx, k, e.node, e.lines)
		if err != nil {
			items[i].Fail(err.Error())
			continue
		}
		plans[i] = p
	}

	runCtx, cancel := withBudget(ctx)
	defer cancel()
	sem := make(chan struct{}, c.concurrency)
	toolkit.ForEach(len(plans), func(i int) {
		p := plans[i]
		if p == nil {
			return
		}
		select {
		case sem <- struct{}{}:
		case <-runCtx.Done():
			items[i].BlockedCommands = p.blocked
			items[i].Fail("not run: " + describe(context.Cause(runCtx)))
			return
		}
		defer func() { <-sem }()
		c.runDevice(runCtx, k, c.ProjectID, p, &items[i])
	})
	return toolkit.Finish(items)
}

// withBudget bounds ctx a little before its deadline (errBudget).
func withBudget(ctx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	margin := min(budgetMargin, time.Until(dl)/10)
	return context.WithDeadlineCause(ctx, dl.Add(-margin), errBudget)
}

// plan checks a device and its commands: its device type fits the tool,
// its console is a telnet one on an allowed host, and every command is
// one that may be sent (check).
func (s *Toolset) plan(ctx context.Context, k kind, n *gns3.Node, items []string) (*plan, error) {
	typ, err := deviceType(n)
	if err != nil {
		return nil, err
	}
	switch {
	case k == kindVPCS && typ.Name != console.TypeVPCS:
		return nil, fmt.Errorf("%s is not a VPCS node (device type %s); use %s or %s", n.Name, typ.Name,
			ToolDeviceCommands, ToolDeviceConfigCommands)
	case k == kindConfig && !typ.HasConfigMode():
		return nil, fmt.Errorf("%s (device type %s) has no configuration mode; use %s", n.Name, typ.Name, ToolVPCSCommands)
	}
	if n.Status != "" && n.Status != gns3.NodeStarted {
		return nil, fmt.Errorf("%s is %s; start it first (start_gns3_node)", n.Name, n.Status)
	}
	addr, err := s.consoleAddr(ctx, n)
	if err != nil {
		return nil, err
	}
	p := &plan{node: n, typ: typ, addr: addr}
	refuse := func(cmd, why string) {
		cmd = printable(cmd)
		p.blocked = append(p.blocked, cmd)
		p.refused = append(p.refused, short(cmd)+": "+why)
	}
	lines := 0
	if k == kindConfig {
		for _, st := range typ.SplitConfig(items) {
			lines += len(st.Lines)
			var le *console.LineError
			if errors.As(st.Err, &le) {
				refuse(st.Lines[0], st.Err.Error())
				continue
			}
			if why := s.checkStep(&typ, st); why != "" {
				refuse(st.Lines[0], why)
				continue
			}
			p.steps = append(p.steps, st)
		}
	} else {
		for _, c := range items {
			lines++
			if strings.TrimSpace(c) == "" && console.CheckLine(c) == nil {
				continue
			}
			if why := s.check(k, &typ, c, false); why != "" {
				refuse(c, why)
				continue
			}
			p.exec = append(p.exec, strings.TrimSpace(c))
		}
	}
	if lines > maxLinesPerDevice {
		return nil, fmt.Errorf("%s: %d lines, more than %d per device", n.Name, lines, maxLinesPerDevice)
	}
	if k == kindShow && len(p.refused) > 0 {
		p.refused = append(p.refused, readOnlyHint(&typ))
	}
	return p, nil
}

// check returns why cmd, a command of a tool of kind k (or, when text, a
// line of a banner's text), must not be sent to a device of type typ, ""
// when it may: it is not one printable line (or holds a ? on IOS), the
// filter blocks it, or, for the read-only tool, it is not a read-only
// command.
func (s *Toolset) check(k kind, typ *console.DeviceType, cmd string, text bool) string {
	if text {
		if err := console.CheckLine(cmd); err != nil {
			return err.Error()
		}
	} else if why := typ.CommandRefusal(cmd); why != "" {
		return why
	}
	if blocked, ok := s.filter.Match(typ, k == kindConfig, cmd); ok {
		return fmt.Sprintf("blocked by the safety filter (%q), not sent", blocked)
	}
	if k == kindShow {
		if why := typ.ReadOnlyRefusal(cmd); why != "" {
			return "refused, not sent: " + why
		}
	}
	return ""
}

// readOnlyHint is said once after the refusals of the show tool: which
// tool sends the other commands to a device of type typ.
func readOnlyHint(typ *console.DeviceType) string {
	if typ.HasConfigMode() {
		return fmt.Sprintf("%s sends only read-only commands; use %s for configuration and other exec commands (as \"do <command>\")",
			ToolDeviceCommands, ToolDeviceConfigCommands)
	}
	return fmt.Sprintf("%s sends only read-only commands; use %s for the other commands of this device", ToolDeviceCommands, ToolVPCSCommands)
}

// checkStep returns why a configuration step must not be sent, "" when
// it may: each of its lines is checked, a banner's text lines too (a
// device that ends the text elsewhere would run them as commands).
func (s *Toolset) checkStep(typ *console.DeviceType, st console.Step) string {
	for i, l := range st.Lines {
		why := s.check(kindConfig, typ, l, st.Text && i > 0)
		if why == "" {
			continue
		}
		if i > 0 {
			return fmt.Sprintf("line %d of the block (%s) %s; the whole block was not sent", i+1, short(printable(l)), why)
		}
		return why
	}
	return ""
}

// printable is cmd as quoted in a result: as given, or with its control
// characters and invalid bytes escaped when it has any.
func printable(cmd string) string {
	if console.CheckLine(cmd) == nil {
		return strings.TrimSpace(cmd)
	}
	q := strconv.Quote(cmd)
	return q[1 : len(q)-1]
}

// runDevice locks a device, opens its console, sends the plan and fills
// it with the outcome; the console is closed and the lock released
// before it returns.
func (s *Toolset) runDevice(ctx context.Context, k kind, projectID string, p *plan, it *deviceResult) {
	it.BlockedCommands = p.blocked
	if p.empty() {
		it.Fail(joinProblems("every command was refused, nothing was sent", p.refused))
		return
	}
	ctx, span := traceDevice(ctx, k, p)
	defer endDevice(span, it)
	dctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	l, err := s.lock(dctx, projectID, p.node.NodeID, p.node.Name, cancel)
	if err != nil {
		it.Fail(describe(err))
		return
	}
	defer l.release()

	start := time.Now()
	sess, err := console.Open(dctx, console.Config{
		Addr:           p.addr,
		Type:           p.typ,
		Dial:           s.dial,
		CommandTimeout: s.cmdTimeout,
	})
	if err != nil {
		it.Fail(fmt.Sprintf("cannot use the console of %s: %s", p.node.Name, describe(err)))
		return
	}
	defer func() { _ = sess.Close() }()

	var cmds []string
	var errs []error
	var final error
	if k == kindConfig {
		for _, st := range p.steps {
			cmds = append(cmds, st.Command())
		}
		errs, final = sess.Configure(p.steps)
	} else {
		cmds = p.exec
		for _, c := range p.exec {
			errs = append(errs, sess.Exec(c))
		}
	}
	it.Output = sess.Output()

	ok := 0
	var problems []string
	for i, e := range errs {
		if e == nil {
			ok++
			continue
		}
		if len(problems) < maxListedErrors {
			problems = append(problems, short(cmds[i])+": "+describe(e))
		}
	}
	if n := len(errs) - ok; n > maxListedErrors {
		problems = append(problems, fmt.Sprintf("(%d more failed)", n-maxListedErrors))
	}
	if final != nil {
		problems = append(problems, "could not return to the privileged prompt: "+describe(final))
	}
	problems = append(problems, p.refused...)
	total := len(errs) + len(p.blocked)
	switch msg := strings.Join(problems, "; "); {
	case ok == total && final == nil:
		it.Succeed()
	case ok == 0:
		it.Fail(msg)
	default:
		it.Partial(msg)
	}
	s.log.DebugContext(ctx, "console commands run", "device", p.node.Name, "node_id", p.node.NodeID,
		"commands", len(errs), "failed", len(errs)-ok, "blocked", len(p.blocked), "duration", time.Since(start))
}

// describe is the text of an error in a result.
func describe(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, errBudget):
		return "stopped: " + errBudget.Error()
	case errors.Is(err, errLockLost):
		return "stopped: " + errLockLost.Error()
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "stopped: the time limit was reached"
	}
	return err.Error()
}

// joinProblems is msg followed by the problems.
func joinProblems(msg string, problems []string) string {
	if len(problems) == 0 {
		return msg
	}
	return msg + ": " + strings.Join(problems, "; ")
}

// short is a command as quoted in an error: its first line, bounded.
func short(cmd string) string {
	first, _, multi := strings.Cut(cmd, "\n")
	if len(first) > 80 {
		first = strings.ToValidUTF8(first[:80], "") + "..."
	} else if multi {
		first += " ..."
	}
	return first
}

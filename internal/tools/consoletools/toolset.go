package consoletools

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/console"
	"agentchat/internal/gns3"
	"agentchat/internal/tools/toolkit"
)

// Tool names.
const (
	ToolDeviceCommands       = "execute_multiple_device_commands"
	ToolDeviceConfigCommands = "execute_multiple_device_config_commands"
	ToolVPCSCommands         = "execute_vpcs_commands"
)

// Defaults of Options, and the timings of a run.
const (
	defaultConcurrency    = 4
	defaultCommandTimeout = 20 * time.Second
	// toolTimeout is agent.Tool.Timeout of every console tool.
	toolTimeout = 5 * time.Minute
	// defaultLockTTL is the lease of a device lock, renewed every half.
	defaultLockTTL = 2 * time.Minute
	// defaultLockWait is how long a busy device is waited for, polled
	// every defaultLockPoll.
	defaultLockWait = 5 * time.Second
	defaultLockPoll = time.Second
	// budgetMargin is kept free before the tool's deadline, so that the
	// answer (partial results included) is returned before it.
	budgetMargin = 15 * time.Second
)

// ErrNotConfigured is the error of every tool when the server has no
// GNS3 controller (the error of the GNS3 tools).
var ErrNotConfigured = toolkit.ErrNotConfigured

// Options configure a Toolset.
type Options struct {
	// Client calls the GNS3 controller; nil: every tool fails with
	// ErrNotConfigured ("GNS3 is not configured").
	Client *gns3.Client
	// ConsoleHost is the host used when a node has no console_host (or
	// an unspecified one, 0.0.0.0 or ::): the host of GNS3_URL.
	ConsoleHost string
	// AllowedHosts allows console hosts besides the GNS3 host
	// (CONSOLE_ALLOWED_HOSTS, a config.HostAllowList); nil: none. A node
	// whose console is on another host fails and is not connected to.
	AllowedHosts HostAllower
	// Blocked are the blocked commands (nil: DefaultBlocked(); empty and
	// not nil: none); see Filter.
	Blocked []string
	// Locks is the per-device lock shared by every instance; nil: a
	// MemoryLocker, which only protects the consoles within this process.
	Locks DeviceLocker
	// Logger receives a line per call with failures (nil: slog.Default()).
	Logger *slog.Logger
	// CommandTimeout is how long a command may stay silent before it
	// fails (default 20s).
	CommandTimeout time.Duration
	// Concurrency bounds the devices one call drives at once (default 4).
	Concurrency int
	// Dial connects to consoles (nil: a net.Dialer); for tests.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// HostAllower tells whether a host (a name or an address literal) is
// allowed; config.HostAllowList is one.
type HostAllower interface {
	AllowsHost(host string) bool
}

// Toolset builds the console tools. Safe for concurrent use.
type Toolset struct {
	client      *gns3.Client
	consoleHost string
	allowed     HostAllower
	lookup      func(ctx context.Context, host string) ([]netip.Addr, error)
	filter      *Filter
	locks       DeviceLocker
	log         *slog.Logger
	cmdTimeout  time.Duration
	concurrency int
	dial        func(ctx context.Context, network, addr string) (net.Conn, error)
	// Lock timings (tests shorten them).
	lockTTL, lockWait, lockPoll time.Duration
	tools                       *toolkit.Set[*call]
}

// kind is what a tool sends.
type kind int

const (
	kindShow   kind = iota // read-only commands at the privileged prompt
	kindConfig             // configuration lines
	kindVPCS               // VPCS commands
)

// spec is one tool in its project-chat and /v1 forms.
type spec = toolkit.Def[*call]

// call is one console tool call: the toolset, the project and the
// caller's GNS3 token.
type call struct {
	*Toolset
	toolkit.Call
}

// New returns a toolset with the defaults applied to o.
func New(o Options) *Toolset {
	s := &Toolset{
		client:      o.Client,
		consoleHost: normalHost(o.ConsoleHost),
		allowed:     o.AllowedHosts,
		lookup:      lookupHost,
		locks:       o.Locks,
		log:         o.Logger,
		cmdTimeout:  o.CommandTimeout,
		concurrency: o.Concurrency,
		dial:        o.Dial,
		lockTTL:     defaultLockTTL,
		lockWait:    defaultLockWait,
		lockPoll:    defaultLockPoll,
	}
	blocked := o.Blocked
	if blocked == nil {
		blocked = DefaultBlocked()
	}
	s.filter = NewFilter(blocked)
	if s.locks == nil {
		s.locks = &MemoryLocker{}
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.cmdTimeout <= 0 {
		s.cmdTimeout = defaultCommandTimeout
	}
	if s.concurrency <= 0 {
		s.concurrency = defaultConcurrency
	}
	t := s.texts()
	specs := []*spec{deviceCommandsSpec(t), deviceConfigCommandsSpec(t), vpcsCommandsSpec(t)}
	for _, sp := range specs {
		sp.Timeout = toolTimeout
	}
	s.tools = &toolkit.Set[*call]{
		Defs:       specs,
		Configured: s.client != nil,
		Begin:      func(_ context.Context, c toolkit.Call) *call { return &call{Toolset: s, Call: c} },
		Logger:     s.log,
		Failures:   "console tool had failures",
	}
	return s
}

// lookupHost resolves a host name with the system's resolver.
func lookupHost(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// texts are the parts of the tool descriptions the tools share.
type texts struct {
	devices, safety, answer string
}

// texts tells the model which devices the tools drive, which commands are
// never sent (the filter's prefixes) and what the answer holds.
func (s *Toolset) texts() texts {
	blocked := "none"
	if p := s.filter.Prefixes(); len(p) > 0 {
		blocked = strings.Join(p, ", ")
	}
	types := strings.Join(console.SupportedTypes(), ", ")
	return texts{
		devices: fmt.Sprintf("Each device is a started node of the project with a telnet console, named by its GNS3 name; "+
			"its driver comes from the node tag device_type:<type> (supported: %s; VPCS nodes need no tag). "+
			"Up to %d devices run in parallel, up to %d commands each. ", types, maxDevices, maxCommands),
		safety: fmt.Sprintf("For safety, commands starting with these words, or their abbreviations as the device reads them, "+
			"are never sent and are reported in blocked_commands: %s. Each command is one line: line breaks and other control "+
			"characters are refused. ", blocked),
		answer: "Answer: one result per device with status success, partial_success (some commands failed or were blocked) or failed, " +
			"the console output (prompts, commands and their output, as on the console) and the errors.",
	}
}

// Project returns the three console tools for a project chat on
// projectID (no project_id argument).
func (s *Toolset) Project(projectID string) []agent.Tool { return s.tools.Project(projectID) }

// Gateway returns the three console tools for the stateless /v1
// gateway: each takes a required project_id (a UUID).
func (s *Toolset) Gateway() []agent.Tool { return s.tools.Gateway() }

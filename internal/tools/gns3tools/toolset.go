package gns3tools

import (
	"log/slog"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/gns3"
	"agentchat/internal/tools/gns3topo"
	"agentchat/internal/tools/toolkit"
)

// Tool names.
const (
	ToolTopologyReader = "gns3_topology_reader"
	ToolGetTemplates   = "get_gns3_templates"
	ToolCreateNode     = "create_gns3_node"
	ToolCreateLink     = "create_gns3_link"
	ToolStartNode      = "start_gns3_node"
	ToolStopNode       = "stop_gns3_node"
	ToolSuspendNode    = "suspend_gns3_node"
	ToolUpdateNodeName = "update_gns3_node_name"
	ToolDeleteNode     = "delete_gns3_node"
	ToolDeleteLink     = "delete_gns3_link"
	ToolListProjects   = "list_gns3_projects"
)

// Bounds of the arguments, and defaults of Options.
const (
	maxCreateNodes      = 20
	maxLinks            = 50
	maxNodeRefs         = 50
	defaultConcurrency  = 4
	defaultPollInterval = 500 * time.Millisecond
)

// ErrNotConfigured is the error of every tool when the server has no
// GNS3 controller (no GNS3_URL).
var ErrNotConfigured = toolkit.ErrNotConfigured

// Options configure a Toolset.
type Options struct {
	// Client calls the GNS3 controller; nil means GNS3 is not configured:
	// every tool still exists and fails with ErrNotConfigured.
	Client *gns3.Client
	// Topology serves gns3_topology_reader; nil means one built from
	// Client with its defaults.
	Topology *gns3topo.Provider
	// Logger receives one line per tool call that had failures (nil:
	// slog.Default()).
	Logger *slog.Logger
	// PollInterval is the period of the status polls of start, stop and
	// suspend (default 500ms).
	PollInterval time.Duration
	// WaitTimeout returns how long start, stop and suspend wait for a node
	// of that node_type to reach the asked status (nil: DefaultWaitTimeout).
	WaitTimeout func(nodeType string) time.Duration
	// Concurrency bounds the GNS3 requests one tool call runs in parallel
	// (default 4).
	Concurrency int
}

// Toolset builds the GNS3 tools. Safe for concurrent use.
type Toolset struct {
	client      *gns3.Client
	topo        *gns3topo.Provider
	log         *slog.Logger
	poll        time.Duration
	waitTimeout func(nodeType string) time.Duration
	concurrency int
	tools       *toolkit.Set[*call]
}

// New returns a toolset with the defaults applied to o.
func New(o Options) *Toolset {
	s := &Toolset{
		client:      o.Client,
		topo:        o.Topology,
		log:         o.Logger,
		poll:        o.PollInterval,
		waitTimeout: o.WaitTimeout,
		concurrency: o.Concurrency,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.topo == nil {
		s.topo = gns3topo.New(gns3topo.Options{Client: o.Client, Logger: s.log})
	}
	if s.poll <= 0 {
		s.poll = defaultPollInterval
	}
	if s.waitTimeout == nil {
		s.waitTimeout = DefaultWaitTimeout
	}
	if s.concurrency <= 0 {
		s.concurrency = defaultConcurrency
	}
	specs := []*spec{
		topologyReaderSpec(),
		templatesSpec(),
		createNodeSpec(),
		createLinkSpec(),
		actionSpec(startAction, s.actionTimeout()),
		actionSpec(stopAction, s.actionTimeout()),
		actionSpec(suspendAction, s.actionTimeout()),
		renameNodeSpec(),
		deleteNodeSpec(),
		deleteLinkSpec(),
		linkConditionsSpec(),
		analyzeTrafficSpec(),
		listProjectsSpec(),
	}
	s.tools = &toolkit.Set[*call]{Defs: specs, Configured: s.client != nil, Begin: s.newCall, Logger: s.log, Failures: "gns3 tool had failures"}
	return s
}

// Project returns the project-chat tools of every mode for projectID, the
// project fixed by the route: no tool takes a project_id, and
// list_gns3_projects is not among them.
func (s *Toolset) Project(projectID string) []agent.Tool { return s.tools.Project(projectID) }

// Gateway returns the tools of the stateless /v1 gateway: every project
// tool with a required project_id (a UUID) first in its schema, and
// list_gns3_projects.
func (s *Toolset) Gateway() []agent.Tool { return s.tools.Gateway() }

// actionTimeout is the agent.Tool timeout of start, stop and suspend: the
// longest wait of any node type, plus a minute for the GNS3 requests, and
// at least four minutes.
func (s *Toolset) actionTimeout() time.Duration {
	longest := s.waitTimeout("")
	for _, t := range knownNodeTypes {
		longest = max(longest, s.waitTimeout(t))
	}
	return max(4*time.Minute, longest+time.Minute)
}

// Package agentwire builds the agent side of agentchat from the typed
// configuration: the server-wide LLM resolver, the agent registry and the
// runtime. Functions that serve no chat do not import it.
package agentwire

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/agents"
	"agentchat/internal/budget"
	"agentchat/internal/config"
	"agentchat/internal/gns3"
	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtrace"
	"agentchat/internal/llmconfig"
	"agentchat/internal/llmconfig/userllm"
	"agentchat/internal/seerr"
	"agentchat/internal/skills"
	"agentchat/internal/store"
	"agentchat/internal/tools/consoletools"
	"agentchat/internal/tools/gns3tools"
	"agentchat/internal/tools/gns3topo"
	"agentchat/internal/tools/knowledge"
	"agentchat/internal/wire"
	"agentchat/internal/wire/snapshotwire"
)

// Agent is the agent side of a process.
type Agent struct {
	Registry *agent.Registry
	Runtime  *agent.Runtime
	LLM      llm.Resolver
	// Skills are the device and injection skills the copilot's tools read
	// (POST /v3/copilot/reload/skills reloads them in this process).
	Skills *skills.Registry
}

// Skills returns the skills registry of cfg: the built-in skills and those
// of SKILLS_DIR. A SKILLS_DIR that does not load is logged, and the
// built-in skills are served until a reload succeeds.
func Skills(cfg *config.Config, log *slog.Logger) (*skills.Registry, error) {
	sk, err := skills.New(cfg.SkillsDir)
	if sk == nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	if err != nil {
		log.Error("SKILLS_DIR not loaded; serving the built-in skills", "err", err)
	}
	return sk, nil
}

// Resolver returns the LLM resolver of b: each user's default LLM
// configuration (own, else a group's from groups), else the server-wide
// OPENAI_* configuration, else llm.ErrNotConfigured. The users'
// configurations share one connection pool guarded against private
// addresses (LLM_ALLOW_PRIVATE_HOSTS; loopback and private ones are allowed
// in single-user mode); the server-wide one, set by the operator, has its
// own, unguarded.
func Resolver(b *wire.Base, groups llmconfig.GroupSource) (llm.Resolver, error) {
	cfg, log := b.Config, b.Logger
	hc := llm.NewHTTPClient()
	fallback := llm.NewStaticResolver(nil)
	if cfg.LLMConfigured() {
		c, err := llm.NewClient(llm.Config{
			APIKey:      cfg.OpenAIAPIKey,
			BaseURL:     cfg.OpenAIBaseURL,
			Model:       cfg.OpenAIModel,
			CallTimeout: cfg.LLMTimeout,
			IdleTimeout: cfg.LLMIdleTimeout,

			MaxAnswerBytes: cfg.LLMMaxAnswerBytes,
		}, llm.WithLogger(log), llm.WithHTTPClient(hc))
		if err != nil {
			return nil, fmt.Errorf("llm client: %w", err)
		}
		fallback = llm.NewPricedResolver(c, cfg.OpenAIPrices)
	}
	return llmtrace.Resolver(userllm.New(userllm.Options{
		Store: b.Store, Groups: groups, Secrets: b.Secrets, Fallback: fallback,
		CallTimeout: cfg.LLMTimeout, IdleTimeout: cfg.LLMIdleTimeout, Logger: log,
		Guard:          llm.Guard{Allow: cfg.LLMAllowPrivateHosts, Local: cfg.SingleUser()},
		MaxAnswerBytes: cfg.LLMMaxAnswerBytes,
	}), b.Telemetry, b.Metrics), nil
}

// Registry returns the default agents with their configured tools. gc is
// the GNS3 controller client (wire.Base.GNS3), nil without GNS3_URL: the
// gns3-copilot's prompt then says so and its lab and console tools answer
// "GNS3 is not configured". locks holds the device console locks (the
// store), shared by every instance. sk are the skills of the knowledge
// tools (nil: the built-in ones).
func Registry(cfg *config.Config, gc *gns3.Client, locks store.DeviceLocks, sk *skills.Registry, log *slog.Logger) (*agent.Registry, error) {
	sc, err := seerr.New(seerr.Config{BaseURL: cfg.SeerrURL, APIKey: cfg.SeerrAPIKey, HTTPClient: &http.Client{Timeout: 30 * time.Second}})
	if err != nil {
		return nil, fmt.Errorf("seerr client: %w", err)
	}
	topo := gns3topo.New(gns3topo.Options{Client: gc, Logger: log})
	consoleHost := ""
	if u, err := url.Parse(cfg.GNS3URL); err == nil {
		consoleHost = u.Hostname()
	}
	consoles := consoletools.New(consoletools.Options{
		Client: gc, ConsoleHost: consoleHost, AllowedHosts: cfg.ConsoleAllowedHosts, Blocked: cfg.BlockedCommands,
		Locks: consoletools.StoreLocker{Locks: locks}, Logger: log,
	})
	know, err := knowledge.New(knowledge.Options{Skills: sk, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("knowledge tools: %w", err)
	}
	return agents.DefaultRegistry(agents.Deps{
		Seerr:        sc,
		GNS3Topology: topo.Prompt,
		GNS3Tools:    agents.CombineLabTools(gns3tools.New(gns3tools.Options{Client: gc, Topology: topo, Logger: log}), consoles, know),
	}), nil
}

// New builds the resolver, the registry and the runtime over b's store
// and GNS3 client (nil without GNS3_URL); groups tells users' groups for
// their inherited LLM configurations (nil: none).
func New(b *wire.Base, groups llmconfig.GroupSource) (*Agent, error) {
	cfg, log := b.Config, b.Logger
	res, err := Resolver(b, groups)
	if err != nil {
		return nil, err
	}
	sk, err := Skills(cfg, log)
	if err != nil {
		return nil, err
	}
	reg, err := Registry(cfg, b.GNS3, b.Store, sk, log)
	if err != nil {
		return nil, err
	}
	rt := agent.NewRuntime(agent.Options{
		Budgets:     budget.Checker{Store: b.Store},
		Store:       b.Store,
		Agents:      reg,
		LLM:         res,
		Logger:      log,
		MaxSteps:    cfg.MaxSteps,
		ToolTimeout: cfg.ToolTimeout,
		TurnTimeout: cfg.TurnTimeout,
		LeaseTTL:    cfg.TurnLease,

		// TOOL_MAX_OUTPUT_BYTES: what is streamed, stored and sent to the
		// model of one tool's output, on every surface.
		ToolMaxOutputBytes: cfg.ToolMaxOutputBytes,

		// The cap counts in the store, so it holds on every instance.
		MaxTurnsPerUser: cfg.MaxTurnsPerUser,

		// SNAPSHOTS: a GNS3 snapshot before a lab-automation turn's first change.
		Snapshots: snapshotter(b),

		// OTEL_EXPORTER_OTLP_ENDPOINT: a span per tool call.
		Tracer: b.Telemetry.Tracer(), TraceContent: b.Telemetry.CaptureContent(),
		// METRICS=on: turns and tool calls counted.
		Metrics: b.Metrics,
	})
	return &Agent{Registry: reg, Runtime: rt, LLM: res, Skills: sk}, nil
}

// snapshotter is the runtime's GNS3 snapshotter: nil without GNS3_URL or
// with SNAPSHOTS=off.
func snapshotter(b *wire.Base) agent.Snapshotter {
	if b.GNS3 == nil || !b.Config.Snapshots {
		return nil
	}
	return snapshotwire.GNS3{Client: b.GNS3}
}

package knowledge

import (
	"context"
	"log/slog"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/skills"
	"agentchat/internal/tools/toolkit"
)

// Tool names.
const (
	ToolDeviceSkills       = "device_skills"
	ToolInjectionScenarios = "injection_scenarios"
	ToolWaitSeconds        = "wait_seconds"
)

// Options configure a Toolset.
type Options struct {
	// Skills is the registry device_skills and injection_scenarios read;
	// nil means the built-in skills alone.
	Skills *skills.Registry
	// Sleep waits d or until ctx ends, whichever comes first, and returns
	// ctx's error in the second case (nil: a timer; tests give their own).
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock wait_seconds reports the time waited with (nil:
	// time.Now).
	Now func() time.Time
	// Logger receives one line per call that had failures (nil:
	// slog.Default()).
	Logger *slog.Logger
}

// Toolset builds the knowledge tools. Safe for concurrent use.
type Toolset struct {
	skills *skills.Registry
	sleep  func(ctx context.Context, d time.Duration) error
	now    func() time.Time
	tools  *toolkit.Set[*Toolset]
}

// New returns the toolset of o. It fails only when the built-in skills do
// not load (a defect of the binary).
func New(o Options) (*Toolset, error) {
	t := &Toolset{skills: o.Skills, sleep: o.Sleep, now: o.Now}
	if t.skills == nil {
		r, err := skills.New("")
		if err != nil {
			return nil, err
		}
		t.skills = r
	}
	if t.sleep == nil {
		t.sleep = Sleep
	}
	if t.now == nil {
		t.now = time.Now
	}
	t.tools = &toolkit.Set[*Toolset]{
		Defs:       []*toolkit.Def[*Toolset]{deviceSkillsSpec(), injectionScenariosSpec(), waitSecondsSpec()},
		Configured: true,
		Begin:      func(context.Context, toolkit.Call) *Toolset { return t },
		Logger:     o.Logger,
		Failures:   "knowledge tool had failures",
	}
	return t, nil
}

// Project returns the tools of a project chat turn.
func (t *Toolset) Project(projectID string) []agent.Tool { return t.tools.Project(projectID) }

// Gateway returns the tools of a /v1 turn: the same, for they address no
// project (no project_id argument).
func (t *Toolset) Gateway() []agent.Tool { return t.tools.Project("") }

// Sleep waits d or until ctx ends; in the second case it returns ctx's
// error.
func Sleep(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

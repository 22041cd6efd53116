package toolkit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/agent"
)

// Def is one tool, in its project-chat form (the project fixed by the
// route) and its /v1 gateway form (a required project_id first). E is the
// environment its function runs in, made for every call by Set.Begin.
type Def[E any] struct {
	// Name and Description are what the model is shown.
	Name        string
	Description string
	// SideEffects is agent.Tool.SideEffects: the tool changes the lab.
	SideEffects bool
	// Tier is agent.Tool.Tier; Define sets agent.TierRead, and a tool
	// that changes the lab sets its own.
	Tier agent.Tier
	// Timeout is agent.Tool.Timeout (0: the runtime's default).
	Timeout time.Duration
	// Global tools (list_gns3_projects) address no project: they are on
	// the gateway only, without a project_id.
	Global bool

	project *Args
	// gateway is made on its first use (the project form and the gateway
	// form are both checked by Define): most processes never list the
	// gateway's tools, and its form is a copy of the whole schema.
	gateway func() *Args
	run     func(ctx context.Context, env E, args map[string]any) (any, error)
}

// Define makes the tool name whose arguments are the struct A: its schema
// is inferred from A (json and jsonschema tags: names, required unless
// omitempty, descriptions) and changed by adjust (bounds, lengths,
// patterns); run gets the validated arguments and answers a Report. A
// schema that cannot be built is a programming error and panics (the
// tests build every tool).
func Define[E, A any, R Answer](name, description string, adjust func(*jsonschema.Schema), run func(ctx context.Context, env E, a A) R) *Def[E] {
	return define(name, description, adjust, func(ctx context.Context, env E, a A) (any, error) {
		return run(ctx, env, a), nil
	})
}

// DefineFunc makes the tool name as Define does, for a tool whose answer
// is a JSON value of its own, R, rather than a Report, and which fails as
// a whole with an error (the Seerr tools).
func DefineFunc[E, A, R any](name, description string, adjust func(*jsonschema.Schema), run func(ctx context.Context, env E, a A) (R, error)) *Def[E] {
	return define(name, description, adjust, func(ctx context.Context, env E, a A) (any, error) {
		out, err := run(ctx, env, a)
		if err != nil {
			return nil, err
		}
		return out, nil
	})
}

// define makes the tool name whose arguments are the struct A and whose
// answer is what run returns.
func define[E, A any](name, description string, adjust func(*jsonschema.Schema), run func(ctx context.Context, env E, a A) (any, error)) *Def[E] {
	s, err := inferSchema[A](adjust)
	if err != nil {
		panic(fmt.Sprintf("toolkit: schema of %s: %v", name, err))
	}
	project, err := compile(s)
	if err != nil {
		panic(fmt.Sprintf("toolkit: schema of %s: %v", name, err))
	}
	if _, err := compile(withProjectID(s)); err != nil {
		panic(fmt.Sprintf("toolkit: /v1 schema of %s: %v", name, err))
	}
	gateway := sync.OnceValue(func() *Args {
		a, err := newArgs(withProjectID(s))
		if err != nil { // rendered once already, by the check above
			panic(fmt.Sprintf("toolkit: /v1 schema of %s: %v", name, err))
		}
		return a
	})
	return &Def[E]{
		Name:        name,
		Description: description,
		Tier:        agent.TierRead,
		project:     project,
		gateway:     gateway,
		run: func(ctx context.Context, env E, m map[string]any) (any, error) {
			var a A
			if err := bind(m, &a); err != nil {
				return nil, err
			}
			return run(ctx, env, a)
		},
	}
}

// Args returns the argument schema of the project-chat form of d, or of
// its gateway form (with project_id, unless d is Global).
func (d *Def[E]) Args(gateway bool) *Args {
	if gateway && !d.Global {
		return d.gateway()
	}
	return d.project
}

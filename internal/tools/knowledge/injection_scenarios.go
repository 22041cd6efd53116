package knowledge

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/skills"
	"agentchat/internal/tools/toolkit"
)

// injectionScenariosArgs are the arguments of injection_scenarios.
type injectionScenariosArgs struct {
	Action string `json:"action" jsonschema:"list: every fault scenario, in short; get: one scenario in full (how to inject, verify and undo it)."`
	Name   string `json:"name,omitempty" jsonschema:"The scenario's name as list gives it (for example ospf_hello_mismatch), with get."`
}

// scenarioItem is one scenario: a summary for list, everything for get.
type scenarioItem struct {
	*skills.Scenario
	toolkit.Outcome
}

func injectionScenariosSpec() *toolkit.Def[*Toolset] {
	return toolkit.Define(ToolInjectionScenarios,
		"Fault scenarios for troubleshooting practice. list gives every scenario in short (name, title, protocols, severity, difficulty, "+
			"platforms, what the topology needs); get gives one in full: symptoms, hints, the steps to inject it, to verify that it bites "+
			"and to undo it. Pick scenarios whose requirements the topology meets.",
		func(s *jsonschema.Schema) {
			s.Properties["action"].Enum = []any{actionList, actionGet}
			toolkit.Length(s.Properties["name"], 1, maxNameLength)
		}, injectionScenarios)
}

func injectionScenarios(_ context.Context, t *Toolset, a injectionScenariosArgs) toolkit.Report[scenarioItem] {
	set := t.skills.Current()
	if a.Action == actionList && a.Name == "" {
		var items []scenarioItem
		for _, sc := range set.Scenarios() {
			it := scenarioItem{Scenario: &skills.Scenario{
				Key: sc.Key, Name: sc.Name, Group: sc.Group, Severity: sc.Severity, Difficulty: sc.Difficulty,
				Protocols: sc.Protocols, Platforms: sc.Platforms, Requires: sc.Requires, Source: sc.Source,
			}}
			it.Succeed()
			items = append(items, it)
		}
		return toolkit.Finish(items)
	}
	if a.Name == "" {
		return toolkit.FailAll([]scenarioItem{{}}, "give the name of a scenario (injection_scenarios {action: list} lists them)")
	}
	sc, ok := set.Scenario(a.Name)
	if !ok {
		return toolkit.FailAll([]scenarioItem{{}}, fmt.Sprintf("unknown scenario %q (injection_scenarios {action: list} lists them)", a.Name))
	}
	it := scenarioItem{Scenario: sc}
	it.Succeed()
	return toolkit.Finish([]scenarioItem{it})
}

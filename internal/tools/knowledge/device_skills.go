package knowledge

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/skills"
	"agentchat/internal/tools/toolkit"
)

// Actions of device_skills and injection_scenarios.
const (
	actionList = "list"
	actionGet  = "get"
)

// maxNameLength bounds a platform, topic or scenario name.
const maxNameLength = 64

// deviceSkillsArgs are the arguments of device_skills.
type deviceSkillsArgs struct {
	Action   string `json:"action" jsonschema:"list: the platforms (or, with platform, its topics); get: a platform's knowledge (or, with topic, one topic's)."`
	Platform string `json:"platform,omitempty" jsonschema:"Platform: its device type or an alias (cisco_ios_telnet, ios, iol, vpcs, frr, linux_host, ...), as list gives them."`
	Topic    string `json:"topic,omitempty" jsonschema:"A topic of the platform (ospf, bgp, switching, acl, ...), with get."`
}

// skillItem is one platform or topic of device_skills: a summary for list,
// everything for get.
type skillItem struct {
	Platform        string                    `json:"platform,omitempty"`
	Topic           string                    `json:"topic,omitempty"`
	Name            string                    `json:"name,omitempty"`
	Description     string                    `json:"description,omitempty"`
	Aliases         []string                  `json:"aliases,omitempty"`
	Topics          []string                  `json:"topics,omitempty"`
	Prompts         []string                  `json:"prompts,omitempty"`
	ConfigCommands  map[string]skills.Command `json:"config_commands,omitempty"`
	DisplayCommands map[string]skills.Command `json:"display_commands,omitempty"`
	Notes           []string                  `json:"notes,omitempty"`
	Avoid           []string                  `json:"avoid,omitempty"`
	Troubleshooting map[string][]string       `json:"troubleshooting,omitempty"`
	CommandAliases  map[string]string         `json:"command_aliases,omitempty"`
	Source          string                    `json:"source,omitempty"`
	toolkit.Outcome
}

func deviceSkillsSpec() *toolkit.Def[*Toolset] {
	return toolkit.Define(ToolDeviceSkills,
		"Curated knowledge of a device platform before typing on its console: prompt shapes, show commands per protocol, "+
			"configuration idioms and what must not be typed. list gives the platforms (with platform: its topics); "+
			"get gives a platform's base knowledge, or with topic (ospf, bgp, switching, acl, ...) that topic's. "+
			"Read it when unsure of a platform's syntax; the node's device_type tag or node_type (vpcs, dynamips, iou, docker, qemu) tells the platform.",
		func(s *jsonschema.Schema) {
			s.Properties["action"].Enum = []any{actionList, actionGet}
			toolkit.Length(s.Properties["platform"], 1, maxNameLength)
			toolkit.Length(s.Properties["topic"], 1, maxNameLength)
		}, deviceSkills)
}

func deviceSkills(_ context.Context, t *Toolset, a deviceSkillsArgs) toolkit.Report[skillItem] {
	set := t.skills.Current()
	if a.Platform == "" {
		if a.Action == actionGet || a.Topic != "" {
			return toolkit.FailAll([]skillItem{{}}, "give a platform: "+knownPlatforms(set))
		}
		var items []skillItem
		for _, p := range set.Platforms() {
			it := skillItem{Platform: p.DeviceType, Name: p.Name, Description: p.Description, Aliases: p.Aliases, Topics: p.TopicNames()}
			it.Succeed()
			items = append(items, it)
		}
		return toolkit.Finish(items)
	}
	p, ok := set.Platform(a.Platform)
	if !ok {
		return toolkit.FailAll([]skillItem{{Platform: a.Platform}}, fmt.Sprintf("unknown platform %q; %s", a.Platform, knownPlatforms(set)))
	}
	switch {
	case a.Topic != "":
		tp, ok := p.Topics[strings.ToLower(strings.TrimSpace(a.Topic))]
		if !ok {
			return toolkit.FailAll([]skillItem{{Platform: p.DeviceType, Topic: a.Topic}},
				fmt.Sprintf("platform %s has no topic %q; its topics: %s", p.DeviceType, a.Topic, orNone(p.TopicNames())))
		}
		it := knowledgeItem(tp.Knowledge)
		it.Platform, it.Topic, it.Source = p.DeviceType, tp.Topic, tp.Source
		it.Succeed()
		return toolkit.Finish([]skillItem{it})
	case a.Action == actionList:
		var items []skillItem
		for _, name := range p.TopicNames() {
			tp := p.Topics[name]
			it := skillItem{Platform: p.DeviceType, Topic: name, Name: tp.Name, Description: tp.Description}
			it.Succeed()
			items = append(items, it)
		}
		return toolkit.Finish(items)
	}
	it := knowledgeItem(p.Knowledge)
	it.Platform, it.Aliases, it.Topics, it.Prompts = p.DeviceType, p.Aliases, p.TopicNames(), p.Prompts
	it.CommandAliases, it.Source = p.CommandAliases, p.Source
	it.Succeed()
	return toolkit.Finish([]skillItem{it})
}

func knowledgeItem(k skills.Knowledge) skillItem {
	return skillItem{
		Name: k.Name, Description: k.Description,
		ConfigCommands: k.ConfigCommands, DisplayCommands: k.DisplayCommands,
		Notes: k.Notes, Avoid: k.Avoid, Troubleshooting: k.Troubleshooting,
	}
}

// knownPlatforms names the platforms of set for an error.
func knownPlatforms(set *skills.Set) string {
	var names []string
	for _, p := range set.Platforms() {
		names = append(names, p.DeviceType)
	}
	return "known platforms: " + orNone(names)
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

package skills

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// UnmarshalYAML reads a command written as a mapping (syntax,
// description, ...) or as a bare string (the syntax).
func (c *Command) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		c.Syntax = n.Value
		return nil
	}
	type plain Command
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*c = Command(p)
	return nil
}

// lines is a list of strings that may also be written as one string.
type lines []string

// UnmarshalYAML reads a sequence of strings or one string.
func (l *lines) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = lines{n.Value}
		return nil
	case yaml.SequenceNode:
		var s []string
		if err := n.Decode(&s); err != nil {
			return err
		}
		*l = s
		return nil
	}
	return fmt.Errorf("line %d: want a string or a list of strings", n.Line)
}

// knowledgeYAML is Knowledge as a file writes it.
type knowledgeYAML struct {
	Name            string             `yaml:"name"`
	Description     string             `yaml:"description"`
	ConfigCommands  map[string]Command `yaml:"config_commands"`
	DisplayCommands map[string]Command `yaml:"display_commands"`
	Notes           lines              `yaml:"notes"`
	Avoid           lines              `yaml:"avoid"`
	Troubleshooting map[string]lines   `yaml:"troubleshooting"`
}

func (k knowledgeYAML) knowledge() Knowledge {
	out := Knowledge{
		Name: k.Name, Description: k.Description,
		ConfigCommands: k.ConfigCommands, DisplayCommands: k.DisplayCommands,
		Notes: k.Notes, Avoid: k.Avoid,
	}
	if len(k.Troubleshooting) > 0 {
		out.Troubleshooting = make(map[string][]string, len(k.Troubleshooting))
		for key, v := range k.Troubleshooting {
			out.Troubleshooting[key] = v
		}
	}
	return out
}

// deviceYAML is a device file: a platform's base (device/<type>.yaml,
// device/<type>/_base.yaml) or one of its topics (device/<type>/<topic>.yaml).
type deviceYAML struct {
	DeviceType     string                   `yaml:"device_type"`
	Topic          string                   `yaml:"topic"`
	Category       string                   `yaml:"category"`
	Aliases        lines                    `yaml:"aliases"`
	Prompts        lines                    `yaml:"prompts"`
	CommandAliases map[string]string        `yaml:"command_aliases"`
	Topics         map[string]knowledgeYAML `yaml:"topics"`
	knowledgeYAML  `yaml:",inline"`
}

// injectionYAML is an injection file: a group of issues.
type injectionYAML struct {
	Name        string               `yaml:"name"`
	Description string               `yaml:"description"`
	Category    string               `yaml:"category"`
	Protocols   lines                `yaml:"protocols"`
	Issues      map[string]issueYAML `yaml:"issues"`
}

// issueYAML is one issue of an injection file.
type issueYAML struct {
	Name                 string `yaml:"name"`
	Description          string `yaml:"description"`
	Severity             string `yaml:"severity"`
	Difficulty           string `yaml:"difficulty"`
	Protocols            lines  `yaml:"protocols"`
	Applicability        string `yaml:"applicability"`
	Requires             string `yaml:"requires"`
	Platforms            lines  `yaml:"platforms"`
	Symptoms             lines  `yaml:"symptoms"`
	TroubleshootingHints lines  `yaml:"troubleshooting_hints"`
	Inject               lines  `yaml:"inject"`
	Verify               lines  `yaml:"verify"`
	Undo                 lines  `yaml:"undo"`
}

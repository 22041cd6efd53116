package skills

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// Command is one command of a platform: its syntax, what it is for and an
// example.
type Command struct {
	Syntax      string            `yaml:"syntax" json:"syntax"`
	Description string            `yaml:"description" json:"description,omitempty"`
	Example     string            `yaml:"example" json:"example,omitempty"`
	Parameters  map[string]string `yaml:"parameters" json:"parameters,omitempty"`
}

// Knowledge is what a platform's base and each of its topics tell.
type Knowledge struct {
	// Name and Description say what the entry covers.
	Name        string `yaml:"name" json:"name,omitempty"`
	Description string `yaml:"description" json:"description,omitempty"`
	// ConfigCommands and DisplayCommands are the configuration idioms and
	// the show commands, by a short key.
	ConfigCommands  map[string]Command `yaml:"config_commands" json:"config_commands,omitempty"`
	DisplayCommands map[string]Command `yaml:"display_commands" json:"display_commands,omitempty"`
	// Notes are facts worth knowing before typing anything.
	Notes []string `yaml:"notes" json:"notes,omitempty"`
	// Avoid are the commands and habits that must not be typed on the
	// platform, each with why (ours; absent from the upstream layout).
	Avoid []string `yaml:"avoid" json:"avoid,omitempty"`
	// Troubleshooting lists checks by symptom.
	Troubleshooting map[string][]string `yaml:"troubleshooting" json:"troubleshooting,omitempty"`
}

// Platform is the knowledge of one kind of device.
type Platform struct {
	// DeviceType is the platform's key (device_type).
	DeviceType string `json:"platform"`
	// Aliases are other names the platform is found by (ours: ios, iol,
	// dynamips, ...).
	Aliases []string `json:"aliases,omitempty"`
	// Prompts are the shapes of its console prompts (ours).
	Prompts []string `json:"prompts,omitempty"`
	Knowledge
	// CommandAliases map a usual wording to the platform's command.
	CommandAliases map[string]string `json:"command_aliases,omitempty"`
	// Topics are the protocol-specific parts, by topic name.
	Topics map[string]*Topic `json:"-"`
	// Source is where the base came from: "builtin" or a file of
	// SKILLS_DIR.
	Source string `json:"source"`
}

// TopicNames returns the platform's topics, sorted.
func (p *Platform) TopicNames() []string { return slices.Sorted(maps.Keys(p.Topics)) }

// Topic is one protocol or feature of a platform (ospf, bgp, vlan, ...).
type Topic struct {
	// Topic is its name.
	Topic string `json:"topic"`
	Knowledge
	// Source is where it came from.
	Source string `json:"source"`
}

// Scenario is one fault to inject: what it is, how it shows, how it is
// found, and (ours) how to inject it, check that it bites and undo it.
type Scenario struct {
	// Key is its name, unique in the registry (the key).
	Key  string `json:"name"`
	Name string `json:"title"`
	// Group is the name of the group (file) it comes from.
	Group                string   `json:"group,omitempty"`
	Description          string   `json:"description"`
	Severity             string   `json:"severity,omitempty"`
	Difficulty           string   `json:"difficulty,omitempty"`
	Protocols            []string `json:"protocols,omitempty"`
	Applicability        string   `json:"applicability,omitempty"`
	Requires             string   `json:"requires,omitempty"`
	Platforms            []string `json:"platforms,omitempty"`
	Symptoms             []string `json:"symptoms,omitempty"`
	TroubleshootingHints []string `json:"troubleshooting_hints,omitempty"`
	Inject               []string `json:"inject,omitempty"`
	Verify               []string `json:"verify,omitempty"`
	Undo                 []string `json:"undo,omitempty"`
	// Source is where it came from.
	Source string `json:"source"`
}

// Counts are the sizes of a Set.
type Counts struct {
	Devices   int `json:"devices"`
	Topics    int `json:"topics"`
	Scenarios int `json:"scenarios"`
}

// Set is one immutable load of the skills. Its methods are safe for
// concurrent use; nothing it returns may be changed by the caller.
type Set struct {
	platforms map[string]*Platform // by DeviceType
	names     map[string]string    // lower-cased key or alias → DeviceType
	scenarios map[string]*Scenario // by Key
}

func newSet() *Set {
	return &Set{platforms: map[string]*Platform{}, names: map[string]string{}, scenarios: map[string]*Scenario{}}
}

// norm is the form names are compared in.
func norm(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// Platforms returns every platform, sorted by device type.
func (s *Set) Platforms() []*Platform {
	out := slices.Collect(maps.Values(s.platforms))
	slices.SortFunc(out, func(a, b *Platform) int { return cmp.Compare(a.DeviceType, b.DeviceType) })
	return out
}

// Platform finds a platform by device type or alias, ignoring case.
func (s *Set) Platform(name string) (*Platform, bool) {
	key, ok := s.names[norm(name)]
	if !ok {
		return nil, false
	}
	p, ok := s.platforms[key]
	return p, ok
}

// Scenarios returns every scenario, sorted by name.
func (s *Set) Scenarios() []*Scenario {
	out := slices.Collect(maps.Values(s.scenarios))
	slices.SortFunc(out, func(a, b *Scenario) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

// Scenario finds a scenario by name, ignoring case.
func (s *Set) Scenario(name string) (*Scenario, bool) {
	sc, ok := s.scenarios[norm(name)]
	return sc, ok
}

// Counts returns the number of platforms, topics and scenarios.
func (s *Set) Counts() Counts {
	c := Counts{Devices: len(s.platforms), Scenarios: len(s.scenarios)}
	for _, p := range s.platforms {
		c.Topics += len(p.Topics)
	}
	return c
}

// index rebuilds the name index: every device type, then the aliases not
// already taken.
func (s *Set) index() {
	s.names = map[string]string{}
	for _, p := range s.Platforms() {
		s.names[norm(p.DeviceType)] = p.DeviceType
	}
	for _, p := range s.Platforms() {
		for _, a := range p.Aliases {
			if _, taken := s.names[norm(a)]; !taken {
				s.names[norm(a)] = p.DeviceType
			}
		}
	}
}

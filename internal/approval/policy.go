// Package approval is the approval policy of the project chat: which tool
// calls wait for a person's decision before they run, and the one-line
// summaries that person reads. It depends on nothing else in agentchat, so
// that the agent runtime and the HTTP handlers can both use it.
package approval

import (
	"fmt"
	"strings"
)

// Policy says which tool calls need a person's approval.
type Policy string

// The policies.
const (
	// Off runs every tool as the model asks (the default).
	Off Policy = "off"
	// Changes pauses every tool that changes the lab or a device.
	Changes Policy = "changes"
	// All pauses every tool call.
	All Policy = "all"
)

// ConfigKey is the key of the policy in a user's LLM configuration
// (config.approval), and MetadataKey its key in a session's metadata.
const (
	ConfigKey   = "approval"
	MetadataKey = "approval"
)

// Parse reads a policy; the empty string is "not set" (ok, ""). Case and
// surrounding spaces are ignored; anything else is an error naming the
// accepted values.
func Parse(s string) (Policy, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch Policy(v) {
	case "":
		return "", nil
	case Off, Changes, All:
		return Policy(v), nil
	}
	return "", fmt.Errorf("approval must be one of off, changes, all (got %q)", truncate(s, 40))
}

// FromValue reads a policy stored as a JSON value (a session's metadata, a
// configuration's extra key): a string policy, else "" (not set). A value
// that is not a valid policy counts as not set, so that a bad stored value
// never blocks a turn.
func FromValue(v any) Policy {
	s, ok := v.(string)
	if !ok {
		return ""
	}
	p, err := Parse(s)
	if err != nil {
		return ""
	}
	return p
}

// Resolve returns the policy of a turn: the request's, else the session's,
// else the user's LLM configuration's, else Off.
func Resolve(request, session, config Policy) Policy {
	for _, p := range []Policy{request, session, config} {
		if p != "" {
			return p
		}
	}
	return Off
}

// Needs reports whether a call of a tool needs approval under p;
// changesLab is whether the tool changes the lab or a device (the
// agent.Tool's Tier.ChangesLab()).
func (p Policy) Needs(changesLab bool) bool {
	switch p {
	case All:
		return true
	case Changes:
		return changesLab
	}
	return false
}

// Active reports whether p pauses anything.
func (p Policy) Active() bool { return p == Changes || p == All }

// Package knowledge holds the gns3-copilot's tools that act on no lab:
// device_skills (curated knowledge per platform: prompts, show commands
// per protocol, configuration idioms, what not to type),
// injection_scenarios (fault scenarios to inject, verify and undo) and
// wait_seconds (a bounded, abortable wait, for a device to boot). The
// first two read the skills registry in use (internal/skills), so that a
// reload is seen by the next call. The tools take no project_id, on the
// project chat and on the /v1 gateway alike, and answer like every lab
// tool (toolkit.Report).
package knowledge

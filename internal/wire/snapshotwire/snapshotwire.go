// Package snapshotwire is the agent runtime's Snapshotter on a GNS3
// controller: the copilot's snapshot before the first lab change of a
// lab-automation turn, taken with the caller's own token.
package snapshotwire

import (
	"context"
	"fmt"

	"agentchat/internal/agents"
	"agentchat/internal/auth"
	"agentchat/internal/gns3"
)

// GNS3 takes snapshots through a GNS3 client.
type GNS3 struct {
	// Client is the controller client (required).
	Client *gns3.Client
	// Modes are the agent modes whose turns take a snapshot (nil:
	// lab_automation_assistant only).
	Modes []string
}

// Applies implements agent.Snapshotter.
func (g GNS3) Applies(mode string) bool {
	if g.Modes == nil {
		return mode == agents.ModeLabAutomationAssistant
	}
	for _, m := range g.Modes {
		if m == mode {
			return true
		}
	}
	return false
}

// Take implements agent.Snapshotter: POST /v3/projects/{p}/snapshots
// with the token of ctx's identity. Its error is readable (no token, no
// URL).
func (g GNS3) Take(ctx context.Context, projectID, name string) (string, error) {
	id, _ := auth.FromContext(ctx)
	s, err := g.Client.CreateSnapshot(ctx, id.Token, projectID, name)
	if err != nil {
		return "", fmt.Errorf("%s", gns3.Describe(err))
	}
	return s.SnapshotID, nil
}

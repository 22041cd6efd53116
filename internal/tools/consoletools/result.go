package consoletools

import "agentchat/internal/tools/toolkit"

// deviceResult is the result of one device.
type deviceResult struct {
	DeviceName string `json:"device_name"`
	toolkit.Outcome
	Output          string   `json:"output"`
	BlockedCommands []string `json:"blocked_commands,omitempty"`
}

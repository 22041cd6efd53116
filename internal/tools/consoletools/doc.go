// Package consoletools is the device-console skill of the gns3-copilot:
// the tools that type commands into the telnet consoles of a GNS3 lab's
// devices (internal/console) and report what the consoles showed.
//
//   - execute_multiple_device_commands: read-only commands (show, ping) on
//     any supported device;
//   - execute_multiple_device_config_commands: configuration lines, sent
//     between "configure terminal" and "end";
//   - execute_vpcs_commands: any command on VPCS nodes.
//
// A device is a node of the project, by name or node_id, read with the
// caller's GNS3 token; its console is console_host (else Options.ConsoleHost)
// : console, its driver the node tag device_type:<type> (VPCS nodes need
// none). Devices run in parallel (Options.Concurrency), each under a
// per-device lock (DeviceLocker) so that two chats never type into one
// console at once; the connection is closed and the lock released when
// the tool ends, also when it is cancelled or times out.
//
// Before anything is sent, every command goes through the prefix filter
// (Options.Blocked, DefaultBlocked): a blocked command is reported in
// blocked_commands and never reaches the device. Every tool answers
//
//	{"success": bool, "total": n, "successful": n, "failed": n,
//	 "results": [{"device_name", "status": "success"|"partial_success"|"failed",
//	              "error"?, "output", "blocked_commands"?}]}
//
// where failed counts the devices that are not fully successful (the
// envelope of internal/tools/toolkit, shared with the GNS3 tools).
package consoletools

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
// : console, on an allowed host, its driver the node tag device_type:<type> (VPCS nodes need
// none). Devices run in parallel (Options.Concurrency), each under a
// per-device lock (DeviceLocker) so that two chats never type into one
// console at once; the connection is closed and the lock released when
// the tool ends, also when it is cancelled or times out.
//
// Before anything is sent, every command is checked as the device will
// read it, and a refused one is reported in blocked_commands with its
// reason and never reaches the device:
//
//   - it is one printable line (console.CheckLine: no line break, tab,
//     control character or invalid UTF-8; no "?" on IOS). The show and
//     VPCS tools take one command per item; the configuration tool splits
//     an item at line feeds and checks every line, a banner's text included
//     (a bad line refuses the whole banner);
//   - the Filter (Options.Blocked, DefaultBlocked) does not block it,
//     abbreviations included, as the device type's tables read them
//     ("rel" is reload, "wr er" is write erase, "do rel" too);
//   - on the show tool, it is one of the device type's read-only
//     commands (console.DeviceType.ReadOnly).
//
// The console is only dialled on the GNS3 host (Options.ConsoleHost, the
// host of GNS3_URL) or a host Options.AllowedHosts allows
// (CONSOLE_ALLOWED_HOSTS), whatever console_host GNS3 reports. Every
// tool answers
//
//	{"success": bool, "total": n, "successful": n, "failed": n,
//	 "results": [{"device_name", "status": "success"|"partial_success"|"failed",
//	              "error"?, "output", "blocked_commands"?}]}
//
// where failed counts the devices that are not fully successful (the
// envelope of internal/tools/toolkit, shared with the GNS3 tools).
package consoletools

// Package console drives the telnet console of a GNS3 node: the
// unauthenticated console a GNS3 compute serves on the node's console port.
//
// Open connects, negotiates telnet options (minimally: the device may echo
// and suppress go-ahead, everything else is refused), wakes an idle console
// by sending returns until a prompt shows (bounded), leaves a configuration
// mode a previous session forgot, enters the privileged mode (enable) and
// turns paging off. Exec runs one command at the working prompt;
// Configure enters the configuration mode, runs configuration lines (a
// multi-line banner included) and always leaves it again, so that the
// device ends at its privileged prompt even after a failed line.
//
// Everything the device prints is cleaned as a terminal would show it:
// telnet commands removed, ANSI escape sequences stripped, backspaces and
// carriage returns applied, "--More--" pager prompts answered (with a
// space) and erased. Output reports the session as it appeared on the
// console (prompt, echoed command, output), capped at Config.MaxOutput
// with a visible "[output truncated ...]" marker.
//
// The device types (prompts, enable, paging, configuration commands,
// error markers) are data: see DeviceType and Lookup. A Session is bound
// to the context given to Open: when it is done, the connection is closed
// and every pending read fails at once.
package console

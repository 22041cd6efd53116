// Package skills is the registry of curated device knowledge ("device
// skills": per platform, how its console looks, which commands show what,
// how it is configured and what must not be typed) and of fault scenarios
// ("injection skills") that the gns3-copilot reads before it types
// commands or breaks a lab on purpose.
//
// The built-in skills are ours, embedded in the binary (builtin/). A
// directory in the YAML layout of the GNS3 project's public skills
// repository (SKILLS_DIR) adds entries or overrides built-in ones:
//
//	device/<type>.yaml            a platform, all in one file
//	device/<type>/_base.yaml      a platform's base ...
//	device/<type>/<topic>.yaml    ... and one file per topic (ospf, bgp, ...)
//	injection/<group>.yaml        fault scenarios: a group with its issues
//
// Other folders of that repository (feature/, packet_analysis/, prompts/)
// are ignored. A platform is keyed by its device_type (the built-in ones
// also answer to aliases such as "ios" or "iol"); a scenario by the key of
// its issue. Reading a directory is confined to it (os.Root: no path or
// symlink leaves it) and bounded in files, depth and bytes.
//
// A Registry holds the current Set and replaces it whole on Reload, only
// when every file parses: a broken file is named in the error and the
// previous Set stays in use. The registry belongs to one process.
package skills

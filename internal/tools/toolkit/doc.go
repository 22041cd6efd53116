// Package toolkit is what the tool packages (gns3tools, consoletools,
// seerrtools) share, so that each of their tools is a small file: its
// argument struct, its schema bounds and one function.
//
//   - Define, Def and Set: a tool's JSON schema, inferred from its
//     argument struct and shown to the model; the model's arguments
//     validated against it and bound into the struct; the project-chat
//     form and the /v1 gateway form with a required project_id (or, with
//     Set.Tools, the one form of tools that address no project); the
//     agent.Tool around it ("GNS3 is not configured", a log line for a
//     call with failures, the answer as one line of JSON).
//   - Report and Outcome: the answer of every lab tool, below, where
//     failed counts the items that are not fully successful. A tool made
//     with DefineFunc (the Seerr tools) answers a JSON value of its own,
//     or fails as a whole with an error.
//   - Nodes and Resolve: the model's references to nodes (and templates)
//     by id, exact name or the one name equal ignoring case.
//   - Error and Describe: short, secret-free error texts for the results.
//
// The answer of every lab tool:
//
//	{"success": bool, "total": n, "successful": n, "failed": n,
//	 "results": [{..., "status": "success"|"partial_success"|"failed", "error": "..."}]}
package toolkit

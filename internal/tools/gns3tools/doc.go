// Package gns3tools is the GNS3 skill of the gns3-copilot: the tools with
// which the model reads and changes a GNS3 lab (topology, templates, nodes,
// links, node power) through the GNS3 v3 REST API, as the user, with the
// bearer token of the caller found in the context (auth.FromContext).
//
// Every tool takes a real JSON schema, inferred from its argument struct
// and checked before anything is sent to GNS3, and answers one JSON shape:
//
//	{"success": bool, "total": n, "successful": n, "failed": n,
//	 "results": [{..., "status": "success"|"failed", "error": "..."}]}
//
// with one result per node, link, template or project. One failed item
// never stops the others; a failure of the whole call (the nodes cannot be
// read, for example) fails every item with the reason. Error texts are
// short and secret-free (gns3.Describe): the token never appears in an
// output, an error or a log line.
//
// Toolset.Project gives the tools of a project chat, where the project is
// fixed by the route; Toolset.Gateway gives the same tools with a required
// project_id, plus list_gns3_projects, for the stateless /v1 gateway.
package gns3tools

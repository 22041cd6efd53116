// Command chat-audit serves GET
// /v3/projects/{project_id}/chat/audit, as an AWS
// Lambda function behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/labchangesfn"
)

func main() { lambdaapp.Main(labchangesfn.ChatAudit) }

// Command sessions-list serves GET /v3/projects/{project_id}/chat/sessions
// (the user's sessions of a project), as an AWS Lambda function behind the
// HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/sessionsfn"
)

func main() { lambdaapp.Main(sessionsfn.SessionsList) }

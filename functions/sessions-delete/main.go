// Command sessions-delete serves DELETE
// /v3/projects/{project_id}/chat/sessions/{session_id}, as an AWS Lambda
// function behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/sessionsfn"
)

func main() { lambdaapp.Main(sessionsfn.SessionsDelete) }

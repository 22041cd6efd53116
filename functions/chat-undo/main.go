// Command chat-undo serves POST
// /v3/projects/{project_id}/chat/sessions/{session_id}/undo, as an AWS
// Lambda function behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/labchangesfn"
)

func main() { lambdaapp.Main(labchangesfn.ChatUndo) }

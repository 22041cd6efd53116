// Command project-chat-delete serves DELETE /v3/projects/{project_id}/chat
// (remove a project's chat; large projects finish in project-removal-worker),
// as an AWS Lambda function behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/removal"
)

func main() { lambdaapp.Main(removal.ProjectChatDelete) }

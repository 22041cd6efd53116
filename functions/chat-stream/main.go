// Command chat-stream serves POST /v3/projects/{project_id}/chat/stream
// and .../chat/inject (SSE), as an AWS Lambda function behind a
// response-streaming function URL.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/chatfn"
)

func main() { lambdaapp.Main(chatfn.ChatStream) }

// Command project-removal-worker finishes large project removals, invoked
// asynchronously by project-chat-delete and by itself, as an AWS Lambda
// function with asynchronous invocations.
package main

import "agentchat/internal/lambdaapp/removal"

func main() { removal.MainWorker() }

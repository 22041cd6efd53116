// Command local serves every agentchat route in one process over an
// embedded SQLite file: `make run`. It links no AWS SDK; the same server
// with the DynamoDB store is functions/local/withdynamo.
package main

import "agentchat/internal/localserver"

func main() { localserver.Main(nil) }

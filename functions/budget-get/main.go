// Command budget-get serves GET /v3/access/users/{user_id}/budget (a user's budget, for the
// user or the admin token), as an AWS Lambda function behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/usagefn"
)

func main() { lambdaapp.Main(usagefn.BudgetGet) }

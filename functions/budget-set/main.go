// Command budget-set serves PUT /v3/access/users/{user_id}/budget (the admin token sets
// a user's budget), as an AWS Lambda function behind the HTTP API.
package main

import (
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/usagefn"
)

func main() { lambdaapp.Main(usagefn.BudgetSet) }

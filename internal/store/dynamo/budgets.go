package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"agentchat/internal/store"
)

// Budgets (store.Budget): attributes of an API key's items, and a user's
// own item PK=U#{user} SK=BUDGET.
const (
	kBudgetNanos  = "budget_nanos"
	kBudgetPeriod = "budget_period"
	userBudgetSK  = "BUDGET"
)

// putBudget writes b's attributes when it is set.
func putBudget(it item, b store.Budget) {
	if b.Set() {
		it[kBudgetNanos], it[kBudgetPeriod] = avN(b.MaxNanos), avS(b.Period)
	}
}

// getBudget reads the budget attributes of an item.
func getBudget(it item) (store.Budget, error) {
	n, err := getN(it, kBudgetNanos)
	if err != nil {
		return store.Budget{}, err
	}
	return store.Budget{MaxNanos: n, Period: getS(it, kBudgetPeriod)}, nil
}

// SetUserBudget implements store.UserBudgets: one PutItem, or a
// DeleteItem for the zero Budget.
func (s *Store) SetUserBudget(ctx context.Context, userID string, b store.Budget) error {
	key := keyOf(userPK(userID), userBudgetSK)
	var err error
	if b.Set() {
		it := keyOf(userPK(userID), userBudgetSK)
		putBudget(it, b)
		_, err = s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: it})
	} else {
		_, err = s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: key})
	}
	if err != nil {
		return fmt.Errorf("set budget of user %s: %w", userID, err)
	}
	return nil
}

// UserBudget implements store.UserBudgets with a strongly consistent
// GetItem (a budget just lowered holds at once).
func (s *Store) UserBudget(ctx context.Context, userID string) (store.Budget, error) {
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(userPK(userID), userBudgetSK), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return store.Budget{}, fmt.Errorf("budget of user %s: %w", userID, err)
	}
	b, err := getBudget(out.Item)
	if err != nil {
		return store.Budget{}, fmt.Errorf("budget of user %s: %w", userID, err)
	}
	return b, nil
}

package dynamo

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"agentchat/internal/store"
)

// The usage ledger (store.UsageLedger): one item per row under the user's
// partition, PK=U#{user} SK=USAGE#{day}#{model}#{key}#{project}#{session},
// the components escaped, so that a day range is one Query of a key range
// and never a scan. The key's parts are also attributes, read back as they
// are.
const (
	uDay       = "day"
	uModel     = "model"
	uKey       = "key_id"
	uProject   = "project_id"
	uSession   = "session_id"
	uCalls     = "llm_calls"
	uInput     = "input_tokens"
	uCached    = "cached_input_tokens"
	uOutput    = "output_tokens"
	uCostNanos = "cost_nanos"
	uUnpriced  = "unpriced_calls"
)

// usageSKPrefix starts the sort key of every ledger row.
const usageSKPrefix = "USAGE#"

func usageSK(k store.UsageKey) string {
	return usageSKPrefix + k.Day + "#" + esc(k.Model) + "#" + esc(k.KeyID) + "#" + esc(k.ProjectID) + "#" + esc(k.SessionID)
}

// usageCounters pairs the ledger's counter attributes with a row's fields.
func usageCounters(u *store.Usage) []struct {
	attr string
	n    *int64
} {
	return []struct {
		attr string
		n    *int64
	}{
		{uCalls, &u.LLMCalls}, {uInput, &u.InputTokens}, {uCached, &u.CachedInputTokens},
		{uOutput, &u.OutputTokens}, {uCostNanos, &u.CostNanos}, {uUnpriced, &u.UnpricedCalls},
	}
}

// AddUsage implements store.UsageLedger with one UpdateItem: the counters
// through ADD, which DynamoDB applies atomically, the key's parts through
// SET.
func (s *Store) AddUsage(ctx context.Context, k store.UsageKey, d store.Usage) error {
	if err := k.Check(); err != nil {
		return fmt.Errorf("add usage: %w", err)
	}
	e := newExpr()
	for _, a := range []struct{ attr, v string }{
		{uDay, k.Day}, {uModel, k.Model}, {uKey, k.KeyID}, {uProject, k.ProjectID}, {uSession, k.SessionID},
	} {
		e.set(a.attr, avS(a.v))
	}
	for _, c := range usageCounters(&d) {
		e.add(c.attr, avN(*c.n))
	}
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(userPK(k.UserID), usageSK(k)),
		UpdateExpression:          aws.String(e.update()),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	})
	if err != nil {
		return fmt.Errorf("add usage of user %s: %w", k.UserID, err)
	}
	return nil
}

// ListUsage implements store.UsageLedger with a strongly consistent Query
// of the user's partition between the first and the last day's keys (a
// day is fixed-width, and '$' sorts right after the '#' that ends it).
func (s *Store) ListUsage(ctx context.Context, userID, fromDay, toDay string) ([]store.UsageRow, error) {
	var (
		rows  []store.UsageRow
		start item
	)
	if userID == "" || fromDay > toDay {
		return rows, nil
	}
	for {
		out, err := s.client.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			KeyConditionExpression:    aws.String("#pk = :pk AND #sk BETWEEN :from AND :to"),
			ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK},
			ExpressionAttributeValues: item{":pk": avS(userPK(userID)), ":from": avS(usageSKPrefix + fromDay), ":to": avS(usageSKPrefix + toDay + "$")},
			ConsistentRead:            aws.Bool(true),
			ExclusiveStartKey:         start,
		})
		if err != nil {
			return nil, fmt.Errorf("list usage of user %s: %w", userID, err)
		}
		for _, it := range out.Items {
			r := store.UsageRow{UsageKey: store.UsageKey{
				UserID: userID, Day: getS(it, uDay), Model: getS(it, uModel), KeyID: getS(it, uKey),
				ProjectID: getS(it, uProject), SessionID: getS(it, uSession),
			}}
			for _, c := range usageCounters(&r.Usage) {
				if *c.n, err = getN(it, c.attr); err != nil {
					return nil, fmt.Errorf("list usage of user %s: %w", userID, err)
				}
			}
			rows = append(rows, r)
		}
		if start = out.LastEvaluatedKey; start == nil {
			// Escaping moves a few characters in the key order: sort
			// as the contract says.
			slices.SortFunc(rows, func(a, b store.UsageRow) int { return a.UsageKey.Compare(b.UsageKey) })
			return rows, nil
		}
	}
}

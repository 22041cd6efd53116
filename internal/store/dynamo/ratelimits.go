package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"agentchat/internal/store"
)

// Rate counters: PK=RATE#{name} SK=W#{window unix} (count, ttl).
const (
	rateCount = "count"
)

func ratePK(name string) string            { return "RATE#" + name }
func rateSK(window time.Time) string       { return "W#" + strconv.FormatInt(window.Unix(), 10) }
func limitNames() [3]string                { return [3]string{kMaxParallel, kRPM, kTPM} }
func limitValues(l store.KeyLimits) [3]int { return [3]int{l.MaxParallel, l.RPM, l.TPM} }

// putLimits writes the limits that are set.
func putLimits(it item, l store.KeyLimits) {
	vals := limitValues(l)
	for i, name := range limitNames() {
		if vals[i] > 0 {
			it[name] = avN(int64(vals[i]))
		}
	}
	putBudget(it, l.Budget)
}

// getLimits reads the limits of an API key item.
func getLimits(it item) (store.KeyLimits, error) {
	var out [3]int64
	for i, name := range limitNames() {
		var err error
		if out[i], err = getN(it, name); err != nil {
			return store.KeyLimits{}, err
		}
	}
	b, err := getBudget(it)
	if err != nil {
		return store.KeyLimits{}, err
	}
	return store.KeyLimits{MaxParallel: int(out[0]), RPM: int(out[1]), TPM: int(out[2]), Budget: b}, nil
}

// SetAPIKeyLimits implements store.APIKeyLimits: the user's item, then
// the lookup item that authentication reads.
func (s *Store) SetAPIKeyLimits(ctx context.Context, userID, keyID string, l store.KeyLimits) error {
	if userID == "" || keyID == "" {
		return fmt.Errorf("set limits of API key %q: %w", keyID, store.ErrNotFound)
	}
	userKey := keyOf(userPK(userID), apiKeySK(keyID))
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: userKey, ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return fmt.Errorf("set limits of API key %s: %w", keyID, err)
	}
	if out.Item == nil {
		return fmt.Errorf("set limits of API key %s: %w", keyID, store.ErrNotFound)
	}
	vals := limitValues(l)
	names := map[string]string{"#pk": attrPK}
	values := item{}
	var set, remove string
	for i, name := range limitNames() {
		ref := "#l" + strconv.Itoa(i)
		names[ref] = name
		if vals[i] > 0 {
			values[":v"+strconv.Itoa(i)] = avN(int64(vals[i]))
			set += sep(set) + ref + " = :v" + strconv.Itoa(i)
		} else {
			remove += sep(remove) + ref
		}
	}
	names["#bn"], names["#bp"] = kBudgetNanos, kBudgetPeriod
	if l.Budget.Set() {
		values[":bn"], values[":bp"] = avN(l.Budget.MaxNanos), avS(l.Budget.Period)
		set += sep(set) + "#bn = :bn, #bp = :bp"
	} else {
		remove += sep(remove) + "#bn, #bp"
	}
	expr := ""
	if set != "" {
		expr = "SET " + set
	}
	if remove != "" {
		expr += " REMOVE " + remove
	}
	if len(values) == 0 {
		values = nil
	}
	for _, key := range []item{userKey, keyOf(keyHashPK(getS(out.Item, kHash)), keyHashSK)} {
		_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(s.table),
			Key:                       key,
			UpdateExpression:          aws.String(expr),
			ConditionExpression:       aws.String("attribute_exists(#pk)"),
			ExpressionAttributeNames:  names,
			ExpressionAttributeValues: values,
		})
		if err != nil && !isConditionFailed(err) {
			return fmt.Errorf("set limits of API key %s: %w", keyID, err)
		}
	}
	return nil
}

func sep(s string) string {
	if s == "" {
		return ""
	}
	return ", "
}

// AddRate implements store.RateCounters with one conditional UpdateItem
// (ADD, under the limit), the item expiring by the table's TTL.
func (s *Store) AddRate(ctx context.Context, name string, window time.Time, n, limit int64, ttl time.Duration) (int64, bool, error) {
	key := keyOf(ratePK(name), rateSK(window))
	in := &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key,
		UpdateExpression:          aws.String("SET #ttl = :ttl ADD #c :n"),
		ExpressionAttributeNames:  map[string]string{"#ttl": aTTL, "#c": rateCount},
		ExpressionAttributeValues: item{":ttl": avN(window.Add(ttl).Unix() + 1), ":n": avN(n)},
		ReturnValues:              types.ReturnValueUpdatedNew,
	}
	if limit > 0 {
		in.ConditionExpression = aws.String("attribute_not_exists(#c) OR #c < :limit")
		in.ExpressionAttributeValues[":limit"] = avN(limit)
	}
	out, err := s.client.UpdateItem(ctx, in)
	if err == nil {
		c, err := getN(out.Attributes, rateCount)
		if err != nil {
			return 0, false, fmt.Errorf("add to rate counter %s: %w", name, err)
		}
		return c, true, nil
	}
	var cf *types.ConditionalCheckFailedException
	if !errors.As(err, &cf) {
		return 0, false, fmt.Errorf("add to rate counter %s: %w", name, err)
	}
	got, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return 0, false, fmt.Errorf("read rate counter %s: %w", name, err)
	}
	c, err := getN(got.Item, rateCount)
	if err != nil {
		return 0, false, fmt.Errorf("read rate counter %s: %w", name, err)
	}
	return c, false, nil
}

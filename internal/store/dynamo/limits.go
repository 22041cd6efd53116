package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"agentchat/internal/store"
)

// Limits (store.Limits, Options.Limits) are enforced without transactions:
//
// LLM configurations and API keys live in their owner's partition, so
// they are counted exactly: a creation puts its item, then counts the
// owner's items with a strongly consistent Query (Select COUNT), and
// deletes its item again when the count is past the limit. Of racing
// creations the one whose count runs last sees every item kept by the
// others, so the limit is never passed once the creations returned (two
// racers at the limit may both give up: a false refusal, never one too
// many). A process killed between the put and the count may leave one
// item past the limit.
//
// Sessions are spread over the projects' partitions, so that counting a
// user's would need a scan. They are counted in a counter item of the
// user's partition, PK=U#{user} SK=COUNT#SESSIONS, attribute n: a creation
// first adds one to n under the condition n < limit (one UpdateItem: of
// racing creations at most limit-n pass), then puts the session, marked
// counted; a failed put takes the one back. Deleting a counted session
// (DeleteSession, DeleteProject) takes one back once its meta item is
// gone, never below zero. A process killed between the two writes leaves
// n one too high, never too low: the user may be refused a little before
// the limit, but never passes it. Sessions created while no limit was set
// (or before this version) are not counted, and their deletion does not
// take one back.

// Attributes of the limits.
const (
	// sessionCountSK is the sort key of a user's session counter.
	sessionCountSK = "COUNT#SESSIONS"
	// aCount is the counter's value.
	aCount = "n"
	// aCounted marks a session meta item counted in its user's counter.
	aCounted = "counted"
)

// overLimit counts the items of partition pk whose sort key begins with
// prefix (and that pass filter, if not empty, with e's names and values),
// strongly consistent, and returns a *store.LimitError when there are more
// than limit (limit <= 0: no limit). It stops counting past the limit.
func (s *Store) overLimit(ctx context.Context, limit int, res store.Resource, pk, prefix, filter string, e *expr) error {
	if limit <= 0 {
		return nil
	}
	if e == nil {
		e = newExpr()
	}
	cond := e.n(attrPK) + " = " + e.v(avS(pk)) + " AND begins_with(" + e.n(attrSK) + ", " + e.v(avS(prefix)) + ")"
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
		ConsistentRead:            aws.Bool(true),
		Select:                    types.SelectCount,
	}
	if filter != "" {
		in.FilterExpression = aws.String(filter)
	}
	var n int64
	for {
		out, err := s.client.Query(ctx, in)
		if err != nil {
			return fmt.Errorf("count %s: %w", res, err)
		}
		n += int64(out.Count)
		if n > int64(limit) {
			return &store.LimitError{Resource: res, Limit: limit}
		}
		if out.LastEvaluatedKey == nil {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// llmConfigsOverLimit checks the configurations of owner pk.
func (s *Store) llmConfigsOverLimit(ctx context.Context, pk string) error {
	return s.overLimit(ctx, s.limits.LLMConfigsPerOwner, store.ResourceLLMConfigs, pk, llmConfigSK(""), "", nil)
}

// apiKeysOverLimit checks the user's active keys: not revoked, not expired.
func (s *Store) apiKeysOverLimit(ctx context.Context, userID string) error {
	e := newExpr()
	exp := e.n(kExpiresAt)
	filter := "attribute_not_exists(" + e.n(kRevokedAt) + ") AND (attribute_not_exists(" + exp + ") OR " + exp + " > " + e.v(avS(fmtTime(now()))) + ")"
	return s.overLimit(ctx, s.limits.APIKeysPerUser, store.ResourceAPIKeys, userPK(userID), apiKeySK(""), filter, e)
}

// reserveSession counts one more session of user in the user's counter,
// unless that passes the limit (a *store.LimitError); counted is false
// when no limit is set (nothing is counted then).
func (s *Store) reserveSession(ctx context.Context, user string) (counted bool, err error) {
	limit := s.limits.SessionsPerUser
	if limit <= 0 {
		return false, nil
	}
	e := newExpr()
	n := e.n(aCount)
	_, err = s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(userPK(user), sessionCountSK),
		UpdateExpression:          aws.String("ADD " + n + " " + e.v(avN(1))),
		ConditionExpression:       aws.String("attribute_not_exists(" + n + ") OR " + n + " < " + e.v(avN(int64(limit)))),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	})
	if isConditionFailed(err) {
		return false, &store.LimitError{Resource: store.ResourceSessions, Limit: limit}
	}
	if err != nil {
		return false, fmt.Errorf("count the session: %w", err)
	}
	return true, nil
}

// releaseSession takes one session of user back from the user's counter,
// never below zero. A failure is only logged: the counter then stays one
// too high (see above), which never lets the user pass the limit.
func (s *Store) releaseSession(ctx context.Context, user string) {
	e := newExpr()
	n := e.n(aCount)
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(userPK(user), sessionCountSK),
		UpdateExpression:          aws.String("ADD " + n + " " + e.v(avN(-1))),
		ConditionExpression:       aws.String(n + " > " + e.v(avN(0))),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	})
	if err != nil && !isConditionFailed(err) {
		s.log.Warn("the session counter of a user was not decremented (it stays one too high)", "error", err.Error())
	}
}

var _ store.SessionRoom = (*Store)(nil)

// CheckSessionRoom implements store.SessionRoom with one strongly
// consistent read of the user's session counter.
func (s *Store) CheckSessionRoom(ctx context.Context, userID string) error {
	limit := s.limits.SessionsPerUser
	if limit <= 0 || userID == "" {
		return nil
	}
	it, err := s.getItem(ctx, userPK(userID), sessionCountSK)
	if err != nil {
		return fmt.Errorf("read the session counter: %w", err)
	}
	n, err := getN(it, aCount)
	if err != nil {
		return fmt.Errorf("read the session counter: %w", err)
	}
	if n >= int64(limit) {
		return &store.LimitError{Resource: store.ResourceSessions, Limit: limit}
	}
	return nil
}

package dynamo

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"agentchat/internal/store"
)

// UpdateSessionMetadata implements store.SessionMetadata: the metadata
// blob is read, merged and written back with an UpdateItem conditioned on
// the owner and on the blob being unchanged since it was read, retried
// when a concurrent update won.
func (s *Store) UpdateSessionMetadata(ctx context.Context, k store.Key, set map[string]any) (*store.Session, error) {
	if _, ok := set[store.MetadataCopilotMode]; ok {
		return nil, fmt.Errorf("update metadata of session %s: %s cannot be changed", k.ThreadID, store.MetadataCopilotMode)
	}
	for range maxUpdateAttempts {
		it, err := s.readMeta(ctx, k, aMetadata)
		if err != nil {
			return nil, fmt.Errorf("update metadata: %w", err)
		}
		old := getS(it, aMetadata)
		md := map[string]any{}
		if old != "" {
			if err := json.Unmarshal([]byte(old), &md); err != nil {
				return nil, fmt.Errorf("update metadata of session %s: decode: %w", k.ThreadID, err)
			}
		}
		for key, v := range set {
			if v == nil {
				delete(md, key)
			} else {
				md[key] = v
			}
		}
		e := newExpr()
		cond := e.n(aUser) + " = " + e.v(avS(k.UserID))
		if old == "" {
			cond += " AND attribute_not_exists(" + e.n(aMetadata) + ")"
		} else {
			cond += " AND " + e.n(aMetadata) + " = " + e.v(avS(old))
		}
		if len(md) == 0 {
			e.remove(aMetadata)
		} else {
			b, err := json.Marshal(md)
			if err != nil {
				return nil, fmt.Errorf("update metadata of session %s: encode: %w", k.ThreadID, err)
			}
			e.set(aMetadata, avS(string(b)))
		}
		out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(s.table),
			Key:                       keyOf(sessionPK(k.ProjectID, k.ThreadID), metaSK),
			UpdateExpression:          aws.String(e.update()),
			ConditionExpression:       aws.String(cond),
			ExpressionAttributeNames:  e.names,
			ExpressionAttributeValues: e.values,
			ReturnValues:              types.ReturnValueAllNew,
		})
		if isConditionFailed(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("update metadata of session %s: %w", k.ThreadID, err)
		}
		sess, err := sessionFromItem(out.Attributes)
		if err != nil {
			return nil, fmt.Errorf("update metadata of session %s: %w", k.ThreadID, err)
		}
		return sess, nil
	}
	return nil, fmt.Errorf("update metadata of session %s: too many concurrent updates", k.ThreadID)
}

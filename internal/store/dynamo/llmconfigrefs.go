package dynamo

import (
	"cmp"
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"agentchat/internal/store"
)

// A user's default may be a group's configuration, by reference: the
// user's default pointer (SK LLMCFG_DEFAULT of the user's partition) then
// also holds the group's id (group_id) and names the group's
// configuration by id and incarnation. It is the same item as the
// pointer to one of the user's own configurations, so either kind of
// default replaces the other in one PutItem. A pointer whose group
// configuration is gone (or was created again, with another incarnation)
// is read as no default: deleting a group's configuration needs no write
// on its members' side.

// SetDefaultLLMConfigRef implements store.LLMConfigs: a consistent read
// of the group's configuration, then one PutItem of the user's pointer.
func (s *Store) SetDefaultLLMConfigRef(ctx context.Context, userID, groupID, id string) (*store.LLMConfig, error) {
	if userID == "" || groupID == "" || id == "" {
		return nil, fmt.Errorf("set default LLM configuration %q by reference: %w", id, store.ErrNotFound)
	}
	gpk := groupPK(groupID)
	it, err := s.getItem(ctx, gpk, llmConfigSK(id))
	if err != nil {
		return nil, fmt.Errorf("set default LLM configuration %s by reference: %w", id, err)
	}
	if it == nil {
		return nil, fmt.Errorf("set default LLM configuration %s by reference: %w", id, store.ErrNotFound)
	}
	p := keyOf(userPK(userID), llmDefaultSK)
	p[lcID] = avS(id)
	p[lcIncarnation] = avS(getS(it, lcIncarnation))
	p[lcGroup] = avS(groupID)
	p[lcUpdatedAt] = avS(fmtTime(s.clock()))
	if _, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: p}); err != nil {
		return nil, fmt.Errorf("set default LLM configuration %s by reference: %w", id, err)
	}
	gp, err := s.readDefault(ctx, gpk)
	if err != nil {
		return nil, fmt.Errorf("set default LLM configuration %s by reference: %w", id, err)
	}
	return llmConfigFromItem(it, gp)
}

// DefaultLLMConfigRef implements store.LLMConfigs: the user's pointer,
// then the group's configuration it names and the group's own pointer
// (for IsDefault) at once; two round trips.
func (s *Store) DefaultLLMConfigRef(ctx context.Context, userID string) (*store.LLMConfig, error) {
	if userID == "" {
		return nil, fmt.Errorf("default LLM configuration by reference: %w", store.ErrNotFound)
	}
	p, err := s.readDefault(ctx, userPK(userID))
	if err != nil {
		return nil, fmt.Errorf("default LLM configuration by reference: %w", err)
	}
	if p.group == "" || p.id == "" {
		return nil, fmt.Errorf("default LLM configuration by reference: %w", store.ErrNotFound)
	}
	// The group's configuration and the group's own pointer (whether it
	// is the group's default too) at once: one round trip, not two.
	gpk := groupPK(p.group)
	var (
		gp   pointer
		gerr error
	)
	pointerRead := make(chan struct{})
	go func() {
		defer close(pointerRead)
		gp, gerr = s.readDefault(ctx, gpk)
	}()
	it, err := s.getItem(ctx, gpk, llmConfigSK(p.id))
	<-pointerRead
	if err := cmp.Or(err, gerr); err != nil {
		return nil, fmt.Errorf("default LLM configuration by reference: %w", err)
	}
	if it == nil || getS(it, lcIncarnation) != p.incarnation {
		return nil, fmt.Errorf("default LLM configuration by reference: %w", store.ErrNotFound)
	}
	return llmConfigFromItem(it, gp)
}

// UnsetDefaultLLMConfigRef implements store.LLMConfigs: one DeleteItem of
// the user's pointer, conditioned on its naming the group's configuration
// id (a failed condition is no error).
func (s *Store) UnsetDefaultLLMConfigRef(ctx context.Context, userID, groupID, id string) error {
	if userID == "" || groupID == "" || id == "" {
		return nil
	}
	_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(userPK(userID), llmDefaultSK),
		ConditionExpression:       aws.String("#id = :id AND #g = :g"),
		ExpressionAttributeNames:  map[string]string{"#id": lcID, "#g": lcGroup},
		ExpressionAttributeValues: item{":id": avS(id), ":g": avS(groupID)},
	})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("unset default LLM configuration %s by reference: %w", id, err)
	}
	return nil
}

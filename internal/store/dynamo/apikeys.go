package dynamo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"agentchat/internal/store"
)

// Attributes of API key items (the user's item and the lookup item).
const (
	kID        = "key_id"
	kUser      = "user_id"
	kName      = "name"
	kHash      = "hash"
	kPrefix    = "prefix"
	kCreatedAt = "created_at"
	kExpiresAt = "expires_at"
	kRevokedAt = "revoked_at"
	kLastUsed  = "last_used"
	// Limits (see ratelimits.go), on both items; absent: none.
	kMaxParallel = "max_parallel"
	kRPM         = "rpm"
	kTPM         = "tpm"
)

func apiKeyAttrs(it item, k *store.APIKey) {
	it[kID] = avS(k.ID)
	it[kUser] = avS(k.UserID)
	it[kName] = avS(k.Name)
	it[kHash] = avS(k.Hash)
	it[kPrefix] = avS(k.Prefix)
	putTime(it, kCreatedAt, k.CreatedAt)
	putTime(it, kExpiresAt, k.ExpiresAt)
	putTime(it, kRevokedAt, k.RevokedAt)
	putTime(it, kLastUsed, k.LastUsed)
	putLimits(it, k.Limits)
}

func apiKeyFromItem(it item) (*store.APIKey, error) {
	k := &store.APIKey{
		ID:     getS(it, kID),
		UserID: getS(it, kUser),
		Name:   getS(it, kName),
		Hash:   getS(it, kHash),
		Prefix: getS(it, kPrefix),
	}
	var err error
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{
		{kCreatedAt, &k.CreatedAt}, {kExpiresAt, &k.ExpiresAt},
		{kRevokedAt, &k.RevokedAt}, {kLastUsed, &k.LastUsed},
	} {
		if *f.dst, err = getTime(it, f.name); err != nil {
			return nil, fmt.Errorf("decode API key %s: %w", k.ID, err)
		}
	}
	var err2 error
	if k.Limits, err2 = getLimits(it); err2 != nil {
		return nil, fmt.Errorf("decode API key %s: %w", k.ID, err2)
	}
	return k, nil
}

// CreateAPIKey implements store.APIKeys. An empty ID is filled with a UUID
// and a zero CreatedAt with now. ErrExists when the user already has a key
// with that ID or any key has that hash.
func (s *Store) CreateAPIKey(ctx context.Context, k *store.APIKey) error {
	if k == nil || k.UserID == "" || k.Hash == "" {
		return errors.New("create API key: user id and hash are required")
	}
	if k.ID == "" {
		k.ID = uuid.NewString()
	}
	if k.CreatedAt.IsZero() {
		k.CreatedAt = now()
	}
	userItem := keyOf(userPK(k.UserID), apiKeySK(k.ID))
	apiKeyAttrs(userItem, k)
	if err := s.putNew(ctx, userItem); err != nil {
		return fmt.Errorf("create API key %s: %w", k.ID, err)
	}
	lookup := keyOf(keyHashPK(k.Hash), keyHashSK)
	apiKeyAttrs(lookup, k)
	err := s.apiKeysOverLimit(ctx, k.UserID) // see limits.go
	if err == nil {
		err = s.putNew(ctx, lookup)
	}
	if err != nil {
		// Undo the user's item: the key must not be listed without working.
		_, derr := s.client.DeleteItem(context.WithoutCancel(ctx), &dynamodb.DeleteItemInput{
			TableName: aws.String(s.table),
			Key:       keyOf(userPK(k.UserID), apiKeySK(k.ID)),
		})
		return errors.Join(fmt.Errorf("create API key %s: %w", k.ID, err), derr)
	}
	return nil
}

// putNew puts it unless an item with its key exists (ErrExists).
func (s *Store) putNew(ctx context.Context, it item) error {
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(s.table),
		Item:                     it,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": attrPK},
	})
	if isConditionFailed(err) {
		return store.ErrExists
	}
	return err
}

// ListAPIKeys implements store.APIKeys: newest first, then by ID.
func (s *Store) ListAPIKeys(ctx context.Context, userID string) ([]store.APIKey, error) {
	keys := []store.APIKey{}
	if userID == "" {
		return keys, nil
	}
	var start item
	for {
		out, err := s.client.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :sk)"),
			ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK},
			ExpressionAttributeValues: item{":pk": avS(userPK(userID)), ":sk": avS(apiKeySK(""))},
			ConsistentRead:            aws.Bool(true),
			ExclusiveStartKey:         start,
		})
		if err != nil {
			return nil, fmt.Errorf("list API keys of %s: %w", userID, err)
		}
		for _, it := range out.Items {
			k, err := apiKeyFromItem(it)
			if err != nil {
				return nil, err
			}
			keys = append(keys, *k)
		}
		start = out.LastEvaluatedKey
		if start == nil {
			break
		}
	}
	slices.SortFunc(keys, func(a, b store.APIKey) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return keys, nil
}

// RevokeAPIKey implements store.APIKeys: the lookup item first (so the key
// stops authenticating even if the second write fails), then the user's
// item. Revoking twice keeps the first revocation time.
func (s *Store) RevokeAPIKey(ctx context.Context, userID, keyID string) error {
	if userID == "" || keyID == "" {
		return fmt.Errorf("revoke API key %q: %w", keyID, store.ErrNotFound)
	}
	userKey := keyOf(userPK(userID), apiKeySK(keyID))
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            userKey,
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return fmt.Errorf("revoke API key %s: %w", keyID, err)
	}
	if out.Item == nil {
		return fmt.Errorf("revoke API key %s: %w", keyID, store.ErrNotFound)
	}
	at := avS(fmtTime(now()))
	for _, key := range []item{keyOf(keyHashPK(getS(out.Item, kHash)), keyHashSK), userKey} {
		_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(s.table),
			Key:                       key,
			UpdateExpression:          aws.String("SET #r = if_not_exists(#r, :t)"),
			ConditionExpression:       aws.String("attribute_exists(#pk)"),
			ExpressionAttributeNames:  map[string]string{"#r": kRevokedAt, "#pk": attrPK},
			ExpressionAttributeValues: item{":t": at},
		})
		if err != nil && !isConditionFailed(err) { // a missing lookup item: nothing to revoke there
			return fmt.Errorf("revoke API key %s: %w", keyID, err)
		}
	}
	return nil
}

// APIKeyByHash implements store.APIKeys with one strongly consistent read
// of the lookup item.
func (s *Store) APIKeyByHash(ctx context.Context, hash string) (*store.APIKey, error) {
	if hash == "" {
		return nil, fmt.Errorf("API key by hash: %w", store.ErrNotFound)
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            keyOf(keyHashPK(hash), keyHashSK),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("API key by hash: %w", err)
	}
	if out.Item == nil {
		return nil, fmt.Errorf("API key by hash: %w", store.ErrNotFound)
	}
	return apiKeyFromItem(out.Item)
}

// TouchAPIKey implements store.APIKeys with one conditional UpdateItem of
// the user's item (the one ListAPIKeys reads; the lookup item keeps its
// LastUsed of creation): last_used becomes t unless it is already at or
// after t. store.ErrNotFound when the user has no such key.
func (s *Store) TouchAPIKey(ctx context.Context, userID, keyID string, t time.Time) error {
	if t.IsZero() {
		return fmt.Errorf("touch API key %s: zero time", keyID)
	}
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return fmt.Errorf("touch API key %s: time %v out of range (years 1..9999)", keyID, t)
	}
	if userID == "" || keyID == "" {
		return fmt.Errorf("touch API key %q: %w", keyID, store.ErrNotFound)
	}
	key := keyOf(userPK(userID), apiKeySK(keyID))
	// timeLayout is fixed width, so string order is time order.
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(s.table),
		Key:                                 key,
		UpdateExpression:                    aws.String("SET #lu = :t"),
		ConditionExpression:                 aws.String("attribute_exists(#pk) AND (attribute_not_exists(#lu) OR #lu < :t)"),
		ExpressionAttributeNames:            map[string]string{"#lu": kLastUsed, "#pk": attrPK},
		ExpressionAttributeValues:           item{":t": avS(fmtTime(t))},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		return nil
	}
	var cf *types.ConditionalCheckFailedException
	if !errors.As(err, &cf) {
		return fmt.Errorf("touch API key %s: %w", keyID, err)
	}
	if cf.Item != nil { // the key exists and was used at or after t
		return nil
	}
	// No item returned: the key is missing, or an emulator does not return
	// it. Read it to tell.
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:                aws.String(s.table),
		Key:                      key,
		ConsistentRead:           aws.Bool(true),
		ProjectionExpression:     aws.String("#pk"),
		ExpressionAttributeNames: map[string]string{"#pk": attrPK},
	})
	if err != nil {
		return fmt.Errorf("touch API key %s: %w", keyID, err)
	}
	if out.Item == nil {
		return fmt.Errorf("touch API key %s: %w", keyID, store.ErrNotFound)
	}
	return nil
}

package dynamo

import (
	"cmp"
	"context"
	"encoding/json"
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

// LLM configurations (see the package documentation for the items).
//
// The owner's default is not a flag on the configurations but one pointer
// item per owner (SK LLMCFG_DEFAULT) naming the default configuration:
// setting a default is one PutItem that replaces the pointer, so there is
// at most one default per owner by construction, and concurrent
// SetDefaultLLMConfig calls simply leave the last write. Unsetting the
// default is one DeleteItem of the pointer conditioned on the config_id it
// names, so it never removes a default moved meanwhile to another
// configuration. IsDefault is derived on every read by comparing the
// pointer with the configuration.
//
// The pointer names the configuration by id and incarnation (a random
// value given to each configuration item when it is created), so that a
// pointer left behind by a deletion (DeleteLLMConfig removes the pointer
// after the item, and a concurrent SetDefaultLLMConfig may rewrite it in
// between) points at nothing: it never makes a later configuration with the
// same id the default. Readers treat such a pointer as no default.

// Attributes of LLM configuration items and of the default pointer.
const (
	lcID          = "config_id"
	lcUser        = "user_id"
	lcGroup       = "group_id"
	lcName        = "name"
	lcModelType   = "model_type"
	lcConfig      = "config" // JSON text of LLMConfig.Config
	lcCipher      = "api_key_cipher"
	lcHint        = "api_key_hint"
	lcVersion     = "version"
	lcCreatedAt   = "created_at"
	lcUpdatedAt   = "updated_at"
	lcIncarnation = "incarnation"
)

// llmConfigPrefix starts the sort key of every configuration item and of
// the default pointer, so that one query reads them all.
const llmConfigPrefix = "LLMCFG"

func llmConfigSK(id string) string { return llmConfigPrefix + "#" + esc(id) }

// llmDefaultSK is the sort key of an owner's default pointer.
const llmDefaultSK = llmConfigPrefix + "_DEFAULT"

func groupPK(group string) string { return "G#" + esc(group) }

// ownerPK returns the partition key of the owner's configurations; ok is
// false when o is not a valid owner.
func ownerPK(o store.Owner) (string, bool) {
	switch {
	case !o.Valid():
		return "", false
	case o.UserID != "":
		return userPK(o.UserID), true
	default:
		return groupPK(o.GroupID), true
	}
}

// pointer is an owner's default pointer; the zero value is no default.
// group is set when a user's pointer names a configuration of that group
// (a default by reference, see llmconfigrefs.go); such a pointer marks
// none of the user's own configurations.
type pointer struct{ id, incarnation, group string }

func (p pointer) marks(it item) bool {
	return p.id != "" && p.group == "" && p.id == getS(it, lcID) && p.incarnation == getS(it, lcIncarnation)
}

// pointerOf reads a default pointer item.
func pointerOf(it item) pointer {
	return pointer{id: getS(it, lcID), incarnation: getS(it, lcIncarnation), group: getS(it, lcGroup)}
}

// checkYear refuses times that the fixed-width key format cannot hold.
func checkYear(name string, t time.Time) error {
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return fmt.Errorf("%s %v out of range (years 1..9999)", name, t)
	}
	return nil
}

func llmConfigFromItem(it item, p pointer) (*store.LLMConfig, error) {
	c := &store.LLMConfig{
		ID:           getS(it, lcID),
		Name:         getS(it, lcName),
		ModelType:    getS(it, lcModelType),
		APIKeyCipher: getS(it, lcCipher),
		APIKeyHint:   getS(it, lcHint),
		IsDefault:    p.marks(it),
	}
	if g := getS(it, lcGroup); g != "" {
		c.Owner = store.GroupOwner(g)
	} else {
		c.Owner = store.UserOwner(getS(it, lcUser))
	}
	var err error
	if c.Version, err = getN(it, lcVersion); err != nil {
		return nil, fmt.Errorf("decode LLM configuration %s: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(getS(it, lcConfig)), &c.Config); err != nil {
		return nil, fmt.Errorf("decode config of LLM configuration %s: %w", c.ID, err)
	}
	if c.Config == nil {
		c.Config = map[string]any{}
	}
	if c.CreatedAt, err = getTime(it, lcCreatedAt); err != nil {
		return nil, fmt.Errorf("decode LLM configuration %s: %w", c.ID, err)
	}
	if c.UpdatedAt, err = getTime(it, lcUpdatedAt); err != nil {
		return nil, fmt.Errorf("decode LLM configuration %s: %w", c.ID, err)
	}
	return c, nil
}

// encConfig encodes a configuration's Config as JSON text; nil is "{}".
func encConfig(m map[string]any) (string, error) {
	if m == nil {
		return "{}", nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// CreateLLMConfig implements store.LLMConfigs: the configuration item is
// put (attribute_not_exists), then, with c.IsDefault, the owner's default
// pointer, which replaces the previous default in one write; if that
// second write fails the item is deleted again and the error returned. An
// empty c.ID is filled with a new UUID; c.Version becomes 1 and zero
// timestamps now (all filled into c). store.ErrExists when the owner
// already has a configuration with that id.
func (s *Store) CreateLLMConfig(ctx context.Context, c *store.LLMConfig) error {
	if c == nil {
		return errors.New("create LLM configuration: nil configuration")
	}
	pk, ok := ownerPK(c.Owner)
	if !ok {
		return fmt.Errorf("create LLM configuration %s: the owner needs exactly one of a user id and a group id", c.ID)
	}
	cfg, err := encConfig(c.Config)
	if err != nil {
		return fmt.Errorf("create LLM configuration %s: encode config: %w", c.ID, err)
	}
	now := s.clock().UTC().Round(0)
	created, updated := c.CreatedAt, c.UpdatedAt
	if created.IsZero() {
		created = now
	}
	if updated.IsZero() {
		updated = now
	}
	if err := errors.Join(checkYear("CreatedAt", created), checkYear("UpdatedAt", updated)); err != nil {
		return fmt.Errorf("create LLM configuration %s: %w", c.ID, err)
	}
	id := c.ID
	if id == "" {
		id = uuid.NewString()
	}
	it := keyOf(pk, llmConfigSK(id))
	it[lcID] = avS(id)
	if c.Owner.UserID != "" {
		it[lcUser] = avS(c.Owner.UserID)
	} else {
		it[lcGroup] = avS(c.Owner.GroupID)
	}
	it[lcName] = avS(c.Name)
	it[lcModelType] = avS(c.ModelType)
	it[lcConfig] = avS(cfg)
	it[lcCipher] = avS(c.APIKeyCipher)
	it[lcHint] = avS(c.APIKeyHint)
	it[lcVersion] = avN(1)
	it[lcCreatedAt] = avS(fmtTime(created))
	it[lcUpdatedAt] = avS(fmtTime(updated))
	it[lcIncarnation] = avS(uuid.NewString())
	if err := s.putNew(ctx, it); err != nil {
		return fmt.Errorf("create LLM configuration %s: %w", id, err)
	}
	if err := s.llmConfigsOverLimit(ctx, pk); err != nil {
		// Undo the item (see limits.go).
		_, derr := s.client.DeleteItem(context.WithoutCancel(ctx), &dynamodb.DeleteItemInput{
			TableName: aws.String(s.table),
			Key:       keyOf(pk, llmConfigSK(id)),
		})
		return errors.Join(fmt.Errorf("create LLM configuration %s: %w", id, err), derr)
	}
	if c.IsDefault {
		if err := s.putDefault(ctx, pk, it); err != nil {
			// Undo the item: a create that fails leaves nothing behind.
			_, derr := s.client.DeleteItem(context.WithoutCancel(ctx), &dynamodb.DeleteItemInput{
				TableName: aws.String(s.table),
				Key:       keyOf(pk, llmConfigSK(id)),
			})
			return errors.Join(fmt.Errorf("create LLM configuration %s: make it the default: %w", id, err), derr)
		}
	}
	c.ID, c.Version, c.CreatedAt, c.UpdatedAt = id, 1, created.UTC(), updated.UTC()
	return nil
}

// putDefault makes the configuration item it the default of the owner pk:
// one PutItem of the pointer, replacing the previous default.
func (s *Store) putDefault(ctx context.Context, pk string, it item) error {
	p := keyOf(pk, llmDefaultSK)
	p[lcID] = avS(getS(it, lcID))
	p[lcIncarnation] = avS(getS(it, lcIncarnation))
	p[lcUpdatedAt] = avS(fmtTime(s.clock()))
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: p})
	return err
}

// getItem reads one item with a strongly consistent read; nil when absent.
func (s *Store) getItem(ctx context.Context, pk, sk string) (item, error) {
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            keyOf(pk, sk),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, err
	}
	return out.Item, nil
}

// readDefault reads the owner's default pointer (zero when none).
func (s *Store) readDefault(ctx context.Context, pk string) (pointer, error) {
	it, err := s.getItem(ctx, pk, llmDefaultSK)
	if err != nil || it == nil {
		return pointer{}, err
	}
	return pointerOf(it), nil
}

// GetLLMConfig implements store.LLMConfigs with two consistent reads: the
// item, then the owner's default pointer.
func (s *Store) GetLLMConfig(ctx context.Context, owner store.Owner, id string) (*store.LLMConfig, error) {
	pk, ok := ownerPK(owner)
	if !ok || id == "" {
		return nil, fmt.Errorf("get LLM configuration %q: %w", id, store.ErrNotFound)
	}
	it, err := s.getItem(ctx, pk, llmConfigSK(id))
	if err != nil {
		return nil, fmt.Errorf("get LLM configuration %s: %w", id, err)
	}
	if it == nil {
		return nil, fmt.Errorf("get LLM configuration %s: %w", id, store.ErrNotFound)
	}
	p, err := s.readDefault(ctx, pk)
	if err != nil {
		return nil, fmt.Errorf("get LLM configuration %s: %w", id, err)
	}
	return llmConfigFromItem(it, p)
}

// ListLLMConfigs implements store.LLMConfigs with one consistent query of
// the owner's partition (the configurations and the default pointer):
// oldest first, then by id.
func (s *Store) ListLLMConfigs(ctx context.Context, owner store.Owner) ([]store.LLMConfig, error) {
	out := []store.LLMConfig{}
	pk, ok := ownerPK(owner)
	if !ok {
		return out, nil
	}
	var (
		items []item
		p     pointer
		start item
	)
	for {
		pp, page, next, err := s.llmConfigPage(ctx, pk, start)
		if err != nil {
			return nil, fmt.Errorf("list LLM configurations: %w", err)
		}
		if pp.id != "" {
			p = pp
		}
		items = append(items, page...)
		if start = next; start == nil {
			break
		}
	}
	for _, it := range items {
		c, err := llmConfigFromItem(it, p)
		if err != nil {
			return nil, fmt.Errorf("list LLM configurations: %w", err)
		}
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b store.LLMConfig) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}

// maxVersionRetries bounds the retries of an update whose condition failed
// although the version read afterwards is the expected one (the item was
// deleted and created again in between).
const maxVersionRetries = 3

// UpdateLLMConfig implements store.LLMConfigs with one conditional
// UpdateItem (attribute_exists, and version = expectedVersion unless it is
// 0) that also adds 1 to the version. On a failed condition the current
// version comes with the failure (DynamoDB) or from a consistent read
// (emulators that do not return it).
func (s *Store) UpdateLLMConfig(ctx context.Context, c *store.LLMConfig, expectedVersion int64) (*store.LLMConfig, error) {
	if c == nil {
		return nil, errors.New("update LLM configuration: nil configuration")
	}
	pk, ok := ownerPK(c.Owner)
	if !ok || c.ID == "" {
		return nil, fmt.Errorf("update LLM configuration %q: %w", c.ID, store.ErrNotFound)
	}
	cfg, err := encConfig(c.Config)
	if err != nil {
		return nil, fmt.Errorf("update LLM configuration %s: encode config: %w", c.ID, err)
	}
	key := keyOf(pk, llmConfigSK(c.ID))
	for attempt := 0; ; attempt++ {
		e := newExpr()
		e.set(lcName, avS(c.Name))
		e.set(lcModelType, avS(c.ModelType))
		e.set(lcConfig, avS(cfg))
		e.set(lcCipher, avS(c.APIKeyCipher))
		e.set(lcHint, avS(c.APIKeyHint))
		e.set(lcUpdatedAt, avS(fmtTime(s.clock())))
		e.add(lcVersion, avN(1))
		cond := "attribute_exists(" + e.n(attrPK) + ")"
		if expectedVersion != 0 {
			cond += " AND " + e.n(lcVersion) + " = " + e.v(avN(expectedVersion))
		}
		out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                           aws.String(s.table),
			Key:                                 key,
			UpdateExpression:                    aws.String(e.update()),
			ConditionExpression:                 aws.String(cond),
			ExpressionAttributeNames:            e.names,
			ExpressionAttributeValues:           e.values,
			ReturnValues:                        types.ReturnValueAllNew,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		if err == nil {
			p, err := s.readDefault(ctx, pk)
			if err != nil {
				return nil, fmt.Errorf("update LLM configuration %s: %w", c.ID, err)
			}
			return llmConfigFromItem(out.Attributes, p)
		}
		var cf *types.ConditionalCheckFailedException
		if !errors.As(err, &cf) {
			return nil, fmt.Errorf("update LLM configuration %s: %w", c.ID, err)
		}
		current := cf.Item
		if current == nil { // an emulator that does not return the item
			if current, err = s.getItem(ctx, pk, llmConfigSK(c.ID)); err != nil {
				return nil, fmt.Errorf("update LLM configuration %s: %w", c.ID, err)
			}
		}
		if current == nil {
			return nil, fmt.Errorf("update LLM configuration %s: %w", c.ID, store.ErrNotFound)
		}
		v, err := getN(current, lcVersion)
		if err != nil {
			return nil, fmt.Errorf("update LLM configuration %s: %w", c.ID, err)
		}
		if (expectedVersion != 0 && v != expectedVersion) || attempt >= maxVersionRetries {
			return nil, fmt.Errorf("update LLM configuration %s: %w", c.ID,
				&store.VersionConflictError{Expected: expectedVersion, Current: v})
		}
		// The item read now matches the condition: it changed in between.
	}
}

// SetDefaultLLMConfig implements store.LLMConfigs: a consistent read of
// the configuration, then one PutItem of the owner's default pointer.
func (s *Store) SetDefaultLLMConfig(ctx context.Context, owner store.Owner, id string) (*store.LLMConfig, error) {
	pk, ok := ownerPK(owner)
	if !ok || id == "" {
		return nil, fmt.Errorf("set default LLM configuration %q: %w", id, store.ErrNotFound)
	}
	it, err := s.getItem(ctx, pk, llmConfigSK(id))
	if err != nil {
		return nil, fmt.Errorf("set default LLM configuration %s: %w", id, err)
	}
	if it == nil {
		return nil, fmt.Errorf("set default LLM configuration %s: %w", id, store.ErrNotFound)
	}
	if err := s.putDefault(ctx, pk, it); err != nil {
		return nil, fmt.Errorf("set default LLM configuration %s: %w", id, err)
	}
	return llmConfigFromItem(it, pointer{id: getS(it, lcID), incarnation: getS(it, lcIncarnation)})
}

// UnsetDefaultLLMConfig implements store.LLMConfigs: a consistent read of
// the configuration (ErrNotFound when it is absent), then one DeleteItem of
// the owner's default pointer conditioned on its config_id being id, so
// that a default moved meanwhile to another configuration stays. A failed
// condition (the pointer names another configuration, or there is none)
// is no error: id is not the default.
func (s *Store) UnsetDefaultLLMConfig(ctx context.Context, owner store.Owner, id string) error {
	pk, ok := ownerPK(owner)
	if !ok || id == "" {
		return fmt.Errorf("unset default LLM configuration %q: %w", id, store.ErrNotFound)
	}
	it, err := s.getItem(ctx, pk, llmConfigSK(id))
	if err != nil {
		return fmt.Errorf("unset default LLM configuration %s: %w", id, err)
	}
	if it == nil {
		return fmt.Errorf("unset default LLM configuration %s: %w", id, store.ErrNotFound)
	}
	if err := s.deleteDefaultOf(ctx, pk, id); err != nil {
		return fmt.Errorf("unset default LLM configuration %s: %w", id, err)
	}
	return nil
}

// deleteDefaultOf deletes the owner's default pointer if it names the
// owner's configuration id; nil also when it names another one, a group's
// configuration, or there is none.
func (s *Store) deleteDefaultOf(ctx context.Context, pk, id string) error {
	_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(pk, llmDefaultSK),
		ConditionExpression:       aws.String("#id = :id AND attribute_not_exists(#g)"),
		ExpressionAttributeNames:  map[string]string{"#id": lcID, "#g": lcGroup},
		ExpressionAttributeValues: item{":id": avS(id)},
	})
	if isConditionFailed(err) {
		return nil
	}
	return err
}

// DefaultLLMConfig implements store.LLMConfigs: the pointer, then the
// configuration it names. A pointer to a configuration that is gone is no
// default, unless the pointer moved meanwhile (then it is read again).
func (s *Store) DefaultLLMConfig(ctx context.Context, owner store.Owner) (*store.LLMConfig, error) {
	pk, ok := ownerPK(owner)
	if !ok {
		return nil, fmt.Errorf("default LLM configuration: %w", store.ErrNotFound)
	}
	// Usually one round trip: the pointer and the owner's configurations
	// are one key range of the owner's partition (read on every turn).
	p, it, err := s.readDefaultWithConfigs(ctx, pk)
	if err == nil && it != nil && p.marks(it) {
		return llmConfigFromItem(it, p)
	}
	for attempt := 0; err == nil && p.id != "" && p.group == "" && attempt <= maxVersionRetries; attempt++ {
		var it item
		if it, err = s.getItem(ctx, pk, llmConfigSK(p.id)); err != nil {
			break
		}
		if it != nil && p.marks(it) {
			return llmConfigFromItem(it, p)
		}
		var again pointer
		if again, err = s.readDefault(ctx, pk); err == nil && again == p {
			break // a pointer left behind by a deletion
		}
		p = again
	}
	if err != nil {
		return nil, fmt.Errorf("default LLM configuration: %w", err)
	}
	if p.id == "" && owner.UserID != "" {
		// No pointer at all: no default by reference either.
		return nil, fmt.Errorf("default LLM configuration: %w (%w)", store.ErrNotFound, store.ErrNoDefaultRef)
	}
	return nil, fmt.Errorf("default LLM configuration: %w", store.ErrNotFound)
}

// llmConfigPage reads one page of the owner's configuration items (one
// strongly consistent Query from start): the default pointer when the page
// holds it, the configuration items, and where the next page starts (nil
// after the last).
func (s *Store) llmConfigPage(ctx context.Context, pk string, start item) (p pointer, configs []item, next item, err error) {
	res, err := s.client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :sk)"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK},
		ExpressionAttributeValues: item{":pk": avS(pk), ":sk": avS(llmConfigPrefix)},
		ConsistentRead:            aws.Bool(true),
		ExclusiveStartKey:         start,
	})
	if err != nil {
		return pointer{}, nil, nil, err
	}
	for _, it := range res.Items {
		switch sk := getS(it, attrSK); {
		case sk == llmDefaultSK:
			p = pointerOf(it)
		case len(sk) > len(llmConfigPrefix) && sk[len(llmConfigPrefix)] == '#':
			configs = append(configs, it)
		}
	}
	return p, configs, res.LastEvaluatedKey, nil
}

// readDefaultWithConfigs reads, in one strongly consistent Query of the
// owner's configuration items, the default pointer and the item it names
// (nil when that item was not among the first page's, or is gone).
func (s *Store) readDefaultWithConfigs(ctx context.Context, pk string) (pointer, item, error) {
	p, configs, next, err := s.llmConfigPage(ctx, pk, nil)
	if err != nil {
		return pointer{}, nil, fmt.Errorf("read default pointer: %w", err)
	}
	if p.id == "" && next != nil {
		// The pointer sorts after every configuration ('_' > '#'): on a
		// page cut short it was not read.
		if p, err = s.readDefault(ctx, pk); err != nil {
			return pointer{}, nil, err
		}
	}
	for _, it := range configs {
		if getS(it, lcID) == p.id {
			return p, it, nil
		}
	}
	return p, nil, nil
}

// DeleteLLMConfig implements store.LLMConfigs: the item first, then the
// owner's default pointer if it still names this configuration (a
// condition on the pointer, so that a default set meanwhile on another
// configuration stays). A failure of that second write is only logged: the
// pointer then names a configuration that is gone, which every read
// treats as no default.
func (s *Store) DeleteLLMConfig(ctx context.Context, owner store.Owner, id string) error {
	pk, ok := ownerPK(owner)
	if !ok || id == "" {
		return fmt.Errorf("delete LLM configuration %q: %w", id, store.ErrNotFound)
	}
	_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                aws.String(s.table),
		Key:                      keyOf(pk, llmConfigSK(id)),
		ConditionExpression:      aws.String("attribute_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": attrPK},
	})
	if isConditionFailed(err) {
		return fmt.Errorf("delete LLM configuration %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete LLM configuration %s: %w", id, err)
	}
	if err := s.deleteDefaultOf(context.WithoutCancel(ctx), pk, id); err != nil {
		s.log.Warn("delete LLM configuration: the default pointer was left behind (it names a deleted configuration, read as no default)",
			"config_id", id, "error", err)
	}
	return nil
}

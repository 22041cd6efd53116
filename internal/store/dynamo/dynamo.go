// Package dynamo implements store.Store on Amazon DynamoDB (aws-sdk-go-v2)
// with the single-table design of DESIGN.md: one table with the string keys
// PK and SK and one sparse global secondary index GSI1 (GSI1PK, GSI1SK,
// projection ALL). No transactions are used, so the store also runs on
// dynalite.
//
// Items:
//
//	session meta   PK=P#{project}#T#{thread}  SK=META
//	               GSI1PK=P#{project}  GSI1SK=U#{user}#PIN#{1|0}#UPD#{updated_at}#T#{thread}
//	message        PK=P#{project}#T#{thread}  SK=MSG#{seq:010d}
//	message part   PK=P#{project}#T#{thread}  SK=MSG#{seq:010d}#P{n:04d}   (large messages only)
//	API key        PK=U#{user}                SK=APIKEY#{id}
//	API key lookup PK=KEYHASH#{hash}          SK=KEY                       (a copy of the key)
//	LLM config     PK=U#{user} or G#{group}   SK=LLMCFG#{config_id}
//	default LLM    PK=U#{user} or G#{group}   SK=LLMCFG_DEFAULT            (config_id and incarnation of the default)
//	device lock    PK=P#{project}#DEV#{node}  SK=LOCK                      (owner, expires_at, ttl)
//	turn slot      PK=U#{user}                SK=TURNSLOT#{slot:04d}       (owner, expires_at, ttl)
//	session count  PK=U#{user}                SK=COUNT#SESSIONS            (n; see limits.go)
//	audit entry    PK=P#{project}#AUDIT       SK={at}#{id}                 (append-only; see audit.go)
//	user budget    PK=U#{user}                SK=BUDGET                    (budget_nanos, budget_period)
//	usage row      PK=U#{user}                SK=USAGE#{day}#{model}#{key}#{project}#{session} (counters; see usage.go)
//	turn log item  PK=P#{project}#T#{thread}  SK=TURN#{turn}#{last:010d}#{part:02d} (events of a turn; see turnlog.go)
//
// DESIGN.md names the turn log items EVT#{turn}#{seq}; they are TURN#...
// instead, keyed by the last event of their batch, because a session's
// items must all sort after META (deleteThread reads the meta item as the
// first item of the partition), and "EVT#" sorts before it.
//
// Key components are escaped ('%' → "%25", '#' → "%23") so that no id can
// forge another's key; timestamps in keys are fixed-width UTC
// (2006-01-02T15:04:05.000000000Z) so that they sort as strings.
//
// The session meta item carries the counters, the turn lease (lease_owner,
// lease_until), the abort flag and the message commit marker msg_seq; the
// append protocol is described on AppendMessages. ListSessions is one GSI1
// query, descending: pinned ("1" sorts after "0") first, then updated_at,
// then thread id; every update of updated_at or pinned rewrites GSI1SK in
// the same UpdateItem. The meta item also carries the session's copilot
// mode as its own attribute copilot_mode (the metadata is an opaque JSON
// blob), which a filtered listing matches with a FilterExpression.
//
// API keys are stored twice: the user's item for listing and revocation,
// and a lookup item keyed by the secret's hash, read with a strongly
// consistent GetItem on every authentication (a GSI would be eventually
// consistent, so a revoked key could keep working for a moment). The user's
// item is written first and the lookup item revoked first, so that a
// half-done create leaves a listed key that does not authenticate, and a
// half-done revoke a key that no longer authenticates.
//
// An LLM configuration item holds its Config as JSON text (so numbers and
// extra keys round-trip exactly as encoding/json writes and reads them)
// and a version that every update increments under a condition on the
// expected version. The owner's default is a single pointer item, written
// with one PutItem and removed with one DeleteItem conditioned on the
// configuration it names, so there is at most one default per owner
// without transactions; see llmconfigs.go.
//
// A device lock item (store.DeviceLocks) is written with a PutItem
// conditioned on its absence, its owner or its expiry, and deleted with a
// DeleteItem conditioned on its owner; it carries the epoch seconds
// attribute ttl (the table's TimeToLiveSpecification), an hour after its
// expiry, so that DynamoDB eventually removes abandoned locks. See
// devicelocks.go. The turn slots of a user (store.TurnSlots) are items of
// the same shape in the user's partition; see turnslots.go.
package dynamo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"agentchat/internal/store"
	"agentchat/internal/telemetry"
)

// Attribute and index names of the table.
const (
	attrPK     = "PK"
	attrSK     = "SK"
	attrGSI1PK = "GSI1PK"
	attrGSI1SK = "GSI1SK"
	// IndexGSI1 is the name of the global secondary index.
	IndexGSI1 = "GSI1"
)

// DefaultAppendStallTimeout is how long an append waits for an earlier,
// uncommitted append of the same session to make progress before it
// declares that append dead and skips its sequence numbers.
const DefaultAppendStallTimeout = 10 * time.Second

// Options configure New.
type Options struct {
	// TableName is the DynamoDB table (required).
	TableName string
	// Endpoint overrides the service endpoint, for emulators such as
	// dynalite or DynamoDB Local ("http://127.0.0.1:8000"). With an
	// endpoint, the EC2 metadata service is not consulted and, when no
	// credentials are configured, static dummy credentials are used.
	Endpoint string
	// Region overrides the region of the shared AWS configuration. With an
	// endpoint and no region anywhere, "us-east-1" is used.
	Region string
	// AppendStallTimeout overrides DefaultAppendStallTimeout.
	AppendStallTimeout time.Duration
	// Logger receives warnings (skipped dead appends); slog.Default() when nil.
	Logger *slog.Logger
	// Limits cap what one owner may hold (see limits.go); zero: no caps.
	Limits store.Limits
}

// Store is a store.Store on one DynamoDB table. It is safe for concurrent
// use.
type Store struct {
	client       *dynamodb.Client
	table        string
	stallTimeout time.Duration
	log          *slog.Logger
	// clock is the time of leases and abort requests (lease_until,
	// abort_at); tests replace it to move time forward.
	clock func() time.Time
	// limits cap what one owner may hold (Options.Limits).
	limits store.Limits
	// turnEpochs caches the session epochs of running turns (turnlog.go).
	turnEpochs turnEpochs
	// leaseSeqs holds the seqs reserved with the leases of running turns
	// and not used yet (leaseseq.go).
	leaseSeqs leaseSeqs
	// turnBlobs encodes (and compresses) the batches of turn logs.
	turnBlobs store.TurnBlobs
	// deflaters compresses the text of message items (deflate.go).
	deflater store.Deflater
}

var _ store.Store = (*Store)(nil)

// New loads the AWS configuration (config.LoadDefaultConfig: environment,
// shared files, instance or task role) and returns a store on
// opts.TableName. It does not create the table; see CreateTable.
func New(ctx context.Context, opts Options) (*Store, error) {
	if opts.TableName == "" {
		return nil, errors.New("dynamo: table name is required")
	}
	var loadOpts []func(*config.LoadOptions) error
	if opts.Region != "" {
		loadOpts = append(loadOpts, config.WithRegion(opts.Region))
	}
	if opts.Endpoint != "" {
		loadOpts = append(loadOpts, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("dynamo: load AWS config: %w", err)
	}
	if opts.Endpoint != "" {
		if cfg.Region == "" {
			cfg.Region = "us-east-1"
		}
		if !hasCredentials(ctx, cfg) {
			cfg.Credentials = credentials.NewStaticCredentialsProvider("local", "local", "")
		}
	}
	if cfg.Region == "" {
		return nil, errors.New("dynamo: no AWS region configured (set AWS_REGION)")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = awshttp.NewBuildableClient()
	}
	// A span per request when the caller's context is traced (nothing
	// otherwise): see telemetry.AWSClient.
	cfg.HTTPClient = telemetry.AWSClient(cfg.HTTPClient, "DynamoDB")
	client := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
		}
	})
	s := NewFromClient(client, opts.TableName)
	if opts.AppendStallTimeout > 0 {
		s.stallTimeout = opts.AppendStallTimeout
	}
	if opts.Logger != nil {
		s.log = opts.Logger
	}
	s.limits = opts.Limits
	return s, nil
}

// hasCredentials reports whether cfg resolves credentials (quickly: it is
// only called with the instance metadata service disabled).
func hasCredentials(ctx context.Context, cfg aws.Config) bool {
	if cfg.Credentials == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	creds, err := cfg.Credentials.Retrieve(ctx)
	return err == nil && creds.HasKeys()
}

// NewFromClient returns a store on table using client, with the default
// options.
func NewFromClient(client *dynamodb.Client, table string) *Store {
	return &Store{
		client:       client,
		table:        table,
		stallTimeout: DefaultAppendStallTimeout,
		log:          slog.Default(),
		clock:        time.Now,
	}
}

// Close releases nothing: the client holds no resources that need closing.
func (s *Store) Close() error { return nil }

// CreateTable creates the table with its keys and GSI1, on-demand billing,
// and waits until the table and the index are ACTIVE. A table that already
// exists is not an error.
func (s *Store) CreateTable(ctx context.Context) error {
	str := types.ScalarAttributeTypeS
	_, err := s.client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(s.table),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(attrPK), AttributeType: str},
			{AttributeName: aws.String(attrSK), AttributeType: str},
			{AttributeName: aws.String(attrGSI1PK), AttributeType: str},
			{AttributeName: aws.String(attrGSI1SK), AttributeType: str},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(attrPK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(attrSK), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName: aws.String(IndexGSI1),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(attrGSI1PK), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(attrGSI1SK), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("create table %s: %w", s.table, err)
	}
	delay := 20 * time.Millisecond
	for {
		out, err := s.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.table)})
		if err != nil {
			return fmt.Errorf("describe table %s: %w", s.table, err)
		}
		if tableActive(out.Table) {
			return nil
		}
		if err := sleep(ctx, delay); err != nil {
			return fmt.Errorf("wait for table %s: %w", s.table, err)
		}
		delay = min(2*delay, 2*time.Second)
	}
}

// tableActive reports whether the table and all its indexes are ACTIVE.
func tableActive(t *types.TableDescription) bool {
	if t == nil || t.TableStatus != types.TableStatusActive {
		return false
	}
	for _, g := range t.GlobalSecondaryIndexes {
		if g.IndexStatus != types.IndexStatusActive {
			return false
		}
	}
	return true
}

// ---- keys ----

// keyEscaper escapes the separator of composite keys.
var keyEscaper = strings.NewReplacer("%", "%25", "#", "%23")

func esc(s string) string { return keyEscaper.Replace(s) }

func sessionPK(project, thread string) string {
	return "P#" + esc(project) + "#T#" + esc(thread)
}

func projectGSI1PK(project string) string { return "P#" + esc(project) }

func userGSI1Prefix(user string) string { return "U#" + esc(user) + "#" }

func sessionGSI1SK(user string, pinned bool, updated time.Time, thread string) string {
	pin := "0"
	if pinned {
		pin = "1"
	}
	return userGSI1Prefix(user) + "PIN#" + pin + "#UPD#" + fmtTime(updated) + "#T#" + esc(thread)
}

const metaSK = "META"

// msgPrefix starts the sort key of every message item.
const msgPrefix = "MSG#"

func msgSK(seq int64) string { return fmt.Sprintf("%s%010d", msgPrefix, seq) }

func partSK(seq int64, part int) string { return fmt.Sprintf("%s#P%04d", msgSK(seq), part) }

func userPK(user string) string { return "U#" + esc(user) }

func apiKeySK(id string) string { return "APIKEY#" + esc(id) }

func keyHashPK(hash string) string { return "KEYHASH#" + esc(hash) }

const keyHashSK = "KEY"

// ---- time ----

// timeLayout is fixed width for years 0000..9999, so strings sort as times.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

// now returns the current time in UTC without a monotonic reading.
func now() time.Time { return time.Now().UTC().Round(0) }

// ---- attribute values ----

type item = map[string]types.AttributeValue

func avS(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func avN(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func avBool(b bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: b} }

func keyOf(pk, sk string) item { return item{attrPK: avS(pk), attrSK: avS(sk)} }

func getS(it item, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func getN(it item, name string) (int64, error) {
	v, ok := it[name]
	if !ok {
		return 0, nil
	}
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("attribute %s is %T, want a number", name, v)
	}
	x, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("attribute %s: %w", name, err)
	}
	return x, nil
}

func getBool(it item, name string) bool {
	v, ok := it[name].(*types.AttributeValueMemberBOOL)
	return ok && v.Value
}

func getB(it item, name string) []byte {
	if v, ok := it[name].(*types.AttributeValueMemberB); ok {
		return v.Value
	}
	return nil
}

// getTime parses an optional timestamp attribute (absent: zero time).
func getTime(it item, name string) (time.Time, error) {
	s := getS(it, name)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := parseTime(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("attribute %s: %w", name, err)
	}
	return t, nil
}

// putTime sets an optional timestamp attribute (zero: absent).
func putTime(it item, name string, t time.Time) {
	if !t.IsZero() {
		it[name] = avS(fmtTime(t))
	}
}

// ---- errors and helpers ----

func isConditionFailed(err error) bool {
	var cf *types.ConditionalCheckFailedException
	return errors.As(err, &cf)
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// checkKey rejects keys with empty parts: such a session cannot exist.
func checkKey(k store.Key) error {
	if k.ProjectID == "" || k.UserID == "" || k.ThreadID == "" {
		return fmt.Errorf("session %+v: %w", k, store.ErrNotFound)
	}
	return nil
}

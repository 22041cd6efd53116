// Package config turns the process environment into a typed, validated
// Config. Load checks every variable at once and reports one line per
// problem; secrets never appear in an error, in String or in a log record.
package config

import (
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"agentchat/internal/idsyntax"
	"agentchat/internal/pricing"
)

// Store kinds accepted in STORE.
const (
	StoreSQLite   = "sqlite"
	StoreDynamoDB = "dynamodb"
)

// Defaults and limits.
const (
	// DefaultAddr is the local server's listen address.
	DefaultAddr = "127.0.0.1:8080"
	// DefaultDataDir is where the local SQLite file lives.
	DefaultDataDir = "./.data"
	// DefaultLambdaDataDir is the only writable place inside AWS Lambda.
	DefaultLambdaDataDir = "/tmp/agentchat"
	// DefaultOpenAIModel is used when an LLM is configured (OPENAI_API_KEY
	// or OPENAI_BASE_URL set) but OPENAI_MODEL is not.
	DefaultOpenAIModel = "gpt-4o-mini"
	// DefaultHeartbeat is the idle gap before an SSE heartbeat.
	DefaultHeartbeat = 15 * time.Second
	// DefaultMaxSteps bounds the LLM calls of one turn.
	DefaultMaxSteps = 25
	// DefaultToolTimeout bounds one tool execution.
	DefaultToolTimeout = 60 * time.Second
	// DefaultTurnTimeout bounds one whole turn.
	DefaultTurnTimeout = 600 * time.Second
	// DefaultTurnLease is how long a turn's session lease lasts without
	// renewal: the time after which the session of a crashed turn is free
	// again (a live turn renews its lease every third of it).
	DefaultTurnLease = 60 * time.Second
	// DefaultLLMTimeout bounds a streamed LLM call until its first token
	// and a non-streamed one as a whole.
	DefaultLLMTimeout = 120 * time.Second
	// DefaultLLMIdleTimeout bounds the silence between two chunks of a
	// streamed LLM call once it has started (LLM_TIMEOUT_SECONDS when that
	// is shorter).
	DefaultLLMIdleTimeout = 60 * time.Second

	// MinJWTSecretLen is the shortest JWT_SECRET accepted (HS256 wants a
	// key at least as long as its 32-byte output).
	MinJWTSecretLen = 32
	// MinAdminTokenLen is the shortest ADMIN_TOKEN accepted.
	MinAdminTokenLen = 32
	// EncryptionKeyLen is the decoded length of ENCRYPTION_KEY.
	EncryptionKeyLen = 32
	// MaxSeconds bounds every *_SECONDS variable (one day).
	MaxSeconds = 86400
	// MaxMaxSteps bounds MAX_STEPS.
	MaxMaxSteps = 10000
	// DefaultMaxTurnsPerUser is how many turns one user may run at once.
	DefaultMaxTurnsPerUser = 8
	// MaxMaxTurnsPerUser bounds MAX_TURNS_PER_USER.
	MaxMaxTurnsPerUser = 1000
	// DefaultLLMMaxAnswerBytes caps one LLM answer (content plus tool-call
	// arguments of one call).
	DefaultLLMMaxAnswerBytes = 1 << 20
	// DefaultToolMaxOutputBytes caps one tool output.
	DefaultToolMaxOutputBytes = 64 << 10
	// MaxByteLimit bounds LLM_MAX_ANSWER_BYTES and TOOL_MAX_OUTPUT_BYTES.
	MaxByteLimit = 1 << 30
	// DefaultMaxSessionsPerUser caps the chat sessions one user owns.
	DefaultMaxSessionsPerUser = 10000
	// DefaultMaxLLMConfigsPerUser caps the LLM configurations one user owns.
	DefaultMaxLLMConfigsPerUser = 100
	// DefaultMaxAPIKeysPerUser caps the API keys one user owns.
	DefaultMaxAPIKeysPerUser = 100
	// MaxPerUserLimit bounds the MAX_*_PER_USER resource limits.
	MaxPerUserLimit = 10000000
)

// Config is the validated configuration of one agentchat process.
type Config struct {
	// Addr is the local server's listen address (ADDR).
	Addr string
	// DataDir holds the SQLite file and, locally, the generated
	// encryption key (DATA_DIR).
	DataDir string
	// Store is StoreSQLite or StoreDynamoDB (STORE).
	Store string
	// TableName is the DynamoDB table (TABLE_NAME), required with dynamodb.
	TableName string
	// DynamoDBEndpoint overrides the DynamoDB endpoint, for emulators
	// (DYNAMODB_ENDPOINT).
	DynamoDBEndpoint string
	// AWSRegion is AWS_REGION, else AWS_DEFAULT_REGION.
	AWSRegion string

	// OpenAIAPIKey is the server-wide LLM key (OPENAI_API_KEY). Secret.
	OpenAIAPIKey string
	// OpenAIBaseURL points at any OpenAI-compatible server (OPENAI_BASE_URL);
	// empty means the OpenAI API.
	OpenAIBaseURL string
	// OpenAIModel is the default model (OPENAI_MODEL); DefaultOpenAIModel
	// when an LLM is configured without one, empty otherwise.
	OpenAIModel string
	// OpenAIPrices are the default model's prices (OPENAI_PRICES, a JSON
	// object of input_cost_per_mtok, output_cost_per_mtok and
	// cached_input_cost_per_mtok in USD per million tokens); unknown when
	// unset, and its calls are then never priced.
	OpenAIPrices pricing.Prices

	// JWTSecret is the HS256 secret shared with the GNS3 controller
	// (JWT_SECRET). Nil means local single-user mode. Secret.
	JWTSecret []byte
	// AdminToken guards administrative operations (ADMIN_TOKEN); empty
	// disables them. Secret.
	AdminToken string

	// Snapshots is SNAPSHOTS (on, the default, or off): a GNS3 project
	// snapshot before the first lab change of a lab-automation turn, and
	// the undo route that restores it.
	Snapshots bool

	// TurnLog is TURN_LOG (on: the default, or off): the events of every
	// streamed project chat turn are logged in the store for an hour, a
	// client can rejoin a session's stream (GET .../sessions/{id}/stream)
	// after a network drop or from a second tab, and a turn goes on when
	// its client leaves (unless the request says on_disconnect: cancel).
	TurnLog bool

	// Metrics is METRICS (on, or off: the default): the local server
	// counts turns, LLM calls, tool calls, open streams and refusals and
	// answers them as Prometheus text at GET /metrics.
	Metrics bool

	// GNS3URL is the GNS3 controller base URL (GNS3_URL); empty means every
	// project counts as opened and the GNS3 tools report "GNS3 not configured".
	GNS3URL string
	// BlockedCommands are the command prefixes the console tools never send
	// (BLOCKED_COMMANDS, comma-separated); nil: the tools' defaults, empty
	// and not nil (BLOCKED_COMMANDS set to "none"): nothing is blocked.
	BlockedCommands []string
	// SeerrURL is the Overseerr/Jellyseerr base URL (SEERR_URL).
	SeerrURL string
	// SeerrAPIKey is sent as X-Api-Key to Seerr (SEERR_API_KEY). Secret.
	SeerrAPIKey string

	// EncryptionKey is the decoded 32-byte key of ENCRYPTION_KEY, or nil
	// when unset (then generated into DataDir locally). Secret.
	EncryptionKey []byte
	// EncryptionKeysPrevious are the decoded 32-byte keys of
	// ENCRYPTION_KEY_PREVIOUS, a comma-separated list of base64 keys that
	// still open what they sealed before a rotation (nothing is sealed
	// with them); nil when unset. Secret.
	EncryptionKeysPrevious [][]byte

	// Heartbeat is the idle gap before an SSE heartbeat (HEARTBEAT_SECONDS).
	Heartbeat time.Duration
	// LogLevel is LOG_LEVEL (debug, info, warn, error; default info).
	LogLevel slog.Level
	// MaxSteps bounds the LLM calls of one turn (MAX_STEPS).
	MaxSteps int
	// MaxTurnsPerUser caps the turns (project chat and /v1 together) one
	// user runs at once on all instances (MAX_TURNS_PER_USER); one more
	// is answered 429.
	MaxTurnsPerUser int
	// ToolTimeout bounds one tool run (TOOL_TIMEOUT_SECONDS).
	ToolTimeout time.Duration
	// TurnTimeout bounds one turn (TURN_TIMEOUT_SECONDS).
	TurnTimeout time.Duration
	// TurnLease is the lifetime of a turn's session lease, renewed while
	// the turn runs (TURN_LEASE_SECONDS): a session whose turn crashed is
	// free again after it (or AbortGrace after an abort).
	TurnLease time.Duration
	// LLMTimeout bounds a streamed LLM call until its first token and a
	// non-streamed one as a whole (LLM_TIMEOUT_SECONDS).
	LLMTimeout time.Duration
	// LLMIdleTimeout bounds the silence between two chunks of a streamed
	// LLM call once its first token arrived (LLM_IDLE_TIMEOUT_SECONDS).
	LLMIdleTimeout time.Duration

	// LLMAllowPrivateHosts are the CIDRs and host names a user's own LLM
	// configuration may reach although they are loopback, private,
	// link-local or otherwise not public (LLM_ALLOW_PRIVATE_HOSTS,
	// comma-separated), e.g. an on-premises Ollama. The server-wide
	// OPENAI_BASE_URL is trusted and needs no entry.
	LLMAllowPrivateHosts HostAllowList
	// LLMMaxAnswerBytes caps one LLM answer, content plus tool-call
	// arguments of one call (LLM_MAX_ANSWER_BYTES).
	LLMMaxAnswerBytes int
	// ToolMaxOutputBytes caps one tool output (TOOL_MAX_OUTPUT_BYTES).
	ToolMaxOutputBytes int
	// ConsoleAllowedHosts are the console hosts, besides the GNS3 host,
	// that the console tools may connect to (CONSOLE_ALLOWED_HOSTS).
	ConsoleAllowedHosts HostAllowList
	// MaxSessionsPerUser caps the chat sessions one user owns
	// (MAX_SESSIONS_PER_USER).
	MaxSessionsPerUser int
	// MaxLLMConfigsPerUser caps the LLM configurations one user owns
	// (MAX_LLM_CONFIGS_PER_USER).
	MaxLLMConfigsPerUser int
	// MaxAPIKeysPerUser caps the API keys one user owns
	// (MAX_API_KEYS_PER_USER).
	MaxAPIKeysPerUser int
	// SkillsDir is a directory in the GNS3 skills repository's layout
	// whose device and injection skills add to or override the built-in
	// ones (SKILLS_DIR); empty: the built-in skills only.
	SkillsDir string
}

// Defaults are the values that differ between the local server and AWS
// Lambda. Empty fields fall back to the local defaults.
type Defaults struct {
	// Store is the STORE used when the variable is unset.
	Store string
	// Addr is the ADDR used when the variable is unset.
	Addr string
	// DataDir is the DATA_DIR used when the variable is unset.
	DataDir string
}

// LocalDefaults are the defaults of the local server: SQLite in ./.data,
// listening on 127.0.0.1:8080.
func LocalDefaults() Defaults {
	return Defaults{Store: StoreSQLite, Addr: DefaultAddr, DataDir: DefaultDataDir}
}

// LambdaDefaults are the defaults inside AWS Lambda: DynamoDB, and /tmp for
// anything written to disk.
func LambdaDefaults() Defaults {
	return Defaults{Store: StoreDynamoDB, Addr: DefaultAddr, DataDir: DefaultLambdaDataDir}
}

// Problem is one invalid variable.
type Problem struct {
	// Var is the environment variable at fault.
	Var string
	// Message says what is wrong, without the value of a secret.
	Message string
}

// ValidationError lists every problem Load found.
type ValidationError struct {
	Problems []Problem
}

// Error returns one line per problem.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("invalid configuration:")
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.Var)
		b.WriteString(": ")
		b.WriteString(p.Message)
	}
	return b.String()
}

// loader accumulates problems while reading variables.
type loader struct {
	getenv   func(string) string
	problems []Problem
}

func (l *loader) fail(name, format string, args ...any) {
	l.problems = append(l.problems, Problem{Var: name, Message: fmt.Sprintf(format, args...)})
}

// str returns the trimmed value of name.
// onOff reads a switch: on, true or 1; off, false or 0; unset: def.
func (l *loader) onOff(name string, def bool) bool {
	switch v := strings.ToLower(l.str(name)); v {
	case "":
		return def
	case "on", "true", "1":
		return true
	case "off", "false", "0":
		return false
	default:
		l.fail(name, "must be on or off, got %s", quote(v))
		return def
	}
}

func (l *loader) str(name string) string {
	return strings.TrimSpace(l.getenv(name))
}

// seconds reads a whole positive number of seconds, def when unset.
func (l *loader) seconds(name string, def time.Duration) time.Duration {
	v := l.str(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		l.fail(name, "%s is not a whole number of seconds", quote(v))
		return def
	}
	if n <= 0 || n > MaxSeconds {
		l.fail(name, "must be between 1 and %d seconds, got %d", MaxSeconds, n)
		return def
	}
	return time.Duration(n) * time.Second
}

// count reads a whole number between lo and hi, def when unset; what
// names the quantity in a problem.
func (l *loader) count(name string, def, lo, hi int, what string) int {
	v := l.str(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	switch {
	case err != nil:
		l.fail(name, "%s is not a whole number (the %s)", quote(v), what)
		return def
	case n < lo || n > hi:
		l.fail(name, "must be between %d and %d (the %s), got %d", lo, hi, what, n)
		return def
	}
	return n
}

// hostAllowList reads a comma-separated list of CIDRs, IP addresses and
// host names.
func (l *loader) hostAllowList(name string) HostAllowList {
	v := l.str(name)
	if v == "" {
		return HostAllowList{}
	}
	list, err := ParseHostAllowList(v)
	if err != nil {
		l.fail(name, "%v", err)
		return HostAllowList{}
	}
	return list
}

// httpURL reads an optional http(s) base URL without a trailing slash. The
// value is never echoed: a URL may carry credentials.
func (l *loader) httpURL(name string) string {
	v := l.str(name)
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.Opaque != "" {
		l.fail(name, "must be an http:// or https:// URL with a host")
		return ""
	}
	if u.Fragment != "" || u.RawQuery != "" || u.ForceQuery {
		l.fail(name, "must be a base URL without query or fragment")
		return ""
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			l.fail(name, "has an invalid port")
			return ""
		}
	}
	return strings.TrimRight(v, "/")
}

// quote quotes a non-secret value for an error message, shortened.
func quote(v string) string {
	const max = 64
	if len(v) > max {
		v = v[:max] + "..."
	}
	return strconv.Quote(v)
}

// tableNameChars are the bytes of a DynamoDB table name (3 to 255 of them).
var tableNameChars = idsyntax.NewSet(true, "_.-")

// Load reads the configuration through getenv (os.Getenv in production, a
// map in tests) and validates all of it. On any problem it returns a
// *ValidationError listing every one. An LLM is configured when
// OPENAI_API_KEY or OPENAI_BASE_URL is set; OPENAI_MODEL then defaults to
// DefaultOpenAIModel.
func Load(getenv func(string) string, defaults Defaults) (*Config, error) {
	if getenv == nil {
		return nil, errors.New("config: nil getenv")
	}
	local := LocalDefaults()
	if defaults.Store == "" {
		defaults.Store = local.Store
	}
	if defaults.Addr == "" {
		defaults.Addr = local.Addr
	}
	if defaults.DataDir == "" {
		defaults.DataDir = local.DataDir
	}
	l := &loader{getenv: getenv}
	c := &Config{}

	c.Addr = l.str("ADDR")
	if c.Addr == "" {
		c.Addr = defaults.Addr
	}
	if err := checkAddr(c.Addr); err != nil {
		l.fail("ADDR", "%v", err)
	}
	c.DataDir = l.str("DATA_DIR")
	if c.DataDir == "" {
		c.DataDir = defaults.DataDir
	}

	c.Store = strings.ToLower(l.str("STORE"))
	if c.Store == "" {
		c.Store = defaults.Store
	}
	c.TableName = l.str("TABLE_NAME")
	c.DynamoDBEndpoint = l.httpURL("DYNAMODB_ENDPOINT")
	c.AWSRegion = l.str("AWS_REGION")
	if c.AWSRegion == "" {
		c.AWSRegion = l.str("AWS_DEFAULT_REGION")
	}
	switch c.Store {
	case StoreSQLite:
	case StoreDynamoDB:
		if c.TableName == "" {
			l.fail("TABLE_NAME", "is required when STORE=dynamodb")
		}
	default:
		l.fail("STORE", "must be %q or %q, got %s", StoreSQLite, StoreDynamoDB, quote(c.Store))
	}
	if c.TableName != "" && !tableNameChars.All(c.TableName, 3, 255) {
		l.fail("TABLE_NAME", "must be 3 to 255 characters among letters, digits, '_', '-' and '.'")
	}

	c.OpenAIAPIKey = l.str("OPENAI_API_KEY")
	c.OpenAIBaseURL = l.httpURL("OPENAI_BASE_URL")
	c.OpenAIModel = l.str("OPENAI_MODEL")
	if c.OpenAIModel == "" && c.LLMConfigured() {
		c.OpenAIModel = DefaultOpenAIModel
	}
	if p, err := pricing.Parse(l.getenv("OPENAI_PRICES")); err != nil {
		l.fail("OPENAI_PRICES", "%v", err)
	} else {
		c.OpenAIPrices = p
	}

	if s := l.getenv("JWT_SECRET"); s != "" {
		if len(s) < MinJWTSecretLen {
			l.fail("JWT_SECRET", "must be at least %d bytes long, got %d", MinJWTSecretLen, len(s))
		}
		c.JWTSecret = []byte(s)
	}
	c.AdminToken = l.str("ADMIN_TOKEN")
	if c.AdminToken != "" && len(c.AdminToken) < MinAdminTokenLen {
		l.fail("ADMIN_TOKEN", "must be at least %d bytes long, got %d", MinAdminTokenLen, len(c.AdminToken))
	}

	c.GNS3URL = l.httpURL("GNS3_URL")
	c.Snapshots = l.onOff("SNAPSHOTS", true)
	c.TurnLog = l.onOff("TURN_LOG", true)
	c.Metrics = l.onOff("METRICS", false)
	c.BlockedCommands = blockedCommands(l.str("BLOCKED_COMMANDS"))
	c.SeerrURL = l.httpURL("SEERR_URL")
	c.SeerrAPIKey = l.str("SEERR_API_KEY")
	switch {
	case l.str("SEERR_URL") != "" && c.SeerrAPIKey == "":
		l.fail("SEERR_API_KEY", "is required when SEERR_URL is set")
	case l.str("SEERR_URL") == "" && c.SeerrAPIKey != "":
		l.fail("SEERR_URL", "is required when SEERR_API_KEY is set")
	}

	if v := l.str("ENCRYPTION_KEY"); v != "" {
		if key, msg := checkKey(v); msg != "" {
			l.fail("ENCRYPTION_KEY", "%s", msg)
		} else {
			c.EncryptionKey = key
		}
	}
	if v := l.str("ENCRYPTION_KEY_PREVIOUS"); v != "" {
		entries := strings.Split(v, ",")
		for i, e := range entries {
			key, msg := checkKey(strings.TrimSpace(e))
			if msg != "" {
				if len(entries) > 1 {
					msg = fmt.Sprintf("key %d of %d %s", i+1, len(entries), msg)
				}
				l.fail("ENCRYPTION_KEY_PREVIOUS", "%s", msg)
				continue
			}
			c.EncryptionKeysPrevious = append(c.EncryptionKeysPrevious, key)
		}
	}

	c.Heartbeat = l.seconds("HEARTBEAT_SECONDS", DefaultHeartbeat)
	c.ToolTimeout = l.seconds("TOOL_TIMEOUT_SECONDS", DefaultToolTimeout)
	c.TurnTimeout = l.seconds("TURN_TIMEOUT_SECONDS", DefaultTurnTimeout)
	c.TurnLease = l.seconds("TURN_LEASE_SECONDS", DefaultTurnLease)
	c.LLMTimeout = l.seconds("LLM_TIMEOUT_SECONDS", DefaultLLMTimeout)
	c.LLMIdleTimeout = l.seconds("LLM_IDLE_TIMEOUT_SECONDS", min(DefaultLLMIdleTimeout, c.LLMTimeout))

	c.MaxSteps = DefaultMaxSteps
	if v := l.str("MAX_STEPS"); v != "" {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			l.fail("MAX_STEPS", "%s is not a whole number", quote(v))
		case n < 1 || n > MaxMaxSteps:
			l.fail("MAX_STEPS", "must be between 1 and %d, got %d", MaxMaxSteps, n)
		default:
			c.MaxSteps = n
		}
	}

	c.MaxTurnsPerUser = DefaultMaxTurnsPerUser
	if v := l.str("MAX_TURNS_PER_USER"); v != "" {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			l.fail("MAX_TURNS_PER_USER", "%s is not a whole number (the turns one user may run at once)", quote(v))
		case n < 1 || n > MaxMaxTurnsPerUser:
			l.fail("MAX_TURNS_PER_USER", "must be between 1 and %d (the turns one user may run at once), got %d", MaxMaxTurnsPerUser, n)
		default:
			c.MaxTurnsPerUser = n
		}
	}

	c.LLMAllowPrivateHosts = l.hostAllowList("LLM_ALLOW_PRIVATE_HOSTS")
	c.ConsoleAllowedHosts = l.hostAllowList("CONSOLE_ALLOWED_HOSTS")
	c.LLMMaxAnswerBytes = l.count("LLM_MAX_ANSWER_BYTES", DefaultLLMMaxAnswerBytes, 1024, MaxByteLimit, "bytes of one LLM answer")
	c.ToolMaxOutputBytes = l.count("TOOL_MAX_OUTPUT_BYTES", DefaultToolMaxOutputBytes, 256, MaxByteLimit, "bytes of one tool output")
	c.MaxSessionsPerUser = l.count("MAX_SESSIONS_PER_USER", DefaultMaxSessionsPerUser, 1, MaxPerUserLimit, "chat sessions one user may own")
	c.MaxLLMConfigsPerUser = l.count("MAX_LLM_CONFIGS_PER_USER", DefaultMaxLLMConfigsPerUser, 1, MaxPerUserLimit, "LLM configurations one user may own")
	c.MaxAPIKeysPerUser = l.count("MAX_API_KEYS_PER_USER", DefaultMaxAPIKeysPerUser, 1, MaxPerUserLimit, "API keys one user may own")
	c.SkillsDir = l.str("SKILLS_DIR")

	c.LogLevel = slog.LevelInfo
	if v := l.str("LOG_LEVEL"); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			l.fail("LOG_LEVEL", "must be debug, info, warn or error, got %s", quote(v))
			c.LogLevel = slog.LevelInfo
		}
	}

	if len(l.problems) > 0 {
		return nil, &ValidationError{Problems: l.problems}
	}
	return c, nil
}

// checkKey decodes one base64 encryption key; on failure it returns the
// problem, without the value ("is not valid base64", "must decode to 32
// bytes, got 16", "is empty").
func checkKey(v string) ([]byte, string) {
	if v == "" {
		return nil, "is empty"
	}
	key, err := decodeKey(v)
	switch {
	case err != nil:
		return nil, "is not valid base64"
	case len(key) != EncryptionKeyLen:
		return nil, fmt.Sprintf("must decode to %d bytes, got %d", EncryptionKeyLen, len(key))
	}
	return key, ""
}

// decodeKey accepts standard or URL-safe base64, padded or not.
func decodeKey(v string) ([]byte, error) {
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		var b []byte
		if b, err = enc.DecodeString(v); err == nil {
			return b, nil
		}
	}
	return nil, err
}

// checkAddr checks that addr is host:port with a numeric port.
func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s is not a host:port listen address", quote(addr))
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%s has an invalid port", quote(addr))
	}
	return nil
}

// CheckLoopback refuses a listen address that is not a loopback address
// (127.0.0.0/8, ::1 or "localhost"). The local server calls it in
// single-user mode, where anyone who can reach the port is the user; an
// empty host (":8080") or 0.0.0.0 listens on every interface and is refused.
func CheckLoopback(addr string) error {
	if err := checkAddr(addr); err != nil {
		return fmt.Errorf("ADDR: %w", err)
	}
	host, _, _ := net.SplitHostPort(addr)
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.WithZone("").IsLoopback() {
		return nil
	}
	return fmt.Errorf("ADDR: refusing to listen on %s without JWT_SECRET: single-user mode only binds a loopback address "+
		"(127.0.0.1, ::1 or localhost); set JWT_SECRET to serve other machines", quote(addr))
}

// SingleUser reports local single-user mode (no JWT_SECRET).
func (c Config) SingleUser() bool { return len(c.JWTSecret) == 0 }

// LLMConfigured reports whether a server-wide LLM is configured.
func (c Config) LLMConfigured() bool { return c.OpenAIAPIKey != "" || c.OpenAIBaseURL != "" }

// GNS3Configured reports whether a GNS3 controller is configured.
func (c Config) GNS3Configured() bool { return c.GNS3URL != "" }

// blockedCommands parses BLOCKED_COMMANDS: unset is nil (the defaults),
// "none" an empty list, else the comma-separated prefixes, trimmed.
func blockedCommands(v string) []string {
	if v == "" {
		return nil
	}
	if strings.EqualFold(v, "none") {
		return []string{}
	}
	out := []string{}
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// SeerrConfigured reports whether Seerr is configured for the media agent.
func (c Config) SeerrConfigured() bool { return c.SeerrURL != "" && c.SeerrAPIKey != "" }

// Mode is "single-user" or "jwt", for the startup banner.
func (c Config) Mode() string {
	if c.SingleUser() {
		return "single-user"
	}
	return "jwt"
}

// redactURL hides the password of a URL.
func redactURL(v string) string {
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil {
		return "[invalid]"
	}
	return u.Redacted()
}

func setOrUnset(secret bool) string {
	if secret {
		return "[set]"
	}
	return "[unset]"
}

// LogValue implements slog.LogValuer: every field, secrets reduced to
// "[set]" or "[unset]" and URL passwords masked.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("addr", c.Addr),
		slog.String("mode", c.Mode()),
		slog.String("data_dir", c.DataDir),
		slog.String("store", c.Store),
		slog.String("table_name", c.TableName),
		slog.String("dynamodb_endpoint", redactURL(c.DynamoDBEndpoint)),
		slog.String("aws_region", c.AWSRegion),
		slog.String("openai_api_key", setOrUnset(c.OpenAIAPIKey != "")),
		slog.String("openai_base_url", redactURL(c.OpenAIBaseURL)),
		slog.String("openai_model", c.OpenAIModel),
		slog.String("jwt_secret", setOrUnset(len(c.JWTSecret) > 0)),
		slog.String("admin_token", setOrUnset(c.AdminToken != "")),
		slog.String("gns3_url", redactURL(c.GNS3URL)),
		slog.Int("blocked_commands", len(c.BlockedCommands)),
		slog.String("seerr_url", redactURL(c.SeerrURL)),
		slog.String("seerr_api_key", setOrUnset(c.SeerrAPIKey != "")),
		slog.String("encryption_key", setOrUnset(len(c.EncryptionKey) > 0)),
		slog.String("encryption_keys_previous", setOrUnset(len(c.EncryptionKeysPrevious) > 0)),
		slog.Duration("heartbeat", c.Heartbeat),
		slog.String("log_level", c.LogLevel.String()),
		slog.Int("max_steps", c.MaxSteps),
		slog.Int("max_turns_per_user", c.MaxTurnsPerUser),
		slog.Duration("tool_timeout", c.ToolTimeout),
		slog.Duration("turn_timeout", c.TurnTimeout),
		slog.Duration("turn_lease", c.TurnLease),
		slog.Duration("llm_timeout", c.LLMTimeout),
		slog.Duration("llm_idle_timeout", c.LLMIdleTimeout),
		slog.String("llm_allow_private_hosts", c.LLMAllowPrivateHosts.String()),
		slog.Int("llm_max_answer_bytes", c.LLMMaxAnswerBytes),
		slog.Int("tool_max_output_bytes", c.ToolMaxOutputBytes),
		slog.String("console_allowed_hosts", c.ConsoleAllowedHosts.String()),
		slog.Int("max_sessions_per_user", c.MaxSessionsPerUser),
		slog.Int("max_llm_configs_per_user", c.MaxLLMConfigsPerUser),
		slog.Int("max_api_keys_per_user", c.MaxAPIKeysPerUser),
		slog.String("skills_dir", c.SkillsDir),
	)
}

// String renders the configuration like LogValue, secrets redacted.
func (c Config) String() string {
	var b strings.Builder
	b.WriteString("config{")
	for i, a := range c.LogValue().Group() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.Key)
		b.WriteByte('=')
		b.WriteString(a.Value.String())
	}
	b.WriteByte('}')
	return b.String()
}

// GoString keeps %#v from printing secrets.
func (c Config) GoString() string { return c.String() }

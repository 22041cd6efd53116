package config

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"agentchat/internal/pricing"
)

const (
	goodSecret = "0123456789abcdef0123456789abcdef-jwt"
	openAIKey  = "sk-test-openai-SECRETVALUE"
	seerrKey   = "seerr-SECRETVALUE"
	adminTok   = "admin-token-SECRETVALUE-0123456789abcdef"
)

var goodKey = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))

// prevKeys are two previous keys, as ENCRYPTION_KEY_PREVIOUS (with spaces
// around the comma) and decoded.
var (
	prevKeysEnv = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{8}, 32)) + " , " +
		base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{0xfe}, 32))
	prevKeys = [][]byte{bytes.Repeat([]byte{8}, 32), bytes.Repeat([]byte{0xfe}, 32)}
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadDefaults(t *testing.T) {
	tests := []struct {
		name     string
		defaults Defaults
		env      map[string]string
		want     Config
	}{
		{
			name:     "local, nothing set",
			defaults: LocalDefaults(),
			want: Config{
				Addr: DefaultAddr, DataDir: DefaultDataDir, Store: StoreSQLite,
				Heartbeat: 15 * time.Second, LogLevel: slog.LevelInfo, MaxSteps: 25,
				ToolTimeout: 60 * time.Second, TurnTimeout: 600 * time.Second, LLMTimeout: 120 * time.Second,
			},
		},
		{
			name:     "zero Defaults are the local ones",
			defaults: Defaults{},
			want: Config{
				Addr: DefaultAddr, DataDir: DefaultDataDir, Store: StoreSQLite,
				Heartbeat: 15 * time.Second, LogLevel: slog.LevelInfo, MaxSteps: 25,
				ToolTimeout: 60 * time.Second, TurnTimeout: 600 * time.Second, LLMTimeout: 120 * time.Second,
			},
		},
		{
			name:     "lambda uses dynamodb",
			defaults: LambdaDefaults(),
			env:      map[string]string{"TABLE_NAME": "agentchat-prod", "AWS_REGION": "eu-west-1", "JWT_SECRET": goodSecret},
			want: Config{
				Addr: DefaultAddr, DataDir: DefaultLambdaDataDir, Store: StoreDynamoDB, TableName: "agentchat-prod",
				AWSRegion: "eu-west-1", JWTSecret: []byte(goodSecret),
				Heartbeat: 15 * time.Second, LogLevel: slog.LevelInfo, MaxSteps: 25,
				ToolTimeout: 60 * time.Second, TurnTimeout: 600 * time.Second, LLMTimeout: 120 * time.Second,
			},
		},
		{
			name:     "everything set",
			defaults: LocalDefaults(),
			env: map[string]string{
				"ADDR": "[::1]:9000", "DATA_DIR": "/var/lib/agentchat", "STORE": " DynamoDB ",
				"TABLE_NAME": "chat", "DYNAMODB_ENDPOINT": "http://127.0.0.1:4567/", "AWS_DEFAULT_REGION": "us-east-1",
				"OPENAI_API_KEY": openAIKey, "OPENAI_BASE_URL": "http://localhost:11434/v1/", "OPENAI_MODEL": "llama3",
				"OPENAI_PRICES": `{"input_cost_per_mtok": 0.5, "output_cost_per_mtok": 1.5}`,
				"JWT_SECRET":    goodSecret, "ADMIN_TOKEN": adminTok, "GNS3_URL": "https://gns3.example.com:3080",
				"SEERR_URL": "http://seerr:5055", "SEERR_API_KEY": seerrKey, "ENCRYPTION_KEY": goodKey,
				"ENCRYPTION_KEY_PREVIOUS": prevKeysEnv, "HEARTBEAT_SECONDS": "5", "LOG_LEVEL": "debug", "MAX_STEPS": "7",
				"TOOL_TIMEOUT_SECONDS": "30", "TURN_TIMEOUT_SECONDS": "900", "LLM_TIMEOUT_SECONDS": "45",
			},
			want: Config{
				Addr: "[::1]:9000", DataDir: "/var/lib/agentchat", Store: StoreDynamoDB, TableName: "chat",
				DynamoDBEndpoint: "http://127.0.0.1:4567", AWSRegion: "us-east-1",
				OpenAIAPIKey: openAIKey, OpenAIBaseURL: "http://localhost:11434/v1", OpenAIModel: "llama3",
				OpenAIPrices: pricing.Prices{Known: true, Input: 0.5, Output: 1.5},
				JWTSecret:    []byte(goodSecret), AdminToken: adminTok, GNS3URL: "https://gns3.example.com:3080",
				SeerrURL: "http://seerr:5055", SeerrAPIKey: seerrKey, EncryptionKey: bytes.Repeat([]byte{7}, 32),
				EncryptionKeysPrevious: prevKeys, Heartbeat: 5 * time.Second, LogLevel: slog.LevelDebug, MaxSteps: 7,
				ToolTimeout: 30 * time.Second, TurnTimeout: 900 * time.Second, LLMTimeout: 45 * time.Second,
			},
		},
		{
			name:     "base URL without model gets the default model",
			defaults: LocalDefaults(),
			env:      map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"},
			want: Config{
				Addr: DefaultAddr, DataDir: DefaultDataDir, Store: StoreSQLite,
				OpenAIBaseURL: "http://127.0.0.1:8000/v1", OpenAIModel: DefaultOpenAIModel,
				Heartbeat: 15 * time.Second, LogLevel: slog.LevelInfo, MaxSteps: 25,
				ToolTimeout: 60 * time.Second, TurnTimeout: 600 * time.Second, LLMTimeout: 120 * time.Second,
			},
		},
		{
			name:     "unpadded url-safe encryption key, sqlite in lambda",
			defaults: LambdaDefaults(),
			env:      map[string]string{"STORE": "sqlite", "ENCRYPTION_KEY": base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 32)), "LOG_LEVEL": "WARN"},
			want: Config{
				Addr: DefaultAddr, DataDir: DefaultLambdaDataDir, Store: StoreSQLite, EncryptionKey: bytes.Repeat([]byte{0xfb}, 32),
				Heartbeat: 15 * time.Second, LogLevel: slog.LevelWarn, MaxSteps: 25,
				ToolTimeout: 60 * time.Second, TurnTimeout: 600 * time.Second, LLMTimeout: 120 * time.Second,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load(env(tt.env), tt.defaults)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			// Compare through %#v-free field dumps: GoString is redacted on purpose.
			if g, w := dump(*got), dump(tt.want); g != w {
				t.Errorf("Load mismatch\n got: %s\nwant: %s", g, w)
			}
		})
	}
}

// dump renders every field, secrets included, for test comparisons only.
func dump(c Config) string {
	return fmt.Sprintf("%q %q %q %q %q %q %q %q %q %q %q %q %q %q %x %x %v %v %d %v %v %v",
		c.Addr, c.DataDir, c.Store, c.TableName, c.DynamoDBEndpoint, c.AWSRegion,
		c.OpenAIAPIKey, c.OpenAIBaseURL, c.OpenAIModel, string(c.JWTSecret), c.AdminToken,
		c.GNS3URL, c.SeerrURL, c.SeerrAPIKey, c.EncryptionKey, c.EncryptionKeysPrevious, c.Heartbeat, c.LogLevel,
		c.MaxSteps, c.ToolTimeout, c.TurnTimeout, c.LLMTimeout)
}

func TestLoadProblems(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want []Problem // Var and a fragment of Message
	}{
		{"short JWT secret", map[string]string{"JWT_SECRET": "tooshort-SECRETVALUE"},
			[]Problem{{"JWT_SECRET", "at least 32 bytes"}}},
		{"unknown store", map[string]string{"STORE": "postgres"},
			[]Problem{{"STORE", `"postgres"`}}},
		{"dynamodb without table", map[string]string{"STORE": "dynamodb"},
			[]Problem{{"TABLE_NAME", "required when STORE=dynamodb"}}},
		{"bad table name", map[string]string{"STORE": "dynamodb", "TABLE_NAME": "a b"},
			[]Problem{{"TABLE_NAME", "3 to 255"}}},
		{"GNS3 URL without scheme", map[string]string{"GNS3_URL": "gns3.local:3080"},
			[]Problem{{"GNS3_URL", "http:// or https://"}}},
		{"GNS3 URL ftp", map[string]string{"GNS3_URL": "ftp://gns3.local"},
			[]Problem{{"GNS3_URL", "http:// or https://"}}},
		{"GNS3 URL without host", map[string]string{"GNS3_URL": "http://"},
			[]Problem{{"GNS3_URL", "with a host"}}},
		{"GNS3 URL with query", map[string]string{"GNS3_URL": "http://gns3?x=1"},
			[]Problem{{"GNS3_URL", "without query"}}},
		{"GNS3 URL bad port", map[string]string{"GNS3_URL": "http://gns3:99999"},
			[]Problem{{"GNS3_URL", "invalid port"}}},
		{"OpenAI base URL relative", map[string]string{"OPENAI_BASE_URL": "/v1"},
			[]Problem{{"OPENAI_BASE_URL", "with a host"}}},
		{"OpenAI prices half given", map[string]string{"OPENAI_PRICES": `{"input_cost_per_mtok": 1}`},
			[]Problem{{"OPENAI_PRICES", "both"}}},
		{"OpenAI prices negative", map[string]string{"OPENAI_PRICES": `{"input_cost_per_mtok": -1, "output_cost_per_mtok": 1}`},
			[]Problem{{"OPENAI_PRICES", "not a price"}}},
		{"dynamodb endpoint garbage", map[string]string{"DYNAMODB_ENDPOINT": "::nope"},
			[]Problem{{"DYNAMODB_ENDPOINT", "http://"}}},
		{"seerr URL without key", map[string]string{"SEERR_URL": "http://seerr:5055"},
			[]Problem{{"SEERR_API_KEY", "required when SEERR_URL"}}},
		{"seerr key without URL", map[string]string{"SEERR_API_KEY": seerrKey},
			[]Problem{{"SEERR_URL", "required when SEERR_API_KEY"}}},
		{"encryption key not base64", map[string]string{"ENCRYPTION_KEY": "not base64 SECRETVALUE!"},
			[]Problem{{"ENCRYPTION_KEY", "not valid base64"}}},
		{"encryption key 16 bytes", map[string]string{"ENCRYPTION_KEY": base64.StdEncoding.EncodeToString(make([]byte, 16))},
			[]Problem{{"ENCRYPTION_KEY", "32 bytes, got 16"}}},
		{"previous key not base64", map[string]string{"ENCRYPTION_KEY_PREVIOUS": "not base64 SECRETVALUE!"},
			[]Problem{{"ENCRYPTION_KEY_PREVIOUS", "is not valid base64"}}},
		{"previous key 16 bytes", map[string]string{"ENCRYPTION_KEY_PREVIOUS": base64.StdEncoding.EncodeToString(make([]byte, 16))},
			[]Problem{{"ENCRYPTION_KEY_PREVIOUS", "must decode to 32 bytes, got 16"}}},
		{"previous keys, one per bad entry", map[string]string{"ENCRYPTION_KEY_PREVIOUS": goodKey + ",SECRETVALUE!," + goodKey + ", ," +
			base64.StdEncoding.EncodeToString(make([]byte, 31))},
			[]Problem{
				{"ENCRYPTION_KEY_PREVIOUS", "key 2 of 5 is not valid base64"},
				{"ENCRYPTION_KEY_PREVIOUS", "key 4 of 5 is empty"},
				{"ENCRYPTION_KEY_PREVIOUS", "key 5 of 5 must decode to 32 bytes, got 31"},
			}},
		{"previous keys, trailing comma", map[string]string{"ENCRYPTION_KEY_PREVIOUS": goodKey + ","},
			[]Problem{{"ENCRYPTION_KEY_PREVIOUS", "key 2 of 2 is empty"}}},
		{"heartbeat not a number", map[string]string{"HEARTBEAT_SECONDS": "fast"},
			[]Problem{{"HEARTBEAT_SECONDS", `"fast" is not a whole number`}}},
		{"heartbeat fractional", map[string]string{"HEARTBEAT_SECONDS": "1.5"},
			[]Problem{{"HEARTBEAT_SECONDS", "not a whole number"}}},
		{"heartbeat zero", map[string]string{"HEARTBEAT_SECONDS": "0"},
			[]Problem{{"HEARTBEAT_SECONDS", "between 1 and"}}},
		{"tool timeout negative", map[string]string{"TOOL_TIMEOUT_SECONDS": "-5"},
			[]Problem{{"TOOL_TIMEOUT_SECONDS", "between 1 and"}}},
		{"turn timeout huge", map[string]string{"TURN_TIMEOUT_SECONDS": "99999999999999999999"},
			[]Problem{{"TURN_TIMEOUT_SECONDS", "not a whole number"}}},
		{"llm timeout over a day", map[string]string{"LLM_TIMEOUT_SECONDS": "86401"},
			[]Problem{{"LLM_TIMEOUT_SECONDS", "between 1 and 86400"}}},
		{"max steps zero", map[string]string{"MAX_STEPS": "0"},
			[]Problem{{"MAX_STEPS", "between 1 and"}}},
		{"max steps text", map[string]string{"MAX_STEPS": "many"},
			[]Problem{{"MAX_STEPS", "not a whole number"}}},
		{"log level", map[string]string{"LOG_LEVEL": "verbose"},
			[]Problem{{"LOG_LEVEL", "debug, info, warn or error"}}},
		{"short admin token", map[string]string{"ADMIN_TOKEN": "SECRETVALUE"},
			[]Problem{{"ADMIN_TOKEN", "at least 32 bytes"}}},
		{"addr without port", map[string]string{"ADDR": "127.0.0.1"},
			[]Problem{{"ADDR", "host:port"}}},
		{"addr bad port", map[string]string{"ADDR": "127.0.0.1:http"},
			[]Problem{{"ADDR", "invalid port"}}},
		{"several at once, in order", map[string]string{
			"JWT_SECRET": "short-SECRETVALUE", "STORE": "dynamodb", "GNS3_URL": "gns3",
			"ENCRYPTION_KEY": "SECRETVALUE", "HEARTBEAT_SECONDS": "x", "MAX_STEPS": "-1",
		}, []Problem{
			{"TABLE_NAME", "required"}, {"JWT_SECRET", "at least 32"}, {"GNS3_URL", "http"},
			{"ENCRYPTION_KEY", "32 bytes"}, {"HEARTBEAT_SECONDS", "whole number"}, {"MAX_STEPS", "between"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(env(tt.env), LocalDefaults())
			if err == nil {
				t.Fatalf("Load succeeded: %v", cfg)
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T is not a *ValidationError: %v", err, err)
			}
			if len(ve.Problems) != len(tt.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(ve.Problems), len(tt.want), err)
			}
			for i, w := range tt.want {
				p := ve.Problems[i]
				if p.Var != w.Var || !strings.Contains(p.Message, w.Message) {
					t.Errorf("problem %d = %s: %s, want %s: ...%s...", i, p.Var, p.Message, w.Var, w.Message)
				}
			}
			msg := err.Error()
			if got := strings.Count(msg, "\n"); got != len(tt.want) {
				t.Errorf("want one line per problem, got:\n%s", msg)
			}
			if strings.Contains(msg, "SECRETVALUE") {
				t.Errorf("error leaks a secret:\n%s", msg)
			}
		})
	}
}

func TestSingleUser(t *testing.T) {
	for _, tt := range []struct {
		secret string
		want   bool
		mode   string
	}{{"", true, "single-user"}, {goodSecret, false, "jwt"}} {
		cfg, err := Load(env(map[string]string{"JWT_SECRET": tt.secret}), LocalDefaults())
		if err != nil {
			t.Fatal(err)
		}
		if cfg.SingleUser() != tt.want || cfg.Mode() != tt.mode {
			t.Errorf("secret %q: SingleUser=%v Mode=%q, want %v %q", tt.secret, cfg.SingleUser(), cfg.Mode(), tt.want, tt.mode)
		}
	}
}

func TestCheckLoopback(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:8080", true},
		{"127.0.0.2:80", true},
		{"127.255.255.254:0", true},
		{"[::1]:8080", true},
		{"[::ffff:127.0.0.1]:8080", true},
		{"[::1%lo]:8080", true},
		{"localhost:8080", true},
		{"LocalHost:1", true},
		{":8080", false},
		{"0.0.0.0:8080", false},
		{"[::]:8080", false},
		{"192.168.1.10:8080", false},
		{"example.com:8080", false},
		{"localhost.evil.com:8080", false},
		{"127.0.0.1", false},
		{"", false},
		{"127.0.0.1:port", false},
	}
	for _, tt := range tests {
		err := CheckLoopback(tt.addr)
		if (err == nil) != tt.ok {
			t.Errorf("CheckLoopback(%q) = %v, want ok=%v", tt.addr, err, tt.ok)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "ADDR: ") {
			t.Errorf("CheckLoopback(%q) error %q does not name ADDR", tt.addr, err)
		}
	}
}

func TestNoSecretsInOutput(t *testing.T) {
	cfg, err := Load(env(map[string]string{
		"JWT_SECRET": goodSecret, "OPENAI_API_KEY": openAIKey, "SEERR_URL": "http://seerr",
		"SEERR_API_KEY": seerrKey, "ADMIN_TOKEN": adminTok, "ENCRYPTION_KEY": goodKey,
		"ENCRYPTION_KEY_PREVIOUS": prevKeysEnv, "GNS3_URL": "http://admin:hunter2-SECRETVALUE@gns3:3080",
	}), LocalDefaults())
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "config", cfg)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "config", *cfg)
	outputs := map[string]string{
		"String": cfg.String(), "%v": fmt.Sprintf("%v", cfg), "%+v value": fmt.Sprintf("%+v", *cfg),
		"%#v": fmt.Sprintf("%#v", cfg), "%#v value": fmt.Sprintf("%#v", *cfg), "slog": logged.String(),
	}
	secrets := []string{goodSecret, openAIKey, seerrKey, adminTok, goodKey, "hunter2", "SECRETVALUE",
		fmt.Sprint([]byte(goodSecret)), fmt.Sprint(cfg.EncryptionKey),
		strings.TrimSpace(strings.Split(prevKeysEnv, ",")[0]), strings.TrimSpace(strings.Split(prevKeysEnv, ",")[1]),
		fmt.Sprint(prevKeys[0]), fmt.Sprint(prevKeys), fmt.Sprintf("%x", prevKeys[1])}
	for name, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s leaks %q: %s", name, s, out)
			}
		}
		for _, want := range []string{"jwt_secret", "[set]", "gns3:3080", "store", "encryption_keys_previous"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q: %s", name, want, out)
			}
		}
	}
}

func TestBlockedCommands(t *testing.T) {
	tests := []struct {
		env  string
		want []string
	}{
		{"", nil},
		{"none", []string{}},
		{"NONE", []string{}},
		{"reload, erase ,,write erase", []string{"reload", "erase", "write erase"}},
		{" , ", []string{}},
	}
	for _, tc := range tests {
		cfg, err := Load(func(k string) string {
			if k == "BLOCKED_COMMANDS" {
				return tc.env
			}
			return ""
		}, LocalDefaults())
		if err != nil {
			t.Fatal(err)
		}
		if (cfg.BlockedCommands == nil) != (tc.want == nil) || !slices.Equal(cfg.BlockedCommands, tc.want) {
			t.Errorf("BLOCKED_COMMANDS=%q: %#v, want %#v", tc.env, cfg.BlockedCommands, tc.want)
		}
	}
}

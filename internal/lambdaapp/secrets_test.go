package lambdaapp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"agentchat/internal/config"
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/lambdatest"
)

func mapEnv(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolveSecrets(t *testing.T) {
	fake := lambdatest.NewSSM(t, map[string]string{
		"/agentchat/test/jwt-secret":     "jwt-secret-value-0123456789abcdef0123",
		"/agentchat/test/openai-api-key": "sk-test-value",
		"/agentchat/test/admin-token":    "admin-token-value",
	})
	tests := []struct {
		name    string
		env     map[string]string
		want    map[string]string
		wantErr string // substring; the error must never contain a secret value
		calls   int
	}{
		{name: "no parameter named: nothing read", env: map[string]string{"JWT_SECRET": "plain", "OTHER": "x"},
			want: map[string]string{"JWT_SECRET": "plain", "OTHER": "x", "OPENAI_API_KEY": ""}},
		{name: "parameters resolved in one call", env: map[string]string{
			"JWT_SECRET_PARAM":     "/agentchat/test/jwt-secret",
			"OPENAI_API_KEY_PARAM": "/agentchat/test/openai-api-key",
			"ADMIN_TOKEN_PARAM":    " /agentchat/test/admin-token ",
			"OTHER":                "x",
		}, want: map[string]string{
			"JWT_SECRET":     "jwt-secret-value-0123456789abcdef0123",
			"OPENAI_API_KEY": "sk-test-value",
			"ADMIN_TOKEN":    "admin-token-value",
			"OTHER":          "x",
			"SEERR_API_KEY":  "",
		}, calls: 1},
		{name: "one parameter for two variables, version selector", env: map[string]string{
			"JWT_SECRET_PARAM":  "/agentchat/test/jwt-secret:1",
			"ADMIN_TOKEN_PARAM": "/agentchat/test/jwt-secret:1",
		}, want: map[string]string{"JWT_SECRET": "jwt-secret-value-0123456789abcdef0123", "ADMIN_TOKEN": "jwt-secret-value-0123456789abcdef0123"}, calls: 1},
		{name: "by ARN", env: map[string]string{"JWT_SECRET_PARAM": "arn:aws:ssm:us-east-1:123456789012:parameter/agentchat/test/jwt-secret"},
			want: map[string]string{"JWT_SECRET": "jwt-secret-value-0123456789abcdef0123"}, calls: 1},
		{name: "missing parameter", env: map[string]string{"JWT_SECRET_PARAM": "/agentchat/test/jwt-secret", "SEERR_API_KEY_PARAM": "/agentchat/test/nope"},
			wantErr: "not found (or not readable): /agentchat/test/nope", calls: 1},
		{name: "value and parameter both set", env: map[string]string{"JWT_SECRET": "plain", "JWT_SECRET_PARAM": "/agentchat/test/jwt-secret"},
			wantErr: "JWT_SECRET and JWT_SECRET_PARAM are both set"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(fake.Calls())
			built := 0
			getenv, err := lambdaapp.ResolveSecrets(context.Background(), mapEnv(tc.env), func(context.Context) (lambdaapp.ParameterStore, error) {
				built++
				return fake.Client(), nil
			})
			calls := fake.Calls()[before:]
			if len(calls) != tc.calls || (tc.calls == 0 && built != 0) {
				t.Errorf("%d GetParameters calls (client built %d times), want %d", len(calls), built, tc.calls)
			}
			for _, c := range calls {
				if !c.WithDecryption {
					t.Errorf("GetParameters without WithDecryption: %+v", c)
				}
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				for _, secret := range []string{"jwt-secret-value", "sk-test-value", "admin-token-value"} {
					if strings.Contains(err.Error(), secret) {
						t.Fatalf("error %q shows a secret", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range tc.want {
				if got := getenv(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

func TestResolveSecretsClientError(t *testing.T) {
	_, err := lambdaapp.ResolveSecrets(context.Background(), mapEnv(map[string]string{"JWT_SECRET_PARAM": "/x"}),
		func(context.Context) (lambdaapp.ParameterStore, error) { return nil, errors.New("no region") })
	if err == nil || !strings.Contains(err.Error(), "no region") {
		t.Fatalf("error %v, want the client's", err)
	}
}

// The keys of an encryption key rotation come from SSM like the current
// key, in the same single call, and reach config.Load as the list it parses.
func TestResolveSecretsEncryptionKeys(t *testing.T) {
	current := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	prev1 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32))
	prev2 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32))
	fake := lambdatest.NewSSM(t, map[string]string{
		"/agentchat/test/encryption-key":          current,
		"/agentchat/test/encryption-key-previous": prev1 + "," + prev2,
	})
	if !slices.Contains(lambdaapp.SecretVars(), "ENCRYPTION_KEY_PREVIOUS") {
		t.Fatalf("SecretVars() = %v lacks ENCRYPTION_KEY_PREVIOUS", lambdaapp.SecretVars())
	}
	env := map[string]string{
		"ENCRYPTION_KEY_PARAM":          "/agentchat/test/encryption-key",
		"ENCRYPTION_KEY_PREVIOUS_PARAM": "/agentchat/test/encryption-key-previous",
	}
	getenv, err := lambdaapp.ResolveSecrets(context.Background(), mapEnv(env), func(context.Context) (lambdaapp.ParameterStore, error) {
		return fake.Client(), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(fake.Calls()); n != 1 {
		t.Errorf("%d GetParameters calls, want 1", n)
	}
	cfg, err := config.Load(getenv, config.LambdaDefaults())
	if err == nil {
		t.Fatalf("Load without TABLE_NAME succeeded: %v", cfg)
	}
	env["TABLE_NAME"] = "agentchat-test"
	cfg, err = config.Load(getenv, config.LambdaDefaults())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !bytes.Equal(cfg.EncryptionKey, bytes.Repeat([]byte{1}, 32)) {
		t.Errorf("EncryptionKey = %x", cfg.EncryptionKey)
	}
	want := [][]byte{bytes.Repeat([]byte{2}, 32), bytes.Repeat([]byte{3}, 32)}
	if !slices.EqualFunc(cfg.EncryptionKeysPrevious, want, bytes.Equal) {
		t.Errorf("EncryptionKeysPrevious = %x, want %x", cfg.EncryptionKeysPrevious, want)
	}

	env["ENCRYPTION_KEY_PREVIOUS"] = prev1
	_, err = lambdaapp.ResolveSecrets(context.Background(), mapEnv(env), func(context.Context) (lambdaapp.ParameterStore, error) {
		return fake.Client(), nil
	})
	if err == nil || !strings.Contains(err.Error(), "ENCRYPTION_KEY_PREVIOUS and ENCRYPTION_KEY_PREVIOUS_PARAM are both set") {
		t.Fatalf("error %v, want both set", err)
	}
	if strings.Contains(err.Error(), prev1) {
		t.Fatalf("error %q shows a key", err)
	}
}

package config

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// TestSecurityLimits: the caps and allow lists of the security settings
// take their defaults, accept valid values and refuse the rest by name.
func TestSecurityLimits(t *testing.T) {
	def, err := Load(env(nil), LocalDefaults())
	if err != nil {
		t.Fatal(err)
	}
	if def.LLMMaxAnswerBytes != 1<<20 || def.ToolMaxOutputBytes != 64<<10 || def.MaxSessionsPerUser != 10000 ||
		def.MaxLLMConfigsPerUser != 100 || def.MaxAPIKeysPerUser != 100 || !def.LLMAllowPrivateHosts.Empty() || !def.ConsoleAllowedHosts.Empty() {
		t.Fatalf("defaults = %+v", def)
	}
	cfg, err := Load(env(map[string]string{
		"LLM_MAX_ANSWER_BYTES":     "4096",
		"TOOL_MAX_OUTPUT_BYTES":    "1000",
		"MAX_SESSIONS_PER_USER":    "3",
		"MAX_LLM_CONFIGS_PER_USER": "2",
		"MAX_API_KEYS_PER_USER":    "1",
		"LLM_ALLOW_PRIVATE_HOSTS":  "10.0.0.0/8, 192.168.1.20,ollama.LAN., ::1",
		"CONSOLE_ALLOWED_HOSTS":    "gns3-compute-1",
	}), LocalDefaults())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LLMMaxAnswerBytes != 4096 || cfg.ToolMaxOutputBytes != 1000 || cfg.MaxSessionsPerUser != 3 || cfg.MaxLLMConfigsPerUser != 2 || cfg.MaxAPIKeysPerUser != 1 {
		t.Fatalf("limits = %+v", cfg)
	}
	allow := cfg.LLMAllowPrivateHosts
	for _, tt := range []struct {
		host string
		want bool
	}{
		{"10.1.2.3", true}, {"192.168.1.20", true}, {"192.168.1.21", false}, {"ollama.lan", true}, {"OLLAMA.lan.", true},
		{"[::1]", true}, {"127.0.0.1", false}, {"::ffff:10.0.0.1", true}, {"evil.lan", false},
	} {
		if got := allow.AllowsHost(tt.host); got != tt.want {
			t.Errorf("AllowsHost(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
	if !allow.AllowsAddr(netip.MustParseAddr("10.255.0.1")) || allow.AllowsAddr(netip.MustParseAddr("169.254.169.254")) {
		t.Error("AllowsAddr disagrees with the list")
	}
	if !cfg.ConsoleAllowedHosts.AllowsHost("gns3-compute-1") {
		t.Error("console allow list lost its host")
	}

	for _, tt := range []struct{ name, value, problem string }{
		{"LLM_MAX_ANSWER_BYTES", "12", "between 1024 and"},
		{"TOOL_MAX_OUTPUT_BYTES", "lots", "not a whole number"},
		{"MAX_SESSIONS_PER_USER", "0", "between 1 and"},
		{"MAX_LLM_CONFIGS_PER_USER", "-1", "between 1 and"},
		{"MAX_API_KEYS_PER_USER", "1.5", "not a whole number"},
		{"LLM_ALLOW_PRIVATE_HOSTS", "10.0.0.0/33", "not a valid CIDR"},
		{"CONSOLE_ALLOWED_HOSTS", "bad host!", "neither a CIDR"},
	} {
		_, err := Load(env(map[string]string{tt.name: tt.value}), LocalDefaults())
		var ve *ValidationError
		if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Var != tt.name || !strings.Contains(ve.Problems[0].Message, tt.problem) {
			t.Errorf("%s=%s: err = %v, want a problem with %q", tt.name, tt.value, err, tt.problem)
		}
	}
}

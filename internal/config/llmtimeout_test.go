package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestLLMTimeouts(t *testing.T) {
	tests := []struct {
		name        string
		env         map[string]string
		first, idle time.Duration
		// problem is a fragment of the one problem expected ("" for none).
		problem, problemVar string
	}{
		{name: "defaults", first: 120 * time.Second, idle: 60 * time.Second},
		{name: "both set", env: map[string]string{"LLM_TIMEOUT_SECONDS": "300", "LLM_IDLE_TIMEOUT_SECONDS": "20"},
			first: 300 * time.Second, idle: 20 * time.Second},
		{name: "idle longer than the first bound", env: map[string]string{"LLM_TIMEOUT_SECONDS": "30", "LLM_IDLE_TIMEOUT_SECONDS": "90"},
			first: 30 * time.Second, idle: 90 * time.Second},
		{name: "idle defaults to a shorter LLM_TIMEOUT_SECONDS", env: map[string]string{"LLM_TIMEOUT_SECONDS": "15"},
			first: 15 * time.Second, idle: 15 * time.Second},
		{name: "idle default stays 60s under a longer LLM_TIMEOUT_SECONDS", env: map[string]string{"LLM_TIMEOUT_SECONDS": "900"},
			first: 900 * time.Second, idle: 60 * time.Second},
		{name: "idle zero", env: map[string]string{"LLM_IDLE_TIMEOUT_SECONDS": "0"},
			problemVar: "LLM_IDLE_TIMEOUT_SECONDS", problem: "between 1 and 86400 seconds, got 0"},
		{name: "idle negative", env: map[string]string{"LLM_IDLE_TIMEOUT_SECONDS": "-3"},
			problemVar: "LLM_IDLE_TIMEOUT_SECONDS", problem: "between 1 and 86400 seconds, got -3"},
		{name: "idle fractional", env: map[string]string{"LLM_IDLE_TIMEOUT_SECONDS": "2.5"},
			problemVar: "LLM_IDLE_TIMEOUT_SECONDS", problem: `"2.5" is not a whole number of seconds`},
		{name: "idle with a unit", env: map[string]string{"LLM_IDLE_TIMEOUT_SECONDS": "30s"},
			problemVar: "LLM_IDLE_TIMEOUT_SECONDS", problem: "not a whole number of seconds"},
		{name: "idle over a day", env: map[string]string{"LLM_IDLE_TIMEOUT_SECONDS": "86401"},
			problemVar: "LLM_IDLE_TIMEOUT_SECONDS", problem: "between 1 and 86400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(env(tt.env), LocalDefaults())
			if tt.problem != "" {
				var ve *ValidationError
				if !errors.As(err, &ve) || len(ve.Problems) != 1 {
					t.Fatalf("error %v, want one problem", err)
				}
				if p := ve.Problems[0]; p.Var != tt.problemVar || !strings.Contains(p.Message, tt.problem) {
					t.Fatalf("problem %s: %s, want %s: ...%s...", p.Var, p.Message, tt.problemVar, tt.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.LLMTimeout != tt.first || cfg.LLMIdleTimeout != tt.idle {
				t.Fatalf("LLMTimeout %v, LLMIdleTimeout %v, want %v and %v", cfg.LLMTimeout, cfg.LLMIdleTimeout, tt.first, tt.idle)
			}
			if s := cfg.String(); !strings.Contains(s, "llm_idle_timeout="+tt.idle.String()) {
				t.Fatalf("String() %s lacks llm_idle_timeout", s)
			}
		})
	}
}

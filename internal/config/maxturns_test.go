package config

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestMaxTurnsPerUser: MAX_TURNS_PER_USER defaults to 8, takes a whole
// number from 1 to MaxMaxTurnsPerUser, refuses anything else with a clear
// problem, and is logged.
func TestMaxTurnsPerUser(t *testing.T) {
	tests := []struct {
		value   string
		want    int
		problem string // a fragment of the problem's message; empty: valid
	}{
		{"", DefaultMaxTurnsPerUser, ""},
		{"1", 1, ""},
		{"12", 12, ""},
		{" 3 ", 3, ""},
		{"1000", 1000, ""},
		{"0", 0, "must be between 1 and 1000 (the turns one user may run at once), got 0"},
		{"-1", 0, "must be between 1 and 1000"},
		{"1001", 0, "must be between 1 and 1000"},
		{"many", 0, `"many" is not a whole number`},
		{"2.5", 0, "not a whole number"},
	}
	for _, tt := range tests {
		t.Run("MAX_TURNS_PER_USER="+tt.value, func(t *testing.T) {
			cfg, err := Load(env(map[string]string{"MAX_TURNS_PER_USER": tt.value}), LocalDefaults())
			if tt.problem == "" {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if cfg.MaxTurnsPerUser != tt.want {
					t.Errorf("MaxTurnsPerUser = %d, want %d", cfg.MaxTurnsPerUser, tt.want)
				}
				if s := cfg.String(); !strings.Contains(s, "max_turns_per_user="+strconv.Itoa(tt.want)) {
					t.Errorf("String() = %s, want max_turns_per_user=%d", s, tt.want)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) != 1 {
				t.Fatalf("Load = %v, %v; want one problem", cfg, err)
			}
			if p := ve.Problems[0]; p.Var != "MAX_TURNS_PER_USER" || !strings.Contains(p.Message, tt.problem) {
				t.Errorf("problem = %+v, want MAX_TURNS_PER_USER: ...%s...", p, tt.problem)
			}
		})
	}
}

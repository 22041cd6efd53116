package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TURN_LEASE_SECONDS sets the turn lease; it defaults to a minute and is
// checked like every *_SECONDS variable.
func TestTurnLease(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  time.Duration
	}{{"", DefaultTurnLease}, {"2", 2 * time.Second}, {"900", 15 * time.Minute}} {
		c, err := Load(env(map[string]string{"TURN_LEASE_SECONDS": tc.value}), LocalDefaults())
		if err != nil {
			t.Fatalf("TURN_LEASE_SECONDS=%q: %v", tc.value, err)
		}
		if c.TurnLease != tc.want {
			t.Errorf("TURN_LEASE_SECONDS=%q: lease %v, want %v", tc.value, c.TurnLease, tc.want)
		}
	}
	if DefaultTurnLease != time.Minute {
		t.Errorf("DefaultTurnLease = %v, want 1m", DefaultTurnLease)
	}
	for _, bad := range []string{"0", "-1", "1.5", "86401"} {
		_, err := Load(env(map[string]string{"TURN_LEASE_SECONDS": bad}), LocalDefaults())
		var ve *ValidationError
		if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Var != "TURN_LEASE_SECONDS" {
			t.Errorf("TURN_LEASE_SECONDS=%q: %v, want one problem with the variable", bad, err)
		}
	}
	c, err := Load(env(nil), LocalDefaults())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.String(), "turn_lease=1m0s") {
		t.Errorf("the configuration shown at start does not give the lease: %s", c)
	}
}

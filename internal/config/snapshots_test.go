package config

import (
	"strings"
	"testing"
)

func TestOnOffVariables(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		want    bool
		wantErr bool
	}{
		{"SNAPSHOTS", "", true, false}, {"SNAPSHOTS", "on", true, false}, {"SNAPSHOTS", "ON", true, false}, {"SNAPSHOTS", "true", true, false},
		{"SNAPSHOTS", "off", false, false}, {"SNAPSHOTS", "0", false, false}, {"SNAPSHOTS", "false", false, false},
		{"SNAPSHOTS", "maybe", false, true},
		{"METRICS", "", false, false}, {"METRICS", "off", false, false}, {"METRICS", "0", false, false},
		{"METRICS", "on", true, false}, {"METRICS", "ON", true, false}, {"METRICS", "true", true, false}, {"METRICS", "1", true, false},
		{"METRICS", "yes please", false, true},
		{"TURN_LOG", "", true, false}, {"TURN_LOG", "off", false, false}, {"TURN_LOG", "On", true, false}, {"TURN_LOG", "no", false, true},
	}
	for _, tt := range tests {
		env := map[string]string{tt.name: tt.value}
		c, err := Load(func(k string) string { return env[k] }, Defaults{})
		if tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), tt.name) {
				t.Errorf("%s=%q: error %v, want one naming %s", tt.name, tt.value, err, tt.name)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s=%q: %v", tt.name, tt.value, err)
		}
		got := map[string]bool{"SNAPSHOTS": c.Snapshots, "METRICS": c.Metrics, "TURN_LOG": c.TurnLog}[tt.name]
		if got != tt.want {
			t.Errorf("%s=%q: %v, want %v", tt.name, tt.value, got, tt.want)
		}
	}
}

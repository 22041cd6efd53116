package config

import (
	"strings"
	"testing"
)

func TestSnapshots(t *testing.T) {
	tests := []struct {
		value   string
		want    bool
		wantErr bool
	}{
		{"", true, false}, {"on", true, false}, {"ON", true, false}, {"true", true, false},
		{"off", false, false}, {"0", false, false}, {"false", false, false},
		{"maybe", false, true},
	}
	for _, tt := range tests {
		env := map[string]string{"SNAPSHOTS": tt.value}
		c, err := Load(func(k string) string { return env[k] }, Defaults{})
		if tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), "SNAPSHOTS") {
				t.Errorf("SNAPSHOTS=%q: error %v, want one naming SNAPSHOTS", tt.value, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("SNAPSHOTS=%q: %v", tt.value, err)
		}
		if c.Snapshots != tt.want {
			t.Errorf("SNAPSHOTS=%q: Snapshots = %v, want %v", tt.value, c.Snapshots, tt.want)
		}
	}
}

func TestMetrics(t *testing.T) {
	tests := []struct {
		value   string
		want    bool
		wantErr bool
	}{
		{"", false, false}, {"off", false, false}, {"0", false, false},
		{"on", true, false}, {"ON", true, false}, {"true", true, false}, {"1", true, false},
		{"yes please", false, true},
	}
	for _, tt := range tests {
		env := map[string]string{"METRICS": tt.value}
		c, err := Load(func(k string) string { return env[k] }, Defaults{})
		if tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), "METRICS") {
				t.Errorf("METRICS=%q: error %v, want one naming METRICS", tt.value, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("METRICS=%q: %v", tt.value, err)
		}
		if c.Metrics != tt.want {
			t.Errorf("METRICS=%q: Metrics = %v, want %v", tt.value, c.Metrics, tt.want)
		}
	}
}

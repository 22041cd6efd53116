package approval

import "testing"

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Policy
		wantErr bool
	}{
		{"", "", false},
		{"off", Off, false},
		{" Changes ", Changes, false},
		{"ALL", All, false},
		{"sometimes", "", true},
		{"changes\x00", "", true},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("Parse(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestFromValue(t *testing.T) {
	tests := []struct {
		in   any
		want Policy
	}{
		{nil, ""}, {"changes", Changes}, {"bogus", ""}, {3.0, ""}, {true, ""}, {"all", All},
	}
	for _, tt := range tests {
		if got := FromValue(tt.in); got != tt.want {
			t.Errorf("FromValue(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestResolvePrecedence(t *testing.T) {
	tests := []struct {
		name                     string
		request, session, config Policy
		want                     Policy
	}{
		{"nothing set is off", "", "", "", Off},
		{"config alone", "", "", Changes, Changes},
		{"session over config", "", All, Changes, All},
		{"request over session", Off, All, Changes, Off},
		{"request over config", All, "", Off, All},
	}
	for _, tt := range tests {
		if got := Resolve(tt.request, tt.session, tt.config); got != tt.want {
			t.Errorf("%s: Resolve = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestNeeds(t *testing.T) {
	tests := []struct {
		p          Policy
		changesLab bool
		want       bool
	}{
		{Off, true, false}, {Off, false, false}, {"", true, false},
		{Changes, true, true}, {Changes, false, false},
		{All, true, true}, {All, false, true},
	}
	for _, tt := range tests {
		if got := tt.p.Needs(tt.changesLab); got != tt.want {
			t.Errorf("%q.Needs(%v) = %v, want %v", tt.p, tt.changesLab, got, tt.want)
		}
	}
}

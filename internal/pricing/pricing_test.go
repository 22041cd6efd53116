package pricing

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCost(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		p                     Prices
		input, cached, output int64
		want                  int64
		ok                    bool
	}{
		{"unknown", Prices{}, 1000, 0, 1000, 0, false},
		{"free model is known", Prices{Known: true}, 1000, 0, 1000, 0, true},
		{"input and output", Prices{Known: true, Input: 2.5, Output: 10}, 1000, 0, 200, 1000*2500 + 200*10000, true},
		{"cached at its price", Prices{Known: true, Input: 2.5, Output: 10, CachedInput: 1.25, HasCached: true}, 1000, 400, 200, 600*2500 + 400*1250 + 200*10000, true},
		{"cached without a price costs input", Prices{Known: true, Input: 2.5, Output: 10}, 1000, 400, 0, 1000 * 2500, true},
		{"cached beyond input is capped", Prices{Known: true, Input: 1, Output: 1, CachedInput: 0, HasCached: true}, 10, 50, 0, 0, true},
		{"fractions round", Prices{Known: true, Input: 0.0001, Output: 0}, 3, 0, 0, 0, true},
		{"fractions add", Prices{Known: true, Input: 0.15, Output: 0.6}, 7, 0, 3, 7*150 + 3*600, true},
		{"negative counts are none", Prices{Known: true, Input: 1, Output: 1}, -5, -1, -7, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.p.Cost(tc.input, tc.cached, tc.output)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Cost(%d, %d, %d) = %d, %v; want %d, %v", tc.input, tc.cached, tc.output, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestFromConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     string
		want    Prices
		wantErr string
	}{
		{"none", `{"model": "m"}`, Prices{}, ""},
		{"input only is unknown", `{"input_cost_per_mtok": 1}`, Prices{Input: 1}, ""},
		{"both", `{"input_cost_per_mtok": 2.5, "output_cost_per_mtok": 10}`, Prices{Known: true, Input: 2.5, Output: 10}, ""},
		{"strings from a form", `{"input_cost_per_mtok": " 2.5", "output_cost_per_mtok": "10", "cached_input_cost_per_mtok": "1.25"}`,
			Prices{Known: true, Input: 2.5, Output: 10, CachedInput: 1.25, HasCached: true}, ""},
		{"null is absent", `{"input_cost_per_mtok": null, "output_cost_per_mtok": 1}`, Prices{Output: 1}, ""},
		{"negative", `{"input_cost_per_mtok": -1, "output_cost_per_mtok": 1}`, Prices{}, "input_cost_per_mtok: -1 is not a price"},
		{"too high", `{"input_cost_per_mtok": 1, "output_cost_per_mtok": 1e12}`, Prices{}, "output_cost_per_mtok:"},
		{"not a number", `{"cached_input_cost_per_mtok": "cheap"}`, Prices{}, `cached_input_cost_per_mtok: "cheap" is not a number`},
		{"a bool", `{"input_cost_per_mtok": true}`, Prices{}, "a bool is not a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := json.NewDecoder(strings.NewReader(tc.cfg))
			d.UseNumber()
			var cfg map[string]any
			if err := d.Decode(&cfg); err != nil {
				t.Fatal(err)
			}
			got, err := FromConfig(cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("FromConfig = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		text    string
		want    Prices
		wantErr string
	}{
		{"", Prices{}, ""},
		{`{"input_cost_per_mtok": 0.15, "output_cost_per_mtok": 0.6}`, Prices{Known: true, Input: 0.15, Output: 0.6}, ""},
		{`{"input_cost_per_mtok": 0.15}`, Prices{}, "both"},
		{`{"input_cost_per_mtok": 1, "output_cost_per_mtok": 1, "per_request": 1}`, Prices{}, `unknown key "per_request"`},
		{`2.5`, Prices{}, "JSON object"},
		{`{"input_cost_per_mtok": "x", "output_cost_per_mtok": 1}`, Prices{}, "not a number"},
	} {
		got, err := Parse(tc.text)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Parse(%q) err = %v, want %q", tc.text, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.text, got, err, tc.want)
		}
	}
}

// Package pricing turns token counts into money: the prices of a model
// (USD per million tokens, as an LLM configuration or OPENAI_PRICES gives
// them) and the cost of one LLM call in nano-dollars, an integer, so that
// sums over a ledger are exact.
package pricing

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The keys of the prices in an LLM configuration's config object and in
// OPENAI_PRICES, in USD per million tokens.
const (
	KeyInput       = "input_cost_per_mtok"
	KeyOutput      = "output_cost_per_mtok"
	KeyCachedInput = "cached_input_cost_per_mtok"
)

// maxPrice bounds a price (USD per million tokens): far above any model's,
// low enough that a call's cost cannot overflow an int64 of nano-dollars.
const maxPrice = 1_000_000

// Prices are what one model's tokens cost, in USD per million tokens. The
// zero value is "unknown": a call is then never priced, not priced at zero.
type Prices struct {
	// Known is set when both the input and the output price are given.
	Known bool
	// Input and Output are the prices of prompt and completion tokens.
	Input, Output float64
	// CachedInput is the price of prompt tokens served from the provider's
	// cache, when HasCached; without it they cost Input.
	CachedInput float64
	HasCached   bool
}

// FieldError is a price that cannot be read: its key and why.
type FieldError struct{ Key, Reason string }

// Error names the key and the reason.
func (e *FieldError) Error() string { return e.Key + ": " + e.Reason }

// FromConfig reads the prices of an LLM configuration's config object
// (absent keys: unknown prices). A price that is not a number from 0 to
// 1,000,000 (a JSON number or a numeric string, as a form may send it) is
// a *FieldError.
func FromConfig(cfg map[string]any) (Prices, error) {
	var (
		p        Prices
		in, out  bool
		firstErr error
	)
	for _, f := range []struct {
		key string
		dst *float64
		set *bool
	}{
		{KeyInput, &p.Input, &in},
		{KeyOutput, &p.Output, &out},
		{KeyCachedInput, &p.CachedInput, &p.HasCached},
	} {
		v, ok := cfg[f.key]
		if !ok || v == nil {
			continue
		}
		x, err := price(v)
		if err != nil {
			if firstErr == nil {
				firstErr = &FieldError{Key: f.key, Reason: err.Error()}
			}
			continue
		}
		*f.dst, *f.set = x, true
	}
	if firstErr != nil {
		return Prices{}, firstErr
	}
	p.Known = in && out
	return p, nil
}

// Parse reads OPENAI_PRICES: a JSON object with the keys of FromConfig,
// e.g. {"input_cost_per_mtok": 2.5, "output_cost_per_mtok": 10}. Empty
// text is unknown prices; an object without both the input and output
// price is an error (a half price would leave every cost unknown).
func Parse(text string) (Prices, error) {
	if strings.TrimSpace(text) == "" {
		return Prices{}, nil
	}
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var cfg map[string]any
	if err := d.Decode(&cfg); err != nil || cfg == nil {
		return Prices{}, fmt.Errorf(`want a JSON object such as {"%s": 2.5, "%s": 10}`, KeyInput, KeyOutput)
	}
	for k := range cfg {
		switch k {
		case KeyInput, KeyOutput, KeyCachedInput:
		default:
			return Prices{}, fmt.Errorf("unknown key %q (want %s, %s, %s)", k, KeyInput, KeyOutput, KeyCachedInput)
		}
	}
	p, err := FromConfig(cfg)
	if err != nil {
		return Prices{}, err
	}
	if !p.Known {
		return Prices{}, fmt.Errorf("both %s and %s are needed", KeyInput, KeyOutput)
	}
	return p, nil
}

// price reads one price.
func price(v any) (float64, error) {
	var x float64
	switch n := v.(type) {
	case float64:
		x = n
	case json.Number:
		f, err := n.Float64()
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", n.String())
		}
		x = f
	case int:
		x = float64(n)
	case int64:
		x = float64(n)
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", n)
		}
		x = f
	default:
		return 0, fmt.Errorf("a %T is not a number", v)
	}
	if math.IsNaN(x) || x < 0 || x > maxPrice {
		return 0, fmt.Errorf("%v is not a price from 0 to %d USD per million tokens", x, maxPrice)
	}
	return x, nil
}

// NanosPerUSD is how many nano-dollars make a dollar.
const NanosPerUSD = 1_000_000_000

// Cost is the cost in nano-dollars of a call that used input prompt tokens
// (cached of them served from the provider's cache) and output completion
// tokens; ok is false when the prices are unknown. One USD per million
// tokens is 1,000 nano-dollars per token.
func (p Prices) Cost(input, cached, output int64) (nanos int64, ok bool) {
	if !p.Known {
		return 0, false
	}
	cached = min(max(cached, 0), max(input, 0))
	cachedPrice := p.Input
	if p.HasCached {
		cachedPrice = p.CachedInput
	}
	const perToken = NanosPerUSD / 1_000_000
	c := float64(max(input, 0)-cached)*p.Input*perToken +
		float64(cached)*cachedPrice*perToken +
		float64(max(output, 0))*p.Output*perToken
	return int64(math.Round(c)), true
}

// USD converts nano-dollars to dollars.
func USD(nanos int64) float64 { return float64(nanos) / NanosPerUSD }

// ReportedUSD is the cost to show for a sum of nanos over priced calls
// beside unpriced calls of unknown cost: nil (unknown) when every call
// counted was unpriced, else the dollars of the priced ones (a lower
// bound when some were unpriced; the caller shows their count).
func ReportedUSD(nanos, unpriced int64) *float64 {
	if unpriced > 0 && nanos == 0 {
		return nil
	}
	usd := USD(nanos)
	return &usd
}

// Package contextwin fits what is sent to the model into its context window.
//
// The window available for the prompt is
//
//	context_limit × 1000 × ratio − max_tokens
//
// with the ratio chosen by a strategy (conservative 0.60, balanced 0.75,
// aggressive 0.85); the rest of the window is headroom for the answer and for
// the difference between this package's count and the provider's.
//
// Tokens are counted with the model's BPE vocabulary (o200k_base for the
// gpt-4o / gpt-4.1 / gpt-5 / o1 / o3 / o4 families, cl100k_base for every other
// model) using github.com/tiktoken-go/tokenizer, whose vocabularies are
// compiled into the binary: nothing is downloaded or read from disk at run
// time. For models of other vendors cl100k_base is an estimate, which the
// strategy's headroom absorbs.
//
// Fit keeps the system prompt, the tool schemas and the running turn, and
// drops the oldest whole turns of the history until the rest fits. It only
// chooses what to send: stored history is never trimmed.
package contextwin

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Strategies.
const (
	Conservative    = "conservative"
	Balanced        = "balanced"
	Aggressive      = "aggressive"
	DefaultStrategy = Balanced
)

// strategyPercent holds the ratios as whole percentages, so that budgets are
// computed in exact integer arithmetic (0.85 has no exact float64).
var strategyPercent = map[string]int{
	Conservative: 60,
	Balanced:     75,
	Aggressive:   85,
}

// normStrategy lower-cases and trims a strategy name.
func normStrategy(strategy string) string {
	return strings.ToLower(strings.TrimSpace(strategy))
}

// Ratio returns the strategy's ratio; ok false for an unknown strategy.
// Names are matched case-insensitively, ignoring surrounding spaces; the empty
// string is unknown (callers that accept it use DefaultStrategy).
func Ratio(strategy string) (float64, bool) {
	p, ok := strategyPercent[normStrategy(strategy)]
	if !ok {
		return 0, false
	}
	return float64(p) / 100, true
}

// EffectiveStrategy returns the strategy Budget applies: the normalized name of
// a known strategy, DefaultStrategy for an unknown or empty one.
func EffectiveStrategy(strategy string) string {
	s := normStrategy(strategy)
	if _, ok := strategyPercent[s]; ok {
		return s
	}
	return DefaultStrategy
}

// Budget returns the tokens available for the prompt: contextLimitK*1000*ratio
// - maxTokens (maxTokens 0: none reserved); <= 0 means nothing fits.
//
// An unknown or empty strategy uses DefaultStrategy's ratio (configuration
// validation is the place to reject it; see Ratio). A negative maxTokens
// reserves nothing. The result is never negative: 0 when the reservation
// takes the whole window or contextLimitK <= 0.
func Budget(contextLimitK int, strategy string, maxTokens int) int {
	if contextLimitK <= 0 {
		return 0
	}
	// k × 1000 × pct / 100, exactly.
	b := contextLimitK * 10 * strategyPercent[EffectiveStrategy(strategy)]
	if maxTokens > 0 {
		b -= maxTokens
	}
	return max(b, 0)
}

// ErrTooLarge is wrapped by *TooLargeError: the system prompt, the tool
// schemas and the running turn alone exceed the budget.
var ErrTooLarge = errors.New("context window exceeded")

// TooLargeError reports that what must be sent needs Need tokens, more than
// Budget. errors.Is(err, ErrTooLarge) holds for it.
//
// ContextLimitK, Strategy and MaxTokens describe the window when known (FitWindow
// fills them; Fit leaves them zero) and make Error() name the setting to change.
type TooLargeError struct {
	Need, Budget int

	ContextLimitK int    // context_limit in thousands of tokens; 0 if unknown
	Strategy      string // effective strategy; "" if unknown
	MaxTokens     int    // tokens reserved for the answer; 0 if none or unknown
}

// Error is a sentence for a person, naming the numbers and what to change.
func (e *TooLargeError) Error() string {
	var window string
	if e.ContextLimitK > 0 {
		window = fmt.Sprintf(" (context_limit %s k, strategy %s", groupDigits(e.ContextLimitK), orDefault(e.Strategy))
		if e.MaxTokens > 0 {
			window += fmt.Sprintf(", %s tokens reserved for the answer by max_tokens", groupDigits(e.MaxTokens))
		}
		window += ")"
	}
	if e.Budget <= 0 {
		return fmt.Sprintf("No room is left for the message in this model's context window%s: "+
			"the message and the conversation's required context need about %s tokens. "+
			"Lower max_tokens or raise context_limit.", window, groupDigits(e.Need))
	}
	return fmt.Sprintf("The message and the conversation's required context need about %s tokens, "+
		"more than the %s available in this model's context window%s. "+
		"Shorten the message or raise context_limit.", groupDigits(e.Need), groupDigits(e.Budget), window)
}

// Unwrap returns ErrTooLarge.
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

func orDefault(strategy string) string {
	if strategy == "" {
		return DefaultStrategy
	}
	return strategy
}

// groupDigits formats n with thousands separators: 131072 → "131,072".
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

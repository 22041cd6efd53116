package llmconfig

import (
	"slices"
	"strings"
)

// defaultBaseURLs are the OpenAI-compatible endpoints of the providers
// whose base_url may be left empty, as their documentation gives them.
var defaultBaseURLs = map[string]string{
	"openai":     "https://api.openai.com/v1",
	"anthropic":  "https://api.anthropic.com/v1/",
	"google":     "https://generativelanguage.googleapis.com/v1beta/openai/",
	"gemini":     "https://generativelanguage.googleapis.com/v1beta/openai/",
	"deepseek":   "https://api.deepseek.com/v1",
	"ollama":     "http://127.0.0.1:11434/v1",
	"openrouter": "https://openrouter.ai/api/v1",
	"groq":       "https://api.groq.com/openai/v1",
	"mistral":    "https://api.mistral.ai/v1",
	"xai":        "https://api.x.ai/v1",
	"lmstudio":   "http://127.0.0.1:1234/v1",
	"vllm":       "http://127.0.0.1:8000/v1",
}

// DefaultBaseURL returns the OpenAI-compatible base URL of a known
// provider (case and surrounding spaces ignored; "gemini" is "google"),
// and false for any other provider, which needs an explicit base_url.
func DefaultBaseURL(provider string) (string, bool) {
	u, ok := defaultBaseURLs[strings.ToLower(strings.TrimSpace(provider))]
	return u, ok
}

// KnownProviders returns the providers DefaultBaseURL knows, sorted.
func KnownProviders() []string {
	out := make([]string, 0, len(defaultBaseURLs))
	for p := range defaultBaseURLs {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

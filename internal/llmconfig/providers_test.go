package llmconfig

import "testing"

func TestDefaultBaseURL(t *testing.T) {
	for p, want := range map[string]string{
		"openai": "https://api.openai.com/v1", " Anthropic ": "https://api.anthropic.com/v1/",
		"google": "https://generativelanguage.googleapis.com/v1beta/openai/", "gemini": "https://generativelanguage.googleapis.com/v1beta/openai/",
		"ollama": "http://127.0.0.1:11434/v1", "lmstudio": "http://127.0.0.1:1234/v1", "vllm": "http://127.0.0.1:8000/v1",
		"deepseek": "https://api.deepseek.com/v1", "openrouter": "https://openrouter.ai/api/v1", "groq": "https://api.groq.com/openai/v1",
		"mistral": "https://api.mistral.ai/v1", "xai": "https://api.x.ai/v1",
	} {
		if got, ok := DefaultBaseURL(p); !ok || got != want {
			t.Errorf("DefaultBaseURL(%q) = %q, %v", p, got, ok)
		}
	}
	if _, ok := DefaultBaseURL("aws"); ok {
		t.Error("aws has a default")
	}
}

package gateway_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"agentchat/internal/llm/llmtest"
)

// TestCostOnlyWhenAsked: usage carries cost_usd only when the client asks
// (X-Include-Cost, stream_options.include_cost, which also brings the
// usage chunk), and it is null for a model without prices, never 0.
func TestCostOnlyWhenAsked(t *testing.T) {
	e := newEnv(t, envOptions{})
	send := func(body string, header map[string]string) string {
		t.Helper()
		e.llm.Enqueue(llmtest.Reply{Text: "hi", Usage: &llmtest.Usage{PromptTokens: 10, CompletionTokens: 2}})
		req, _ := http.NewRequest(http.MethodPost, e.base+"/chat/completions", bytes.NewBufferString(body))
		req.Header.Set("Authorization", e.bearer())
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, b)
		}
		return string(b)
	}
	const plain = `{"model":"naked","messages":[{"role":"user","content":"x"}]}`
	const stream = `{"model":"naked","stream":true,"messages":[{"role":"user","content":"x"}]`
	for _, tc := range []struct {
		name, body string
		header     map[string]string
		want       string // "" : no cost_usd anywhere
	}{
		{"not asked", plain, nil, ""},
		{"header false", plain, map[string]string{"X-Include-Cost": "false"}, ""},
		{"header", plain, map[string]string{"X-Include-Cost": "true"}, `"total_tokens":12,"cost_usd":null}`},
		{"stream with usage, no cost", stream + `,"stream_options":{"include_usage":true}}`, nil, ""},
		{"stream include_cost", stream + `,"stream_options":{"include_cost":true}}`, nil, `"total_tokens":12,"cost_usd":null}}`},
		{"stream header", stream + `}`, map[string]string{"X-Include-Cost": "1"}, `"total_tokens":12,"cost_usd":null}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := send(tc.body, tc.header)
			switch {
			case tc.want == "" && strings.Contains(got, "cost_usd"):
				t.Fatalf("cost_usd not asked for, got %s", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Fatalf("want %s in %s", tc.want, got)
			}
		})
	}
}

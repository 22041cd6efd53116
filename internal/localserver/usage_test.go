package localserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/syncbuf"

	"github.com/google/uuid"
)

// costNanos is the hand-computed cost of one call, in nano-dollars: prices
// in USD per million tokens are nano-dollars per thousandth of a token.
func costNanos(in, cached, out int, inPrice, cachedPrice, outPrice float64) int64 {
	return int64((float64(in-cached)*inPrice + float64(cached)*cachedPrice + float64(out)*outPrice) * 1000)
}

// usageTotals is the part of a usage report the test reads.
type usageTotals struct {
	LLMCalls          int64    `json:"llm_calls"`
	InputTokens       int64    `json:"input_tokens"`
	CachedInputTokens int64    `json:"cached_input_tokens"`
	OutputTokens      int64    `json:"output_tokens"`
	CostUSD           *float64 `json:"cost_usd"`
	CostNanos         int64    `json:"cost_nanos"`
	Unpriced          int64    `json:"unpriced_llm_calls"`
}

type usageReport struct {
	From, To, GroupBy string
	Total             usageTotals `json:"total"`
	Data              []struct {
		Day       string  `json:"day"`
		Model     string  `json:"model"`
		KeyID     *string `json:"key_id"`
		ProjectID *string `json:"project_id"`
		SessionID *string `json:"session_id"`
		usageTotals
	} `json:"data"`
}

// TestUsageLedger runs priced and unpriced turns with known token counts
// through the project chat and the /v1 gateway, and checks that the
// session statistics, the /v1 usage and both usage routes sum them to the
// nano-dollar, also after the server restarted on the same file.
func TestUsageLedger(t *testing.T) {
	server, own := llmtest.NewServer(t), llmtest.NewServer(t)
	vars := map[string]string{
		"ADDR": "127.0.0.1:0", "DATA_DIR": t.TempDir(), "JWT_SECRET": cfgSecret,
		"OPENAI_BASE_URL": server.BaseURL(), "OPENAI_API_KEY": "sk-server-default", "OPENAI_MODEL": "server-model",
		"OPENAI_PRICES":           `{"input_cost_per_mtok": 2.5, "output_cost_per_mtok": 10, "cached_input_cost_per_mtok": 1.25}`,
		"LLM_ALLOW_PRIVATE_HOSTS": "127.0.0.1/32",
	}
	url, _, _, stop := start(t, vars)
	v, _ := auth.NewJWTVerifier([]byte(cfgSecret), time.Now)
	issue := func(name string) string { tok, _ := v.Issue(name, time.Hour); return tok }
	bodies := &syncbuf.Buffer{}
	alice := user{t: t, url: url, token: issue("alice"), bodies: bodies}
	bob := user{t: t, url: url, token: issue("bob"), bodies: bodies}

	// 1. A project turn on the server default (OPENAI_PRICES): the answer
	// (with cached tokens) and the new session's title.
	server.Enqueue(llmtest.Reply{Text: "hello", Usage: &llmtest.Usage{PromptTokens: 1200, CompletionTokens: 300, CachedTokens: 400}},
		llmtest.Reply{Text: "Greeting", Usage: &llmtest.Usage{PromptTokens: 50, CompletionTokens: 4}})
	sid := uuid.NewString()
	if st, out := alice.do(http.MethodPost, "/v3/projects/"+project+"/chat/stream", map[string]any{"message": "hi", "session_id": sid, "stream": false}); st != http.StatusOK {
		t.Fatalf("project turn: %d %v", st, out)
	}
	waitRequests(t, server, 2)
	projectCost := costNanos(1200, 400, 300, 2.5, 1.25, 10) + costNanos(50, 0, 4, 2.5, 1.25, 10)

	// 2. Alice's own priced configuration (prices as a form sends them,
	// no cached price: cached tokens cost the input price), then a /v1
	// completion with her API key, asking for the cost.
	st, created := alice.do(http.MethodPost, "/v3/access/users/me/llm-model-configs", map[string]any{
		"name": "Mine", "model_type": "text", "is_default": true,
		"config": map[string]any{"provider": "openai", "base_url": own.BaseURL(), "model": "alice-model", "context_limit": 8,
			"input_cost_per_mtok": "0.15", "output_cost_per_mtok": 0.6},
	})
	if st != http.StatusCreated {
		t.Fatalf("create config: %d %v", st, created)
	}
	st, key := alice.do(http.MethodPost, "/v3/access/users/me/api-keys", map[string]any{"name": "webui"})
	if st != http.StatusCreated {
		t.Fatalf("create key: %d %v", st, key)
	}
	keyID, secret := key["id"].(string), key["key"].(string)
	own.Enqueue(llmtest.Reply{Text: "json", Usage: &llmtest.Usage{PromptTokens: 700, CompletionTokens: 90, CachedTokens: 100}})
	byKey := user{t: t, url: url, token: secret, bodies: bodies}
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(`{"model": "default", "messages": [{"role": "user", "content": "x"}]}`))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("X-Include-Cost", "true")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var completion struct {
		Usage struct {
			PromptTokens int      `json:"prompt_tokens"`
			CostUSD      *float64 `json:"cost_usd"`
		} `json:"usage"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&completion)
	resp.Body.Close()
	keyCost := costNanos(700, 100, 90, 0.15, 0.15, 0.6)
	if resp.StatusCode != http.StatusOK || completion.Usage.CostUSD == nil || *completion.Usage.CostUSD != float64(keyCost)/1e9 {
		t.Fatalf("/v1 completion with X-Include-Cost: %d, usage %+v, want cost_usd %v", resp.StatusCode, completion.Usage, float64(keyCost)/1e9)
	}

	// A price that is not one is refused when the configuration is written.
	if st, out := bob.do(http.MethodPost, "/v3/access/users/me/llm-model-configs", map[string]any{
		"name": "Bad", "model_type": "text", "config": map[string]any{"provider": "openai", "base_url": own.BaseURL(), "model": "m",
			"context_limit": 8, "input_cost_per_mtok": -1, "output_cost_per_mtok": 1},
	}); st != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(out["message"]), "config.input_cost_per_mtok") {
		t.Fatalf("a negative price: %d %v", st, out)
	}

	// 3. Bob's configuration has no prices: his cost is unknown, not 0.
	if st, out := bob.do(http.MethodPost, "/v3/access/users/me/llm-model-configs", map[string]any{
		"name": "Free?", "model_type": "text", "is_default": true,
		"config": map[string]any{"provider": "openai", "base_url": own.BaseURL(), "model": "bob-model", "context_limit": 8},
	}); st != http.StatusCreated {
		t.Fatalf("bob's config: %d %v", st, out)
	}
	own.Enqueue(llmtest.Reply{Text: "hi bob", Usage: &llmtest.Usage{PromptTokens: 10, CompletionTokens: 2}},
		llmtest.Reply{Text: "Bob", Usage: &llmtest.Usage{PromptTokens: 5, CompletionTokens: 1}})
	bobSession := uuid.NewString()
	if st, out := bob.do(http.MethodPost, "/v3/projects/"+project+"/chat/stream", map[string]any{"message": "hi", "session_id": bobSession, "stream": false}); st != http.StatusOK {
		t.Fatalf("bob's turn: %d %v", st, out)
	}
	waitRequests(t, own, 3)

	check := func(u user, path string, want func(r usageReport) string) {
		t.Helper()
		// The title's call is recorded when its turn finishes: poll.
		var (
			rep usageReport
			why string
		)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			st, b := u.raw(http.MethodGet, path, nil)
			if st != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, st, b)
			}
			rep = usageReport{}
			if err := json.Unmarshal(b, &rep); err != nil {
				t.Fatalf("GET %s: %v: %s", path, err, b)
			}
			if why = want(rep); why == "" {
				return
			}
		}
		t.Fatalf("GET %s: %s (report %+v)", path, why, rep)
	}
	ledger := func(u user) {
		check(u, "/v3/access/users/me/usage?group_by=session", func(r usageReport) string {
			if r.Total.CostNanos != projectCost+keyCost || r.Total.LLMCalls != 3 || r.Total.Unpriced != 0 || len(r.Data) != 2 {
				return fmt.Sprintf("total %+v, want %d nanos over 3 calls in 2 groups", r.Total, projectCost+keyCost)
			}
			byKeyRun, bySession := r.Data[0], r.Data[1] // "" sorts first: the stateless run
			if *byKeyRun.SessionID != "" || byKeyRun.CostNanos != keyCost || *bySession.SessionID != sid || *bySession.ProjectID != project || bySession.CostNanos != projectCost {
				return "the two sessions' costs differ from the hand-computed ones"
			}
			if bySession.CachedInputTokens != 400 || bySession.InputTokens != 1250 || bySession.OutputTokens != 304 {
				return fmt.Sprintf("the session's tokens: %+v", bySession.usageTotals)
			}
			return ""
		})
		check(u, "/v3/access/users/alice/usage?group_by=key", func(r usageReport) string {
			if len(r.Data) != 2 || *r.Data[0].KeyID != "" || r.Data[0].CostNanos != projectCost || *r.Data[1].KeyID != keyID || r.Data[1].CostNanos != keyCost {
				return "costs by key differ"
			}
			return ""
		})
		check(u, "/v3/access/users/me/usage?group_by=model", func(r usageReport) string {
			if len(r.Data) != 2 || r.Data[0].Model != "alice-model" || r.Data[1].Model != "server-model" || r.Data[1].LLMCalls != 2 {
				return "costs by model differ"
			}
			return ""
		})
		today := time.Now().UTC().Format("2006-01-02")
		check(u, "/v3/access/users/me/usage?from="+today+"&to="+today, func(r usageReport) string {
			if len(r.Data) != 1 || r.Data[0].Day != today || r.Data[0].CostUSD == nil || *r.Data[0].CostUSD != float64(projectCost+keyCost)/1e9 {
				return "today's cost differs"
			}
			return ""
		})
		check(u, "/v3/access/users/me/usage?from=2000-01-01&to=2000-01-31", func(r usageReport) string {
			if len(r.Data) != 0 || r.Total.LLMCalls != 0 || r.Total.CostUSD == nil || *r.Total.CostUSD != 0 {
				return "a month without calls is not empty"
			}
			return ""
		})
	}
	ledger(alice)
	// The key sees its own usage only.
	check(byKey, "/v1/usage", func(r usageReport) string {
		if r.Total.CostNanos != keyCost || r.Total.LLMCalls != 1 || len(r.Data) != 1 {
			return "the key's usage differs"
		}
		return ""
	})
	// Bob's calls were never priced: unknown, not free.
	check(bob, "/v3/access/users/me/usage", func(r usageReport) string {
		if r.Total.CostUSD != nil || r.Total.Unpriced != 2 || r.Total.LLMCalls != 2 {
			return "bob's unpriced calls"
		}
		return ""
	})
	sessionCost := func(u user, id string) (any, any) {
		st, b := u.raw(http.MethodGet, "/v3/projects/"+project+"/chat/sessions", nil)
		var list []struct {
			ThreadID string         `json:"thread_id"`
			Stats    map[string]any `json:"stats"`
		}
		if err := json.Unmarshal(b, &list); st != http.StatusOK || err != nil {
			t.Fatalf("list sessions: %d %s", st, b)
		}
		for _, s := range list {
			if s.ThreadID == id {
				return s.Stats["cost_usd"], s.Stats["unpriced_llm_calls"]
			}
		}
		t.Fatalf("session %s not listed: %s", id, b)
		return nil, nil
	}
	if c, n := sessionCost(alice, sid); c != float64(projectCost)/1e9 || n != 0.0 {
		t.Errorf("alice's session stats: cost_usd %v, unpriced %v; want %v, 0", c, n, float64(projectCost)/1e9)
	}
	if c, n := sessionCost(bob, bobSession); c != nil || n != 2.0 {
		t.Errorf("bob's session stats: cost_usd %v, unpriced %v; want null, 2", c, n)
	}

	// Bad queries: a clear 400 naming what is wrong.
	for _, q := range []string{"?group_by=week", "?from=yesterday", "?from=2026-02-01&to=2026-01-01", "?from=2020-01-01&to=2026-01-01"} {
		if st, out := alice.do(http.MethodGet, "/v3/access/users/me/usage"+q, nil); st != http.StatusBadRequest || out["message"] == nil {
			t.Errorf("usage%s: %d %v, want 400 with a message", q, st, out)
		}
	}
	if st, _ := alice.do(http.MethodGet, "/v3/access/users/bob/usage", nil); st != http.StatusForbidden {
		t.Errorf("alice reading bob's usage: %d, want 403", st)
	}
	if st, out := byKey.do(http.MethodGet, "/v1/usage?group_by=week", nil); st != http.StatusBadRequest || out["error"].(map[string]any)["param"] != "group_by" {
		t.Errorf("/v1/usage with a bad group_by: %d %v", st, out)
	}

	// The ledger survives a restart: another server on the same file.
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	url2, _, _, _ := start(t, vars)
	alice.url = url2
	ledger(alice)
}

// waitRequests waits until the scripted server received n requests.
func waitRequests(t *testing.T, s *llmtest.Server, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); len(s.Requests()) < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the scripted LLM got %d requests, want %d", len(s.Requests()), n)
		}
	}
}

package localserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"agentchat/internal/llm/llmtest"

	"github.com/google/uuid"
)

const budgetAdminToken = "budget-admin-token-0123456789abcdef-xyz"

// TestBudgets: an administrator sets alice's monthly budget; a turn that
// crosses it stops after the LLM call that crossed it (its tool is not
// run), the next is refused before any LLM call (402 with the budget
// named); an API key's own budget refuses /v1 with 429 insufficient_quota
// before any LLM call; only the admin token sets budgets and a key cannot
// lift its own.
func TestBudgets(t *testing.T) {
	l := newCopilotLabWith(t, false, map[string]string{
		"ADMIN_TOKEN":   budgetAdminToken,
		"OPENAI_PRICES": `{"input_cost_per_mtok": 1000, "output_cost_per_mtok": 1000}`, // $0.001 a token
	})
	l.gns3.SeedTopology(l.project)
	admin := user{t: t, url: l.url, token: budgetAdminToken, bodies: nil}
	put := func(u user, path string, body any) (int, map[string]any) {
		t.Helper()
		st, b := sendJSON(t, u.url, u.token, http.MethodPut, path, body)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		return st, out
	}
	// Only the admin token sets a budget, and it names the user by id.
	if st, out := put(user{t: t, url: l.url, token: l.token}, "/v3/access/users/me/budget", map[string]any{"max_budget_usd": 100}); st != http.StatusForbidden {
		t.Fatalf("alice sets her own budget: %d %v", st, out)
	}
	if st, out := put(admin, "/v3/access/users/me/budget", map[string]any{"max_budget_usd": 1}); st != http.StatusBadRequest {
		t.Fatalf("admin on 'me': %d %v", st, out)
	}
	if st, out := put(admin, "/v3/access/users/alice/budget", map[string]any{"max_budget_usd": "lots"}); st != http.StatusUnprocessableEntity {
		t.Fatalf("a budget that is not a number: %d %v", st, out)
	}
	st, out := put(admin, "/v3/access/users/alice/budget", map[string]any{"max_budget_usd": 0.5, "budget_period": "month"})
	if st != http.StatusOK || out["max_budget_usd"] != 0.5 || out["budget_period"] != "month" || out["left_usd"] != 0.5 {
		t.Fatalf("set alice's budget: %d %v", st, out)
	}

	// 100 + 50 tokens = $0.15: within the budget.
	l.llm.Enqueue(llmtest.Reply{Text: "Hello.", Usage: &llmtest.Usage{PromptTokens: 100, CompletionTokens: 50}},
		llmtest.Reply{Text: "Hi", Usage: &llmtest.Usage{PromptTokens: 0, CompletionTokens: 0}})
	sid := uuid.NewString()
	if evs := l.stream(map[string]any{"message": "hi", "session_id": sid}, nil); evs[len(evs)-1].Type != "done" {
		t.Fatalf("first turn: %+v", evs)
	}
	waitRequests(t, l.llm, 2)

	// The next call costs $0.40: it crosses the budget; its tool call is
	// not run and the turn ends with an error naming the budget.
	l.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_topo", Name: "gns3_topology_reader", Arguments: `{}`}},
		Usage: &llmtest.Usage{PromptTokens: 300, CompletionTokens: 100}})
	evs := l.stream(map[string]any{"message": "what is in my lab?", "session_id": sid}, nil)
	var errText string
	for _, ev := range evs {
		if ev.Type == "tool_start" || ev.Type == "tool_end" {
			t.Errorf("a tool ran after the budget was crossed: %+v", ev)
		}
		if ev.Type == "error" {
			errText = ev.Error
		}
	}
	if !strings.Contains(errText, "monthly budget of $0.50 is spent") {
		t.Fatalf("the turn that crossed the budget ended with %q", errText)
	}
	if n := len(l.llm.Requests()); n != 3 {
		t.Fatalf("the LLM got %d requests, want 3", n)
	}

	// Over budget: refused before any LLM call, the budget named.
	st, body := l.do(http.MethodPost, "/v3/projects/"+l.project+"/chat/stream", map[string]any{"message": "again", "session_id": sid})
	if st != http.StatusPaymentRequired || !strings.Contains(string(body), "Your monthly budget of $0.50 is spent ($0.55 used this month, UTC)") {
		t.Fatalf("a turn over budget: %d %s", st, body)
	}
	if n := len(l.llm.Requests()); n != 3 {
		t.Fatalf("the LLM was called over budget: %d requests", n)
	}
	if st, body := l.do(http.MethodGet, "/v3/access/users/me/budget", nil); st != http.StatusOK || !strings.Contains(string(body), `"spent_usd":0.55`) || !strings.Contains(string(body), `"left_usd":0`) {
		t.Fatalf("alice's budget: %d %s", st, body)
	}

	// A key's own budget, with the user's budget lifted.
	if st, out := put(admin, "/v3/access/users/alice/budget", map[string]any{"max_budget_usd": nil}); st != http.StatusOK || out["max_budget_usd"] != nil {
		t.Fatalf("remove alice's budget: %d %v", st, out)
	}
	st, key := l.doJSON(http.MethodPost, "/v3/access/users/me/api-keys", map[string]any{"name": "capped", "max_budget_usd": 0.2, "budget_period": "day"})
	if st != http.StatusCreated {
		t.Fatalf("create key: %d %v", st, key)
	}
	if key["max_budget_usd"] != 0.2 || key["budget_period"] != "day" {
		t.Fatalf("the key's limits: %v", key)
	}
	secret, keyID := key["key"].(string), key["id"].(string)
	complete := func() (int, []byte) {
		return sendJSON(t, l.url, secret, http.MethodPost, "/v1/chat/completions",
			map[string]any{"model": "default", "messages": []map[string]any{{"role": "user", "content": "x"}}})
	}
	l.llm.Enqueue(llmtest.Reply{Text: "ok", Usage: &llmtest.Usage{PromptTokens: 150, CompletionTokens: 100}}) // $0.25
	if st, body := complete(); st != http.StatusOK {
		t.Fatalf("first /v1 call: %d %s", st, body)
	}
	n := len(l.llm.Requests())
	st, body = complete()
	var oe struct {
		Error struct {
			Type, Code, Message string
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &oe)
	if st != http.StatusTooManyRequests || oe.Error.Type != "insufficient_quota" || oe.Error.Code != "insufficient_quota" ||
		!strings.Contains(oe.Error.Message, "This API key's daily budget of $0.20 is spent") || len(l.llm.Requests()) != n {
		t.Fatalf("/v1 over the key's budget: %d %s (LLM requests %d, were %d)", st, body, len(l.llm.Requests()), n)
	}
	// The key cannot lift its own budget; the user can.
	if st, b := sendJSON(t, l.url, secret, http.MethodPatch, "/v3/access/users/me/api-keys/"+keyID, map[string]any{"max_budget_usd": 5}); st != http.StatusForbidden {
		t.Fatalf("a key raising its own budget: %d %s", st, b)
	}
	if st, b := l.do(http.MethodPatch, "/v3/access/users/me/api-keys/"+keyID, map[string]any{"max_budget_usd": nil}); st != http.StatusOK || !strings.Contains(string(b), `"max_budget_usd":null`) {
		t.Fatalf("alice lifting her key's budget: %d %s", st, b)
	}
	l.llm.Enqueue(llmtest.Reply{Text: "ok again"})
	if st, body := complete(); st != http.StatusOK {
		t.Fatalf("/v1 once the budget is lifted: %d %s", st, body)
	}
}

// doJSON is do with the body decoded as an object.
func (l *copilotLab) doJSON(method, path string, body any) (int, map[string]any) {
	l.t.Helper()
	st, b := l.do(method, path, body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return st, out
}

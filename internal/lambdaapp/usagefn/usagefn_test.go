package usagefn_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/httpapi/usageapi"
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/chatfn"
	"agentchat/internal/lambdaapp/gatewayfn"
	"agentchat/internal/lambdaapp/lambdatest"
	"agentchat/internal/lambdaapp/usagefn"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store"
)

var endpoint string

func TestMain(m *testing.M) { os.Exit(lambdatest.WithDynalite(m, &endpoint)) }

type totals struct {
	LLMCalls  int64    `json:"llm_calls"`
	CostUSD   *float64 `json:"cost_usd"`
	CostNanos int64    `json:"cost_nanos"`
}

type report struct {
	Total totals `json:"total"`
	Data  []struct {
		SessionID *string `json:"session_id"`
		totals
	} `json:"data"`
}

// TestLedgerOnDynamoDB runs a project turn (chat-stream) and a /v1
// completion (openai) with known token counts and OPENAI_PRICES on one
// table, then reads the ledger through usage-get and the openai
// function's /v1/usage: the sums equal the hand-computed costs to the
// nano-dollar, and the session's statistics carry its cost.
func TestLedgerOnDynamoDB(t *testing.T) {
	llm := llmtest.NewServer(t)
	vars := map[string]string{
		"TABLE_NAME": "t-" + uuid.NewString(), "OPENAI_BASE_URL": llm.BaseURL(), "OPENAI_API_KEY": "sk-test", "OPENAI_MODEL": "m",
		"OPENAI_PRICES": `{"input_cost_per_mtok": 3, "output_cost_per_mtok": 15, "cached_input_cost_per_mtok": 0.3}`,
	}
	fx := func(fns []lambdaapp.Func, name string) *lambdatest.Fixture {
		f, err := lambdaapp.Find(fns, name)
		if err != nil {
			t.Fatal(err)
		}
		return lambdatest.New(t, endpoint, f, vars)
	}
	chat, openai, usage := fx(chatfn.Funcs(), "chat-stream"), fx(gatewayfn.Funcs(), "openai"), fx(usagefn.Funcs(), "usage-get")
	alice := chat.Auth("alice")
	// nanos is the hand-computed cost of a call.
	nanos := func(in, cached, out int64) int64 { return (in-cached)*3000 + cached*300 + out*15000 }

	llm.Enqueue(llmtest.Reply{Text: "Hello", Usage: &llmtest.Usage{PromptTokens: 900, CompletionTokens: 40, CachedTokens: 600}},
		llmtest.Reply{Text: "Greeting", Usage: &llmtest.Usage{PromptTokens: 30, CompletionTokens: 2}})
	sid := uuid.NewString()
	resp := chat.Stream(http.MethodPost, "/v3/projects/p1/chat/stream", alice, `{"message":"hi","session_id":"`+sid+`"}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("project turn: %d %s", resp.StatusCode, resp.Body)
	}
	projectCost := nanos(900, 600, 40) + nanos(30, 0, 2)

	llm.Enqueue(llmtest.Reply{Text: "Streamed", Usage: &llmtest.Usage{PromptTokens: 100, CompletionTokens: 10}})
	resp = openai.Stream(http.MethodPost, "/v1/chat/completions", alice,
		`{"model":"naked","stream":true,"stream_options":{"include_cost":true},"messages":[{"role":"user","content":"hi"}]}`)
	chunks := lambdatest.SSEData(resp.Body)
	var last struct {
		Usage struct {
			CostUSD *float64 `json:"cost_usd"`
		} `json:"usage"`
	}
	if len(chunks) < 2 || json.Unmarshal([]byte(chunks[len(chunks)-2]), &last) != nil || last.Usage.CostUSD == nil ||
		*last.Usage.CostUSD != float64(nanos(100, 0, 10))/1e9 {
		t.Fatalf("the usage chunk with include_cost: %q", chunks)
	}
	v1Cost := nanos(100, 0, 10)

	// The title's call ends with its turn; poll the ledger.
	var rep report
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r := usage.API("GET "+usageapi.PathUsage, "/v3/access/users/me/usage?group_by=session", alice, "")
		if r.Status != http.StatusOK {
			t.Fatalf("usage: %d %s", r.Status, r.Body)
		}
		rep = report{}
		r.JSON(t, &rep)
		if rep.Total.CostNanos == projectCost+v1Cost || time.Now().After(deadline) {
			break
		}
	}
	if rep.Total.CostNanos != projectCost+v1Cost || rep.Total.LLMCalls != 3 || len(rep.Data) != 2 ||
		*rep.Data[0].SessionID != "" || rep.Data[0].CostNanos != v1Cost || *rep.Data[1].SessionID != sid || rep.Data[1].CostNanos != projectCost {
		t.Fatalf("ledger by session: %+v, want %d + %d nanos", rep, projectCost, v1Cost)
	}
	r := openai.Stream(http.MethodGet, "/v1/usage", alice, "")
	var own report
	if err := json.Unmarshal(r.Body, &own); err != nil || r.StatusCode != http.StatusOK || own.Total.CostNanos != projectCost+v1Cost {
		t.Fatalf("/v1/usage with a token: %d %s", r.StatusCode, r.Body)
	}
	sess, err := chat.Store.GetSession(t.Context(), store.Key{ProjectID: "p1", UserID: "alice", ThreadID: sid})
	if err != nil || sess.Stats.CostNanos != projectCost || sess.Stats.UnpricedCalls != 0 {
		t.Fatalf("session stats: %+v, %v; want %d nanos", sess.Stats, err, projectCost)
	}

	// A monthly budget below what alice spent, set by the admin through
	// budget-set: both the project chat and /v1 refuse her before any LLM
	// call.
	set := fx(usagefn.Funcs(), "budget-set")
	admin := map[string]string{"Authorization": "Bearer " + lambdatest.AdminToken, "Content-Type": "application/json"}
	if r := set.API("PUT "+usageapi.PathBudget, "/v3/access/users/alice/budget", admin, `{"max_budget_usd": 0.001, "budget_period": "month"}`); r.Status != http.StatusOK {
		t.Fatalf("budget-set: %d %s", r.Status, r.Body)
	}
	if r := set.API("PUT "+usageapi.PathBudget, "/v3/access/users/alice/budget", alice, `{"max_budget_usd": 9}`); r.Status != http.StatusForbidden {
		t.Fatalf("budget-set by alice herself: %d %s", r.Status, r.Body)
	}
	n := len(llm.Requests())
	resp = chat.Stream(http.MethodPost, "/v3/projects/p1/chat/stream", alice, `{"message":"more","session_id":"`+sid+`"}`)
	if resp.StatusCode != http.StatusPaymentRequired || !strings.Contains(string(resp.Body), "Your monthly budget of $0.001 is spent") {
		t.Fatalf("a project turn over budget: %d %s", resp.StatusCode, resp.Body)
	}
	resp = openai.Stream(http.MethodPost, "/v1/chat/completions", alice, `{"model":"naked","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(resp.Body), `"insufficient_quota"`) {
		t.Fatalf("/v1 over budget: %d %s", resp.StatusCode, resp.Body)
	}
	if len(llm.Requests()) != n {
		t.Fatalf("the LLM was called over budget")
	}
	get := fx(usagefn.Funcs(), "budget-get")
	if r := get.API("GET "+usageapi.PathBudget, "/v3/access/users/me/budget", alice, ""); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"left_usd":0`) {
		t.Fatalf("budget-get: %d %s", r.Status, r.Body)
	}
}

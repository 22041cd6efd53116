package gatewayfn_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"agentchat/internal/httpapi/gateway"
	"agentchat/internal/httpapi/gateway/openaiwire"
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/gatewayfn"
	"agentchat/internal/lambdaapp/lambdatest"
	"agentchat/internal/llm/llmtest"
)

var endpoint string

func TestMain(m *testing.M) { os.Exit(lambdatest.WithDynalite(m, &endpoint)) }

func fixture(t *testing.T, name string, llm *llmtest.Server) *lambdatest.Fixture {
	t.Helper()
	f, err := lambdaapp.Find(gatewayfn.Funcs(), name)
	if err != nil {
		t.Fatal(err)
	}
	var vars map[string]string
	if llm != nil {
		vars = map[string]string{"OPENAI_BASE_URL": llm.BaseURL(), "OPENAI_API_KEY": "sk-test"}
	}
	return lambdatest.New(t, endpoint, f, vars)
}

func TestChatSyncAndStream(t *testing.T) {
	llm := llmtest.NewServer(t)
	sync := fixture(t, "v1-chat-sync", llm)
	llm.Enqueue(llmtest.Reply{Text: "Hello sync"})
	resp := sync.API("POST "+gateway.PathChatSync, "/v1/chat/sync", sync.Auth("alice"), `{"message":"hi"}`)
	var out openaiwire.SyncResponse
	resp.JSON(t, &out)
	if resp.Status != http.StatusOK || out.Response != "Hello sync" || out.AgentID == "" {
		t.Fatalf("sync: %d %s", resp.Status, resp.Body)
	}

	stream := fixture(t, "v1-chat", llm)
	llm.Enqueue(llmtest.Reply{Chunks: []string{"Hel", "lo"}})
	sresp := stream.Stream(http.MethodPost, "/v1/chat", stream.Auth("alice"), `{"message":"hi"}`)
	got := lambdatest.SSEData(sresp.Body)
	if sresp.StatusCode != http.StatusOK || sresp.Headers["Content-Type"] != "text/event-stream" ||
		strings.Join(got, "|") != `{"token":"Hel"}|{"token":"lo"}|[DONE]` {
		t.Fatalf("v1/chat: %d %v %q", sresp.StatusCode, sresp.Headers, got)
	}
}

func TestOpenAIFunction(t *testing.T) {
	llm := llmtest.NewServer(t)
	fx := fixture(t, "openai", llm)
	auth := fx.Auth("alice")

	resp := fx.Stream(http.MethodGet, "/v1/models", auth, "")
	var models struct {
		Object string `json:"object"`
		Data   []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(resp.Body, &models); err != nil || resp.StatusCode != http.StatusOK || models.Object != "list" || len(models.Data) == 0 {
		t.Fatalf("models: %d %s (%v)", resp.StatusCode, resp.Body, err)
	}
	if resp := fx.Stream(http.MethodGet, "/v1/models/"+models.Data[0].ID, auth, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("model %s: %d %s", models.Data[0].ID, resp.StatusCode, resp.Body)
	}

	llm.Enqueue(llmtest.Reply{Text: "Plain answer"})
	resp = fx.Stream(http.MethodPost, "/v1/chat/completions", auth, `{"model":"naked","messages":[{"role":"user","content":"hi"}]}`)
	var completion struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(resp.Body, &completion); err != nil || len(completion.Choices) != 1 || completion.Choices[0].Message.Content != "Plain answer" {
		t.Fatalf("completion: %d %s (%v)", resp.StatusCode, resp.Body, err)
	}

	llm.Enqueue(llmtest.Reply{Chunks: []string{"Str", "eamed"}})
	resp = fx.Stream(http.MethodPost, "/v1/chat/completions", auth, `{"model":"naked","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	chunks := lambdatest.SSEData(resp.Body)
	if resp.Headers["Content-Type"] != "text/event-stream" || len(chunks) < 3 || chunks[len(chunks)-1] != "[DONE]" {
		t.Fatalf("streamed completion: %v %q", resp.Headers, chunks)
	}
	var text strings.Builder
	for _, c := range chunks[:len(chunks)-1] {
		text.WriteString(lambdatest.DeltaContent(c))
	}
	if text.String() != "Streamed" {
		t.Fatalf("streamed text %q", text.String())
	}
}

// deadlineOnly reports a deadline but is never done itself: only the
// function's own bound can stop a run that waits on a silent LLM.
type deadlineOnly struct {
	context.Context
	deadline time.Time
}

func (c deadlineOnly) Deadline() (time.Time, bool) { return c.deadline, true }

// TestChatSyncStopsBeforeTheDeadline runs v1-chat-sync against an LLM that
// never answers: the function must answer an OpenAI-shaped 504 itself
// before the invocation's deadline, not leave API Gateway to answer.
func TestChatSyncStopsBeforeTheDeadline(t *testing.T) {
	llm := llmtest.NewServer(t)
	fx := fixture(t, "v1-chat-sync", llm)
	llm.Enqueue(llmtest.Reply{Hang: true})
	ev, err := lambdatest.APIRequest("POST "+gateway.PathChatSync, "/v1/chat/sync", fx.Auth("alice"), `{"message":"hi"}`)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		resp events.APIGatewayV2HTTPResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := lambdaapp.APIGateway(fx.Handler)(deadlineOnly{context.Background(), time.Now().Add(3 * time.Second)}, ev)
		done <- result{resp, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(time.Minute):
		t.Fatal("v1-chat-sync was not stopped before the invocation's deadline")
	}
	var body struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if r.err != nil || r.resp.StatusCode != http.StatusGatewayTimeout || json.Unmarshal([]byte(r.resp.Body), &body) != nil ||
		body.Error == nil || body.Error.Type != "server_error" || body.Error.Message == "" {
		t.Fatalf("answer %d %s (%v), want an OpenAI-shaped 504", r.resp.StatusCode, r.resp.Body, r.err)
	}
}

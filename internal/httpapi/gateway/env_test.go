package gateway_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/agents"
	"agentchat/internal/auth"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/apikeys"
	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/httpapi/gateway"
	"agentchat/internal/httpapi/gateway/openaiwire"
	"agentchat/internal/llm"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/seerr"
	"agentchat/internal/seerr/seerrtest"
	"agentchat/internal/store"
)

// llmKey is the provider key of the scripted LLM; it must never reach a
// client.
const llmKey = "sk-test-PROVIDER-SECRET-0123456789"

var discard = slog.New(slog.DiscardHandler)

// env is the gateway and API-key routes on a real server, over SQLite, a
// scripted LLM and a Seerr fake.
type env struct {
	t     testing.TB
	api   *apitest.Env
	llm   *llmtest.Server
	seerr *seerrtest.Server
	// base is the OpenAI base URL (…/v1).
	base string
}

type envOptions struct {
	// noLLM: no LLM configured.
	noLLM bool
	// client replaces the LLM client.
	client llm.Client
	// registry replaces the default registry (built over the Seerr fake).
	registry  func(sc *seerr.Client) *agent.Registry
	heartbeat time.Duration
	timeout   time.Duration
	// singleUser runs without a JWT secret.
	singleUser bool
	// wrap, when set, wraps the handler of every route.
	wrap func(http.HandlerFunc) http.HandlerFunc
	// now is the gateway's clock (nil: time.Now).
	now func() time.Time
	// store replaces the env's own SQLite store (two envs on one store
	// are two instances of the service).
	store store.Store
}

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	e := &env{t: t, llm: llmtest.NewServer(t), seerr: seerrtest.New("seerr-test-key")}
	t.Cleanup(e.seerr.Close)
	sc, err := seerr.New(seerr.Config{BaseURL: e.seerr.URL, APIKey: e.seerr.APIKey})
	if err != nil {
		t.Fatal(err)
	}
	reg := agents.DefaultRegistry(agents.Deps{Seerr: sc})
	if o.registry != nil {
		reg = o.registry(sc)
	}
	var res llm.Resolver
	switch {
	case o.noLLM:
		res = llm.NewStaticResolver(nil)
	case o.client != nil:
		res = llm.NewStaticResolver(o.client)
	default:
		c, err := llm.NewClient(llm.Config{APIKey: llmKey, BaseURL: e.llm.BaseURL(), Model: "test-model", MaxRetries: -1},
			llm.WithLogger(discard))
		if err != nil {
			t.Fatal(err)
		}
		res = llm.NewStaticResolver(c)
	}
	e.api = apitest.New(t, apitest.Options{SingleUser: o.singleUser, Store: o.store}, func(st store.Store, _ *auth.Authenticator) []httpapi.Route {
		rt := agent.NewRuntime(agent.Options{Store: st, Agents: reg, LLM: res, Logger: discard})
		gw := gateway.New(gateway.Options{Runtime: rt, Agents: reg, Heartbeat: o.heartbeat, Timeout: o.timeout, Logger: discard,
			Now: o.now, Rates: st})
		routes := append(gw.Routes(), apikeys.New(st, apikeys.Options{}).Routes()...)
		if o.wrap != nil {
			for i := range routes {
				routes[i].Handler = o.wrap(routes[i].Handler)
			}
		}
		return routes
	})
	e.base = e.api.Server.URL + "/v1"
	return e
}

// bearer is a valid Authorization header for alice.
func (e *env) bearer() string { return "Bearer " + e.api.Token("alice") }

// post sends a JSON body as alice and reads the whole response.
func (e *env) post(path string, body any) *apitest.Response {
	e.t.Helper()
	return e.api.Do(http.MethodPost, path, e.bearer(), body)
}

// openAIError is the error body of the /v1 routes.
type openAIError struct {
	Error *struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// checkError asserts an OpenAI-shaped error with status and type.
func checkError(t testing.TB, r *apitest.Response, status int, typ string) openAIError {
	t.Helper()
	var body openAIError
	if err := json.Unmarshal(r.Body, &body); err != nil || body.Error == nil {
		t.Fatalf("status %d body %s: not an OpenAI error (%v)", r.Status, r.Body, err)
	}
	if r.Status != status || body.Error.Type != typ || body.Error.Message == "" {
		t.Fatalf("got %d %s, want %d type %s", r.Status, r.Body, status, typ)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("content type %q", ct)
	}
	return body
}

// events splits an SSE body into its data payloads and comments, failing
// on any other line.
func events(t testing.TB, body []byte) (data []string, comments []string) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		case strings.HasPrefix(line, ":"):
			comments = append(comments, line)
		default:
			t.Fatalf("unexpected SSE line %q in %s", line, body)
		}
	}
	return data, comments
}

// rawChunk is a chat.completion.chunk as seen on the wire.
type rawChunk struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"`
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Usage   json.RawMessage `json:"usage"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role             string  `json:"role"`
			Content          *string `json:"content"`
			ReasoningContent string  `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Error json.RawMessage `json:"error"`
}

// streamSummary checks the invariants of a completion stream and
// summarizes it.
type streamSummary struct {
	chunks    []rawChunk
	content   string
	reasoning string
	finish    string
	usage     *openaiwire.Usage
	errorMsg  string
}

func parseCompletionStream(t testing.TB, body []byte) streamSummary {
	t.Helper()
	if bytes.Contains(body, []byte(`"error":null`)) {
		t.Fatalf(`stream carries "error":null: %s`, body)
	}
	if bytes.Contains(body, []byte(llmKey)) {
		t.Fatal("stream carries the provider key")
	}
	data, _ := events(t, body)
	if len(data) == 0 || data[len(data)-1] != "[DONE]" {
		t.Fatalf("stream does not end with [DONE]: %s", body)
	}
	var s streamSummary
	for i, d := range data[:len(data)-1] {
		if d == "[DONE]" {
			t.Fatalf("[DONE] before the end: %s", body)
		}
		var c rawChunk
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("chunk %d %q: %v", i, d, err)
		}
		if c.Error != nil {
			var eb openAIError
			if err := json.Unmarshal([]byte(d), &eb); err != nil || eb.Error == nil || eb.Error.Message == "" {
				t.Fatalf("malformed error event %q", d)
			}
			if i != len(data)-2 {
				t.Fatalf("error event is not the last before [DONE]: %s", body)
			}
			s.errorMsg = eb.Error.Message
			continue
		}
		if c.Object != "chat.completion.chunk" || c.ID == "" || c.Created == 0 || c.Model == "" {
			t.Fatalf("chunk %d lacks id/object/created/model: %s", i, d)
		}
		if len(s.chunks) > 0 {
			f := s.chunks[0]
			if c.ID != f.ID || c.Created != f.Created || c.Model != f.Model {
				t.Fatalf("chunk %d changes id/created/model: %s vs %+v", i, d, f)
			}
		} else if len(c.Choices) != 1 || c.Choices[0].Delta.Role != "assistant" {
			t.Fatalf("first chunk does not carry the role: %s", d)
		}
		s.chunks = append(s.chunks, c)
		if len(c.Choices) == 0 {
			if len(c.Usage) == 0 || string(c.Usage) == "null" {
				t.Fatalf("chunk without choices nor usage: %s", d)
			}
			var u openaiwire.Usage
			if err := json.Unmarshal(c.Usage, &u); err != nil {
				t.Fatal(err)
			}
			s.usage = &u
			continue
		}
		if s.usage != nil {
			t.Fatalf("chunk after the usage chunk: %s", d)
		}
		ch := c.Choices[0]
		if ch.Delta.Content != nil {
			s.content += *ch.Delta.Content
		}
		s.reasoning += ch.Delta.ReasoningContent
		if ch.FinishReason != nil {
			if s.finish != "" {
				t.Fatalf("two finish reasons: %s", body)
			}
			s.finish = *ch.FinishReason
		}
	}
	return s
}

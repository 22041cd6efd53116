package chat_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"agentchat/internal/httpapi/apitest"
	"agentchat/internal/httpapi/chat"
	"agentchat/internal/llm"
)

// TestStreamOpensBesideTheLLMCall: the headers and the opening comment of
// a stream leave once the turn's LLM request is out, before the LLM
// answers (the LLM here answers only once the client has them), and
// within OpenWithin when the turn makes no request to the network.
func TestStreamOpensBesideTheLLMCall(t *testing.T) {
	tests := []struct {
		name       string
		openWithin time.Duration
		// paused: the LLM is a client without network requests, which
		// answers once released; else the scripted LLM, held.
		paused bool
	}{
		{name: "LLM request out", openWithin: time.Hour},
		{name: "no network request", openWithin: 10 * time.Millisecond, paused: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnvOpts(t, time.Hour, apitest.Options{}, nil, func(o *chat.Options) { o.OpenWithin = tc.openWithin })
			release := make(chan struct{})
			if tc.paused {
				e.resolver.set(apitest.PausedClient{Gate: release, Then: []llm.Delta{{Content: "answer"}}})
			} else {
				g := apitest.NewLLMGate(t, e.llm)
				go func() {
					<-release
					g.Release(1)
				}()
			}
			b, err := json.Marshal(map[string]any{"message": "hold 1"})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a hang detector
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.Server.URL+path("/stream"), bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+e.Token("alice"))
			resp, err := e.Server.Client().Do(req)
			if err != nil {
				t.Fatalf("the stream did not open before the LLM answered: %v", err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			if line, err := br.ReadString('\n'); err != nil || line != ": stream open\n" {
				t.Fatalf("first line %q, %v; want the opening comment", line, err)
			}
			close(release)
			var rest strings.Builder
			if _, err := br.WriteTo(&rest); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(rest.String(), `"type":"content"`) || !strings.Contains(rest.String(), `"type":"done"`) {
				t.Fatalf("rest of the stream:\n%s", rest.String())
			}
		})
	}
}

package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"agentchat/internal/httpapi"
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/lambdatest"
	"agentchat/internal/llm/llmtest"
	"agentchat/internal/store/dynamo/dynalitetest"
)

// panicAtHeader asks a route wrapped by panicAtWrite to panic instead of
// writing the SSE data event of that number (1-based).
const panicAtHeader = "X-Test-Panic-At"

// panicWriter panics instead of writing its at-th SSE data event (with its
// id line, when it has one).
type panicWriter struct {
	http.ResponseWriter
	at, n int
}

func (w *panicWriter) Write(b []byte) (int, error) {
	if bytes.HasPrefix(b, []byte("data: ")) || bytes.HasPrefix(b, []byte("id: ")) {
		if w.n++; w.n == w.at {
			panic(fmt.Sprintf("injected panic at SSE event %d", w.n))
		}
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *panicWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// panicAtWrite wraps h so that a request with panicAtHeader panics in the
// handler's write of that event.
func panicAtWrite(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if at, err := strconv.Atoi(r.Header.Get(panicAtHeader)); err == nil && at > 0 {
			w = &panicWriter{ResponseWriter: w, at: at}
		}
		h(w, r)
	}
}

var routeParam = regexp.MustCompile(`\{[A-Za-z_]+(\.\.\.)?\}`)

// TestStreamFunctionsEndStreamsCutByAPanic: every streaming function of
// every surface (surfaces, which TestTemplateMatchesFunctions keeps equal
// to functions/), built as its main builds it with its real agents over a
// scripted LLM and served through lambdaurl, is asked each of its routes;
// each route that answers a stream is made to panic at each of its events
// and must still end the stream with an error event then done (the
// handlers' own recovery: the function adds no event of its own), and the
// function keeps serving.
func TestStreamFunctionsEndStreamsCutByAPanic(t *testing.T) {
	endpoint := dynalitetest.Start(t)
	scripted := llmtest.NewServer(t)
	scripted.SetDefault(llmtest.Reply{Text: "The lab looks fine."})
	vars := map[string]string{
		"OPENAI_BASE_URL": scripted.BaseURL(), "OPENAI_API_KEY": "sk-test", "OPENAI_MODEL": "test-model",
		"HEARTBEAT_SECONDS": "3600",
	}
	var streamed []string
	for _, funcs := range surfaces() {
		for _, f := range funcs {
			if f.Kind != lambdaapp.Stream || f.Build == nil {
				continue
			}
			build := f.Build
			f.Build = func(ctx context.Context, app *lambdaapp.App) ([]httpapi.Route, error) {
				routes, err := build(ctx, app)
				for i := range routes {
					routes[i].Handler = panicAtWrite(routes[i].Handler)
				}
				return routes, err
			}
			t.Run(f.Name, func(t *testing.T) {
				fx := lambdatest.New(t, endpoint, f, vars)
				for _, pattern := range f.Patterns {
					method, path, _ := strings.Cut(pattern, " ")
					for _, p := range (httpapi.Route{Path: path}).Paths() {
						for _, stream := range []bool{true, false} {
							name := fmt.Sprintf("%s %s stream=%v", method, p, stream)
							if checkStreamRoute(t, fx, name, method, p, stream) {
								streamed = append(streamed, method+" "+p)
							}
						}
					}
				}
			})
		}
	}
	for _, want := range []string{"POST /v3/projects/{project_id}/chat/stream", "POST /v1/chat", "POST /v1/chat/completions"} {
		if !slices.Contains(streamed, want) {
			t.Errorf("%s did not stream (streamed: %v)", want, streamed)
		}
	}
}

// checkStreamRoute asks the route of path (its parameters filled) and,
// when it streams, panics it at each event. It reports whether it
// streamed.
func checkStreamRoute(t *testing.T, fx *lambdatest.Fixture, name, method, path string, stream bool) bool {
	t.Helper()
	style := httpapi.StyleGNS3
	if strings.HasPrefix(path, "/v1/") {
		style = httpapi.StyleOpenAI
	}
	target := routeParam.ReplaceAllStringFunc(strings.ReplaceAll(path, "{$}", ""), func(string) string { return uuid.NewString() })
	body := ""
	if method == http.MethodPost {
		b, _ := json.Marshal(map[string]any{"message": "Check the lab.", "stream": stream,
			"messages": []any{map[string]any{"role": "user", "content": "Check the lab."}}})
		body = string(b)
	}
	ask := func(at int) lambdatest.StreamResponse {
		h := fx.Auth("alice")
		if at > 0 {
			h[panicAtHeader] = strconv.Itoa(at)
		}
		return fx.Stream(method, target, h, body)
	}
	base := ask(0)
	if !strings.HasPrefix(base.Headers["Content-Type"], "text/event-stream") {
		return false
	}
	n := len(lambdatest.SSEData(base.Body))
	if msg := streamEnd(style, base, false); msg != "" {
		t.Fatalf("%s without a panic: %s:\n%s", name, msg, base.Body)
	}
	for at := 1; at <= n; at++ {
		resp := ask(at)
		if msg := streamEnd(style, resp, true); msg != "" {
			t.Errorf("%s, panic at event %d of %d: %s:\n%s", name, at, n, msg, resp.Body)
		}
		if bytes.Contains(resp.Body, []byte("injected panic")) {
			t.Errorf("%s, panic at event %d: the panic reached the client:\n%s", name, at, resp.Body)
		}
		if again := ask(0); streamEnd(style, again, false) != "" {
			t.Fatalf("%s: the function does not serve after a panic at event %d:\n%s", name, at, again.Body)
		}
	}
	return true
}

// streamEnd says what is wrong with the end of a stream of style (""
// when nothing): the closing event must be last and only there, right
// after one error event when wantErr, with no error event otherwise.
func streamEnd(style httpapi.ErrorStyle, resp lambdatest.StreamResponse, wantErr bool) string {
	data := lambdatest.SSEData(resp.Body)
	if resp.StatusCode != http.StatusOK || len(data) == 0 {
		return fmt.Sprintf("status %d with %d events", resp.StatusCode, len(data))
	}
	errAt := -1
	for i, d := range data {
		var ev struct {
			Type  string          `json:"type"`
			Error json.RawMessage `json:"error"`
		}
		_ = json.Unmarshal([]byte(d), &ev)
		closing := d == "[DONE]"
		isErr := len(ev.Error) > 0 && string(ev.Error) != `""`
		if style == httpapi.StyleGNS3 {
			closing, isErr = ev.Type == "done", ev.Type == "error"
		}
		if closing != (i == len(data)-1) {
			return "the closing event is not exactly the last one"
		}
		if isErr {
			if errAt >= 0 {
				return "two error events"
			}
			errAt = i
		}
	}
	switch {
	case wantErr && errAt != len(data)-2:
		return "no error event right before the closing one"
	case !wantErr && errAt >= 0:
		return "an error event"
	}
	return ""
}

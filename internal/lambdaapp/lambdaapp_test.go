package lambdaapp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"agentchat/internal/httpapi"
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/lambdatest"
	"agentchat/internal/sse"
)

var endpoint string

func TestMain(m *testing.M) { os.Exit(lambdatest.WithDynalite(m, &endpoint)) }

// testFunc returns a function of kind serving routes.
func testFunc(kind lambdaapp.Kind, routes ...httpapi.Route) lambdaapp.Func {
	var patterns []string
	for _, rt := range routes {
		patterns = append(patterns, rt.Pattern())
	}
	return lambdaapp.NewFunc("test", kind, func(context.Context, *lambdaapp.App) ([]httpapi.Route, error) {
		return routes, nil
	}, patterns...)
}

func route(method, path string, style httpapi.ErrorStyle, h http.HandlerFunc) httpapi.Route {
	return httpapi.Route{Method: method, Path: path, Handler: h, Public: true, Style: style}
}

// TestStreamPanicKeepsTheProcess: a panic that escapes a route of a
// streaming function (lambdaurl runs the handler on a goroutine of its
// own, where a panic would kill the process) is recovered: before anything
// was written it is a 500 error in the route's shape; once a stream has
// started the response is only cut, as written: ending a stream with an
// error and a done event is each streaming handler's own job (no event is
// made up here from what was written), which the tests of
// internal/localserver and internal/deploy check on every streaming route
// of the product. Either way the function keeps serving.
func TestStreamPanicKeepsTheProcess(t *testing.T) {
	startThenPanic := func(w http.ResponseWriter, r *http.Request) {
		s := sse.Start(w)
		_ = s.JSON(map[string]string{"type": "content", "content": "partial"})
		panic("boom")
	}
	fx := lambdatest.New(t, endpoint, testFunc(lambdaapp.Stream,
		route(http.MethodPost, "/project", httpapi.StyleGNS3, startThenPanic),
		route(http.MethodPost, "/v1/chat/completions", httpapi.StyleOpenAI, startThenPanic),
		route(http.MethodGet, "/early", httpapi.StyleGNS3, func(http.ResponseWriter, *http.Request) { panic("early") }),
		route(http.MethodGet, "/v1/early", httpapi.StyleOpenAI, func(http.ResponseWriter, *http.Request) { panic("early") }),
		route(http.MethodGet, "/abort", httpapi.StyleGNS3, func(w http.ResponseWriter, r *http.Request) {
			s := sse.Start(w)
			_ = s.JSON(map[string]string{"type": "content", "content": "cut"})
			panic(http.ErrAbortHandler)
		}),
		route(http.MethodGet, "/v1/abort-early", httpapi.StyleOpenAI, func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }),
		route(http.MethodGet, "/ok", httpapi.StyleGNS3, func(w http.ResponseWriter, r *http.Request) {
			s := sse.Start(w)
			_ = s.JSON(map[string]string{"type": "done"})
		}),
	), nil)

	tests := []struct {
		method, path string
		status       int
		want         []string // data payloads
		body         string   // for non-SSE answers: a substring of the body
	}{
		{method: "POST", path: "/project", status: 200, want: []string{`{"content":"partial","type":"content"}`}},
		{method: "POST", path: "/v1/chat/completions", status: 200, want: []string{`{"content":"partial","type":"content"}`}},
		{method: "GET", path: "/early", status: 500, body: `{"message":"Internal server error"}`},
		{method: "GET", path: "/v1/early", status: 500, body: `"type":"server_error"`},
		{method: "GET", path: "/abort", status: 200, want: []string{`{"content":"cut","type":"content"}`}},
		{method: "GET", path: "/v1/abort-early", status: 500, body: `Internal server error`},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			// A panic that escaped would kill this test binary: lambdaurl
			// runs the handler on its own goroutine.
			resp := fx.Stream(tc.method, tc.path, nil, "")
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, resp.Body)
			}
			if tc.body != "" {
				if !strings.Contains(string(resp.Body), tc.body) {
					t.Fatalf("body %s, want it to contain %s", resp.Body, tc.body)
				}
			} else if got := lambdatest.SSEData(resp.Body); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			// The function still serves.
			ok := fx.Stream("GET", "/ok", nil, "")
			if got := lambdatest.SSEData(ok.Body); ok.StatusCode != 200 || len(got) != 1 || got[0] != `{"type":"done"}` {
				t.Fatalf("after the panic: %d %s", ok.StatusCode, ok.Body)
			}
		})
	}
}

func TestStreamRunDeadline(t *testing.T) {
	fx := lambdatest.New(t, endpoint, testFunc(lambdaapp.Stream,
		route(http.MethodGet, "/deadline", httpapi.StyleGNS3, func(w http.ResponseWriter, r *http.Request) {
			d, ok := r.Context().Deadline()
			httpapi.WriteJSON(w, 200, map[string]any{"ok": ok, "left_ms": time.Until(d).Milliseconds()})
		}),
	), nil)
	resp := fx.Stream("GET", "/deadline", nil, "")
	var got struct {
		OK     bool  `json:"ok"`
		LeftMS int64 `json:"left_ms"`
	}
	if err := json.Unmarshal(resp.Body, &got); err != nil {
		t.Fatalf("%s: %v", resp.Body, err)
	}
	// The invocation has InvokeTimeout; the request must end RunGrace
	// before it, so that the handler can still persist and answer.
	if max := (lambdatest.InvokeTimeout - lambdaapp.RunGrace).Milliseconds(); !got.OK || got.LeftMS > max {
		t.Fatalf("request deadline %+v, want at most %d ms left", got, max)
	}
}

func TestBound(t *testing.T) {
	tests := []struct {
		name     string
		timeout  time.Duration // 0: no deadline
		grace    time.Duration
		maxLeft  time.Duration
		deadline bool
	}{
		{name: "no deadline", grace: time.Second},
		{name: "long invocation keeps the grace", timeout: time.Hour, grace: 10 * time.Second, maxLeft: time.Hour - 10*time.Second, deadline: true},
		{name: "short invocation keeps half", timeout: 10 * time.Second, grace: 10 * time.Second, maxLeft: 5 * time.Second, deadline: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			bctx, cancel := lambdaapp.Bound(ctx, tc.grace)
			defer cancel()
			d, ok := bctx.Deadline()
			if ok != tc.deadline {
				t.Fatalf("deadline set %v, want %v", ok, tc.deadline)
			}
			if ok && time.Until(d) > tc.maxLeft {
				t.Fatalf("%v left, want at most %v", time.Until(d), tc.maxLeft)
			}
		})
	}
}

func TestStreamClientGoneCancels(t *testing.T) {
	stopped := make(chan error, 1)
	fx := lambdatest.New(t, endpoint, testFunc(lambdaapp.Stream,
		route(http.MethodGet, "/forever", httpapi.StyleGNS3, func(w http.ResponseWriter, r *http.Request) {
			s := sse.Start(w)
			for r.Context().Err() == nil {
				if err := s.JSON(map[string]string{"type": "content", "content": "x"}); err != nil {
					// keep going: only the context tells the handler to stop
					time.Sleep(time.Millisecond)
				}
			}
			stopped <- r.Context().Err()
		}),
	), nil)
	_, body, done := fx.OpenStream("GET", "/forever", nil, "")
	if _, err := bufio.NewReader(body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	done() // the client goes away: the response stream is closed
	select {
	case err := <-stopped:
		if err == nil {
			t.Fatal("handler stopped without a cancelled context")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the handler's context was not cancelled after its writes failed")
	}
}

func TestAPIResponses(t *testing.T) {
	fx := lambdatest.New(t, endpoint, testFunc(lambdaapp.API,
		route(http.MethodGet, "/nothing", httpapi.StyleGNS3, func(http.ResponseWriter, *http.Request) {}),
		route(http.MethodGet, "/panic", httpapi.StyleGNS3, func(http.ResponseWriter, *http.Request) { panic("boom") }),
		route(http.MethodGet, "/items/{id}", httpapi.StyleGNS3, func(w http.ResponseWriter, r *http.Request) {
			httpapi.WriteJSON(w, http.StatusOK, map[string]string{"id": r.PathValue("id"), "q": r.URL.Query().Get("q"), "accept": r.Header.Get("Accept")})
		}),
	), nil)
	if resp := fx.API("GET /nothing", "/nothing", nil, ""); resp.Status != http.StatusOK {
		t.Errorf("handler writing nothing: status %d, want 200 (not the proxy's 504)", resp.Status)
	}
	if resp := fx.API("GET /panic", "/panic", nil, ""); resp.Status != http.StatusInternalServerError || !strings.Contains(string(resp.Body), "Internal server error") {
		t.Errorf("panic: status %d %s", resp.Status, resp.Body)
	}
	// The proxy drops the path parameters of the event: the router finds
	// them again in the raw path.
	resp := fx.API("GET /items/{id}", "/items/a%20b?q=x%26y", map[string]string{"Accept": "application/json"}, "")
	var got map[string]string
	resp.JSON(t, &got)
	if got["id"] != "a b" || got["q"] != "x&y" || got["accept"] != "application/json" {
		t.Errorf("got %v", got)
	}
}

func TestHandlerErrors(t *testing.T) {
	f := testFunc(lambdaapp.API, route(http.MethodGet, "/x", httpapi.StyleGNS3, func(http.ResponseWriter, *http.Request) {}))
	tests := []struct {
		name string
		f    lambdaapp.Func
		env  map[string]string
		want string
	}{
		{name: "single-user mode refused", f: f, env: map[string]string{"JWT_SECRET": ""}, want: "JWT_SECRET (or JWT_SECRET_PARAM"},
		{name: "invalid configuration", f: f, env: map[string]string{"HEARTBEAT_SECONDS": "soon"}, want: "HEARTBEAT_SECONDS"},
		{name: "pattern without route", f: lambdaapp.NewFunc("test", lambdaapp.API, f.Build, "GET /y"), want: `no route "GET /y"`},
		{name: "no routes", f: lambdaapp.NewFunc("test", lambdaapp.API, f.Build), want: "no routes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := tc.f.Handler(context.Background(), lambdatest.Env(endpoint, "t-errors", tc.env), &strings.Builder{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := lambdaapp.Find(nil, "nope"); err == nil {
		t.Error("Find of an unknown function: no error")
	}
}

// corsHeaders returns the Access-Control-* headers of h.
func corsHeaders(h map[string]string) []string {
	var out []string
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "access-control-") {
			out = append(out, k)
		}
	}
	return out
}

// TestStreamLeavesCORSToTheFunctionURL checks that no streamed response
// carries the router's Access-Control-* headers: the function URL's Cors
// configuration adds its own, and both would reach the browser ("*, *").
func TestStreamLeavesCORSToTheFunctionURL(t *testing.T) {
	fx := lambdatest.New(t, endpoint, testFunc(lambdaapp.Stream,
		route(http.MethodPost, "/sse", httpapi.StyleGNS3, func(w http.ResponseWriter, r *http.Request) {
			s := sse.Start(w)
			_ = s.JSON(map[string]string{"type": "done"})
		}),
		route(http.MethodGet, "/json", httpapi.StyleOpenAI, func(w http.ResponseWriter, r *http.Request) {
			httpapi.WriteJSON(w, http.StatusOK, map[string]string{"object": "list"})
		}),
		route(http.MethodGet, "/nothing", httpapi.StyleGNS3, func(http.ResponseWriter, *http.Request) {}),
		route(http.MethodGet, "/early", httpapi.StyleOpenAI, func(http.ResponseWriter, *http.Request) { panic("early") }),
		route(http.MethodGet, "/headers-only", httpapi.StyleGNS3, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNoContent)
		}),
	), nil)
	for _, tc := range []struct{ method, path string }{
		{"POST", "/sse"}, {"GET", "/json"}, {"GET", "/nothing"}, {"GET", "/early"}, {"GET", "/headers-only"}, {"GET", "/not-routed"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp := fx.Stream(tc.method, tc.path, map[string]string{"Origin": "https://app.example"}, "")
			if got := corsHeaders(resp.Headers); len(got) > 0 {
				t.Errorf("%s %s: the function sent %v (the function URL adds its own)", tc.method, tc.path, got)
			}
			if resp.Headers["X-Request-Id"] == "" {
				t.Errorf("%s %s: other headers were dropped too: %v", tc.method, tc.path, resp.Headers)
			}
		})
	}
}

func TestStripCORS(t *testing.T) {
	h := http.Header{}
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Expose-Headers", "X-Request-Id")
	h["access-control-max-age"] = []string{"1"} // set without canonicalisation
	h.Set("X-Request-Id", "r1")
	h.Set("Content-Type", "text/event-stream")
	h.Set("Vary", "Origin")
	lambdaapp.StripCORS(h)
	if len(h) != 3 || h.Get("X-Request-Id") != "r1" || h.Get("Content-Type") == "" || h.Get("Vary") == "" {
		t.Fatalf("after StripCORS: %v", h)
	}
}

// deadlineOnly reports a deadline but is never done itself, like an
// invocation whose deadline has not come: only the function's own bound
// can stop a handler that waits for its context.
type deadlineOnly struct {
	context.Context
	deadline time.Time
}

func (c deadlineOnly) Deadline() (time.Time, bool) { return c.deadline, true }

// TestAPIRequestBounded checks that an API function's request ends
// APIGrace before the invocation's deadline, so that its handler answers
// instead of the Lambda being cut off.
func TestAPIRequestBounded(t *testing.T) {
	fx := lambdatest.New(t, endpoint, testFunc(lambdaapp.API,
		route(http.MethodGet, "/deadline", httpapi.StyleGNS3, func(w http.ResponseWriter, r *http.Request) {
			d, ok := r.Context().Deadline()
			httpapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": ok, "deadline": d.UnixNano()})
		}),
		route(http.MethodGet, "/wait", httpapi.StyleOpenAI, func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
			httpapi.Error(w, r, http.StatusGatewayTimeout, "stopped before the deadline")
		}),
	), nil)
	invoke := func(ctx context.Context, target string) (lambdatest.Response, error) {
		ev, err := lambdatest.APIRequest("GET "+target, target, nil, "")
		if err != nil {
			return lambdatest.Response{}, err
		}
		resp, err := lambdaapp.APIGateway(fx.Handler)(ctx, ev)
		return lambdatest.Response{Status: resp.StatusCode, Header: resp.Headers, Body: []byte(resp.Body)}, err
	}

	// A long invocation: the request keeps exactly APIGrace.
	deadline := time.Now().Add(time.Hour)
	resp, err := invoke(deadlineOnly{context.Background(), deadline}, "/deadline")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		OK       bool  `json:"ok"`
		Deadline int64 `json:"deadline"`
	}
	resp.JSON(t, &got)
	if want := deadline.Add(-lambdaapp.APIGrace).UnixNano(); !got.OK || got.Deadline != want {
		t.Fatalf("request deadline %+v, want %d (the invocation's less APIGrace)", got, want)
	}

	// A handler that runs until its context ends answers by itself.
	type result struct {
		resp lambdatest.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := invoke(deadlineOnly{context.Background(), time.Now().Add(2 * time.Second)}, "/wait")
		done <- result{resp, err}
	}()
	select {
	case r := <-done:
		if r.err != nil || r.resp.Status != http.StatusGatewayTimeout || !strings.Contains(string(r.resp.Body), "stopped before the deadline") {
			t.Fatalf("answer %d %s (%v)", r.resp.Status, r.resp.Body, r.err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the request was not cancelled before the invocation's deadline")
	}
}

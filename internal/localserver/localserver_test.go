package localserver

import (
	"agentchat/internal/syncbuf"
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"agentchat/internal/llm/llmtest"
	"agentchat/internal/wire/dynamowire"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// start runs the server with vars and returns its base URL, its output, its
// logs, and a stop func that waits for Run to return.
func start(t *testing.T, vars map[string]string) (string, *syncbuf.Buffer, *syncbuf.Buffer, func() error) {
	t.Helper()
	return startWith(t, vars, DefaultTimeouts())
}

// startWith is start with the server's timeouts.
func startWith(t *testing.T, vars map[string]string, timeouts Timeouts) (string, *syncbuf.Buffer, *syncbuf.Buffer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, logs := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	go func() { errc <- run(ctx, env(vars), out, logs, ready, timeouts, dynamowire.Open) }()
	select {
	case addr := <-ready:
		stopped := false
		stop := func() error {
			if stopped {
				return nil
			}
			stopped = true
			cancel()
			return <-errc
		}
		t.Cleanup(func() { _ = stop() })
		return "http://" + addr, out, logs, stop
	case err := <-errc:
		cancel()
		t.Fatalf("server did not start: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("server did not start")
	}
	return "", nil, nil, nil
}

func TestStartsWithNoSetupAndSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	vars := map[string]string{"ADDR": "127.0.0.1:0", "DATA_DIR": dir}
	url, out, logs, stop := start(t, vars)
	if !strings.Contains(out.String(), "agentchat listening on "+url) || !strings.Contains(out.String(), "mode: single-user") {
		t.Fatalf("startup output: %q", out.String())
	}
	const project = "9f1d8e4a-5b6c-4d7e-8f90-a1b2c3d4e5f6"
	const sid = "0b1c2d3e-4f50-4162-8374-8596a7b8c9d0"
	// Without an LLM a turn is refused before streaming, and nothing is stored.
	resp, err := http.Post(url+"/v3/projects/"+project+"/chat/stream", "application/json", strings.NewReader(`{"message":"hi","session_id":"`+sid+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "LLM configuration not found") {
		t.Fatalf("stream without LLM: %d %s", resp.StatusCode, body)
	}
	if err := stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	var lines int
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if m["msg"] == "request" && m["request_id"] == nil {
			t.Fatalf("request log without request_id: %q", line)
		}
		lines++
	}
	if lines == 0 {
		t.Fatal("no logs")
	}

	// Restart on the same data dir.
	url, _, _, _ = start(t, vars)
	resp, err = http.Get(url + "/v3/projects/" + project + "/chat/sessions")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "[]" {
		t.Fatalf("after restart: %d %s", resp.StatusCode, body)
	}
}

func TestRefusesBadConfiguration(t *testing.T) {
	tests := []struct {
		name string
		vars map[string]string
		want string
	}{
		{"non-loopback in single-user mode", map[string]string{"ADDR": "0.0.0.0:0"}, "refusing to start"},
		{"short JWT secret", map[string]string{"ADDR": "127.0.0.1:0", "JWT_SECRET": "short"}, "JWT_SECRET"},
		// Run links SQLite only (functions/local); RunWith serves DynamoDB.
		{"DynamoDB without its build", map[string]string{"ADDR": "127.0.0.1:0", "STORE": "dynamodb", "TABLE_NAME": "agentchat",
			"DYNAMODB_ENDPOINT": "http://127.0.0.1:1"}, "functions/local/withdynamo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.vars["DATA_DIR"] = t.TempDir()
			err := Run(context.Background(), env(tc.vars), io.Discard, io.Discard, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run = %v, want an error mentioning %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "short\n") {
				t.Fatalf("the secret leaked into the error: %v", err)
			}
		})
	}
}

// TestGracefulShutdown: a chat stream in flight when the signal arrives
// still gets its full answer.
func TestGracefulShutdown(t *testing.T) {
	llmSrv := llmtest.NewServer(t)
	llmSrv.Enqueue(llmtest.Reply{Text: "still here after the signal", ChunkDelay: 50 * time.Millisecond})
	url, _, _, stop := start(t, map[string]string{"ADDR": "127.0.0.1:0", "DATA_DIR": t.TempDir(), "OPENAI_BASE_URL": llmSrv.BaseURL(), "OPENAI_MODEL": "m"})
	resp, err := http.Post(url+"/v3/projects/p1/chat/stream", "application/json", strings.NewReader(`{"message":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, ":") {
		t.Fatalf("stream did not open: %q %v", line, err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatalf("stream cut by shutdown: %v", err)
	}
	if !strings.Contains(string(rest), `"type":"done"`) || !strings.Contains(string(rest), "signal") {
		t.Fatalf("stream after signal: %s", rest)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

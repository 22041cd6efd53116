package lambdatest_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"agentchat/internal/lambdaapp/lambdatest"
)

// TestRuntimeSeesEachChunk drives the fake Runtime API as the Lambda
// runtime client does and checks it reports every chunk of a streamed
// response separately, as written, and the trailers.
func TestRuntimeSeesEachChunk(t *testing.T) {
	rt := lambdatest.NewRuntime(t, "fn")
	inv := rt.Invoke([]byte(`{"hello":"world"}`), time.Minute)
	base := "http://" + rt.Addr + "/2018-06-01/runtime/invocation/"

	resp, err := http.Get(base + "next")
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	id := resp.Header.Get("Lambda-Runtime-Aws-Request-Id")
	deadline, _ := strconv.ParseInt(resp.Header.Get("Lambda-Runtime-Deadline-Ms"), 10, 64)
	if string(payload) != `{"hello":"world"}` || id != inv.ID || deadline != inv.Deadline.UnixMilli() ||
		!strings.HasSuffix(resp.Header.Get("Lambda-Runtime-Invoked-Function-Arn"), ":function:fn") {
		t.Fatalf("next: %s %v", payload, resp.Header)
	}
	if inv.Taken().IsZero() {
		t.Fatal("invocation not marked taken")
	}

	pr, pw := io.Pipe()
	req, _ := http.NewRequest(http.MethodPost, base+id+"/response", pr)
	req.Header.Set("Content-Type", "application/vnd.awslambda.http-integration-response")
	req.Trailer = http.Header{"Lambda-Runtime-Function-Error-Type": nil}
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				err = io.ErrUnexpectedEOF
			}
		}
		done <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	parts := []string{"{\"statusCode\":200}\x00\x00\x00\x00\x00\x00\x00\x00", "data: one\n\n", "data: two\n\n"}
	for i, part := range parts {
		if _, err := io.WriteString(pw, part); err != nil {
			t.Fatal(err)
		}
		c, err := inv.Chunk(ctx, i) // seen before the next part is written
		if err != nil || string(c.Data) != part {
			t.Fatalf("chunk %d = %q, %v; want %q", i, c.Data, err, part)
		}
	}
	req.Trailer.Set("Lambda-Runtime-Function-Error-Type", "Runtime.Test")
	_ = pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	res, err := inv.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inv.Chunk(ctx, len(parts)); err != io.EOF {
		t.Errorf("chunk after the end: %v, want EOF", err)
	}
	p, body, err := lambdatest.SplitPrelude(res.Body)
	if err != nil || p.StatusCode != 200 || string(body) != "data: one\n\ndata: two\n\n" || !res.Streamed ||
		res.Trailer.Get("Lambda-Runtime-Function-Error-Type") != "Runtime.Test" {
		t.Fatalf("result %+v (prelude %+v, body %q, %v)", res, p, body, err)
	}
}

func TestPathParameters(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          map[string]string
		ok            bool
	}{
		{"/v3/projects/{project_id}/chat", "/v3/projects/p1/chat", map[string]string{"project_id": "p1"}, true},
		{"/v1/{$}", "/v1/", nil, true},
		{"/v1/models/{id}", "/v1/models", nil, false},
		{"/v1/agents", "/v1/agent", nil, false},
	}
	for _, tc := range tests {
		got, err := lambdatest.PathParameters(tc.pattern, tc.path)
		if (err == nil) != tc.ok || len(got) != len(tc.want) || got["project_id"] != tc.want["project_id"] {
			t.Errorf("PathParameters(%q, %q) = %v, %v", tc.pattern, tc.path, got, err)
		}
	}
}

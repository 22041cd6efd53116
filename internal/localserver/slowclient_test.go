package localserver

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/httpapi"
	"agentchat/internal/llm/llmtest"
)

// safety bounds every wait of these tests on the server: a hung server
// fails the test instead of hanging it. It is no timing assertion.
const safety = 20 * time.Second

const slowSecret = "slow-client-test-secret-0123456789abcdef"

// rawExchange writes head (request line and headers, without the blank
// line) on a new connection to the server at baseURL, sends no body, and
// returns the response and, when waitClose, whether the server then
// closed the connection. Every read is bounded by safety.
func rawExchange(t *testing.T, baseURL, head string, waitClose bool) (*http.Response, string, bool) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(baseURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(safety)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, strings.ReplaceAll(strings.TrimSpace(head), "\n", "\r\n")+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no response before the safety deadline: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("read the response body: %v", err)
	}
	if !waitClose {
		return resp, string(body), false
	}
	_, err = br.ReadByte()
	var ne net.Error
	closed := errors.Is(err, io.EOF) || (err != nil && !(errors.As(err, &ne) && ne.Timeout()))
	return resp, string(body), closed
}

// TestUnauthenticatedBodyIsNotAwaited: a POST without a valid credential
// is refused with 401 before its body is read, even when the declared
// body never comes: the refusal does not wait for it (the server's body
// bound here is the 30 s default, longer than the test's safety bound),
// and says the connection closes (what the client sends next is not
// read as another request; TestStalledBodyIsCut sees it closed).
func TestUnauthenticatedBodyIsNotAwaited(t *testing.T) {
	url, _, _, _ := start(t, map[string]string{"ADDR": "127.0.0.1:0", "DATA_DIR": t.TempDir(), "JWT_SECRET": slowSecret})
	v, err := auth.NewJWTVerifier([]byte(slowSecret), nil)
	if err != nil {
		t.Fatal(err)
	}
	valid, err := v.Issue("alice", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// A refresh token with the right signature.
	refresh := signedToken(t, []byte(slowSecret), `{"sub":"alice","exp":`+unixIn(time.Hour)+`,"type":"refresh"}`)
	tests := []struct {
		name, auth, length string
		msg                string
	}{
		{"no token, large declared body", "", "1000000", "Not authenticated"},
		{"no token, small declared body", "", "1000", "Not authenticated"},
		{"bad token", "Bearer not-a-jwt", "1000", "Could not validate credentials"},
		{"refresh token", "Bearer " + refresh, "1000", "only access tokens are accepted"},
		{"no token, chunked body", "", "", "Not authenticated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			head := "POST /v3/projects/p1/chat/stream HTTP/1.1\nHost: " + strings.TrimPrefix(url, "http://") + "\nContent-Type: application/json"
			if tc.length != "" {
				head += "\nContent-Length: " + tc.length
			} else {
				head += "\nTransfer-Encoding: chunked"
			}
			if tc.auth != "" {
				head += "\nAuthorization: " + tc.auth
			}
			resp, body, _ := rawExchange(t, url, head, false)
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, tc.msg) {
				t.Fatalf("got %d %s, want 401 %q", resp.StatusCode, body, tc.msg)
			}
			if !resp.Close {
				t.Fatal("the connection is kept alive with the unread body on it")
			}
		})
	}
	// A valid token still works with a body sent in full (and the
	// connection is then reused).
	resp, body, _ := rawExchange(t, url, "POST /v3/projects/p1/chat/stream HTTP/1.1\nHost: "+strings.TrimPrefix(url, "http://")+
		"\nAuthorization: Bearer "+valid+"\nContent-Length: 0", false)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Request body must not be empty") {
		t.Fatalf("valid token: %d %s", resp.StatusCode, body)
	}
}

// TestStalledBodyIsCut: an authenticated request whose declared body
// never comes is answered 408 once the body bound passes (1 s here, 30 s
// by default), its handler returns (the answer is written when it does)
// and the connection is closed; so is the connection of an
// unauthenticated request whose body never comes, once its 401 is sent. A
// complete body just over the 1 MiB limit gets 413 with its message.
func TestStalledBodyIsCut(t *testing.T) {
	t.Parallel()
	tm := DefaultTimeouts()
	tm.Body = time.Second
	url, _, _, _ := startWith(t, map[string]string{"ADDR": "127.0.0.1:0", "DATA_DIR": t.TempDir(), "JWT_SECRET": slowSecret}, tm)
	v, err := auth.NewJWTVerifier([]byte(slowSecret), nil)
	if err != nil {
		t.Fatal(err)
	}
	token, err := v.Issue("alice", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(url, "http://")
	for _, path := range []string{"/v3/projects/p1/chat/stream", "/v1/chat/completions", "/v3/access/users/me/llm-model-configs"} {
		t.Run(path, func(t *testing.T) {
			resp, body, closed := rawExchange(t, url, "POST "+path+" HTTP/1.1\nHost: "+host+"\nAuthorization: Bearer "+token+"\nContent-Type: application/json\nContent-Length: 1000", true)
			if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, "Request body not received in time") {
				t.Fatalf("got %d %s, want 408", resp.StatusCode, body)
			}
			if !closed {
				t.Fatal("the connection stayed open after the stalled body")
			}
		})
	}
	resp, body, closed := rawExchange(t, url, "POST /v3/projects/p1/chat/stream HTTP/1.1\nHost: "+host+"\nContent-Length: 1000", true)
	if resp.StatusCode != http.StatusUnauthorized || !closed {
		t.Fatalf("unauthenticated stalled body: %d %s, closed %v", resp.StatusCode, body, closed)
	}

	big := `{"message":"` + strings.Repeat("x", httpapi.MaxBodyBytes) + `"}`
	req, _ := http.NewRequest(http.MethodPost, url+"/v3/projects/p1/chat/stream", bytes.NewReader([]byte(big)))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "Request body must not be larger than 1048576 bytes") {
		t.Fatalf("oversize body: %d %s", resp.StatusCode, b)
	}
}

// TestBodyBoundDoesNotCutStreams: the body bound ends with the body. A
// chat stream that lasts well past it (1 s here) runs to its end, on a
// connection that is then reused for the next request.
func TestBodyBoundDoesNotCutStreams(t *testing.T) {
	t.Parallel()
	llmSrv := llmtest.NewServer(t)
	words := strings.TrimSpace(strings.Repeat("still streaming ", 15))
	llmSrv.Enqueue(llmtest.Reply{Text: words, ChunkDelay: 100 * time.Millisecond})
	tm := DefaultTimeouts()
	tm.Body = time.Second
	url, _, _, _ := startWith(t, map[string]string{"ADDR": "127.0.0.1:0", "DATA_DIR": t.TempDir(), "OPENAI_BASE_URL": llmSrv.BaseURL(), "OPENAI_MODEL": "m"}, tm)
	client := &http.Client{Timeout: safety}
	resp, err := client.Post(url+"/v3/projects/p1/chat/stream", "application/json", strings.NewReader(`{"message":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("stream cut: %v (%s)", err, all)
	}
	if !strings.Contains(string(all), `"type":"done"`) || strings.Contains(string(all), `"type":"error"`) || strings.Count(string(all), "streaming") != 15 {
		t.Fatalf("stream: %s", all)
	}
	resp, err = client.Get(url + "/v3/projects/p1/chat/sessions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("next request: %d", resp.StatusCode)
	}
}

// signedToken signs claims (JSON) as an HS256 JWT with secret.
func signedToken(t *testing.T, secret []byte, claims string) string {
	t.Helper()
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString([]byte(claims))
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil))
}

// unixIn is the Unix time d from now, as JSON.
func unixIn(d time.Duration) string { return strconv.FormatInt(time.Now().Add(d).Unix(), 10) }

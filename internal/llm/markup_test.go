package llm_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"agentchat/internal/llm"
)

// TestErrorMessagesCarryNoMarkup: a proxy's HTML error page, or a JSON
// message with tags in it, never reaches the person.
func TestErrorMessagesCarryNoMarkup(t *testing.T) {
	tests := []struct {
		name, contentType, body, want string
	}{
		{"html page", "text/html", "<html><body><h1>400 Bad Request</h1><hr><center>nginx</center></body></html>", "The LLM provider rejected the request (400)."},
		{"tags in a json message", "application/json", `{"error":{"message":"bad <script>alert(1)</script>","type":"invalid_request_error"}}`, "The LLM provider rejected the request (400)."},
		{"plain json message", "application/json", `{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error"}}`, "The LLM provider rejected the request (400): This model's maximum context length is 8192 tokens."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			c, err := llm.NewClient(llm.Config{APIKey: "sk-x", BaseURL: srv.URL + "/v1", Model: "m", MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Stream(context.Background(), userMsg("hi"), func(llm.Delta) error { return nil })
			if got := llm.UserMessage(err); got != tc.want || strings.ContainsAny(got, "<>") {
				t.Fatalf("UserMessage = %q, want %q", got, tc.want)
			}
		})
	}
}

package seerrtools

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"agentchat/internal/seerr"
)

func TestSkillNotConfigured(t *testing.T) {
	unconfigured, err := seerr.New(seerr.Config{APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*seerr.Client{nil, unconfigured} {
		for _, tool := range Skill(c).Tools {
			_, err := tool.Execute(context.Background(), json.RawMessage(`{"query":"dune","media_type":"movie","tmdb_id":1}`))
			if !errors.Is(err, ErrNotConfigured) || err.Error() != "Seerr is not configured" {
				t.Errorf("%s: err = %v", tool.Name, err)
			}
		}
	}
}

func TestToolAPIErrors(t *testing.T) {
	f, c := newFake(t)
	wrongKey, err := seerr.New(seerr.Config{BaseURL: f.URL, APIKey: testKey + "-revoked"})
	if err != nil {
		t.Fatal(err)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	unreachable, err := seerr.New(seerr.Config{BaseURL: closed.URL, APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	calls := []struct{ tool, args string }{
		{ToolSearchMedia, `{"query":"dune"}`},
		{ToolGetMediaDetails, `{"media_type":"tv","tmdb_id":1396}`},
		{ToolRequestMedia, `{"media_type":"movie","tmdb_id":438631}`},
		{ToolListRequests, `{}`},
		{ToolGetTrending, `{}`},
	}
	tests := []struct {
		name   string
		c      *seerr.Client
		status int
		body   string
		want   string
	}{
		{"wrong key", wrongKey, 0, "", "check SEERR_API_KEY"},
		{"401", c, 401, `{"message":"Unauthorized: ` + testKey + `"}`, "HTTP 401, the API key was rejected"},
		{"500", c, 500, `{"message":"Unable to retrieve data, key=` + testKey + `"}`, "HTTP 500, Seerr server error: Unable to retrieve data, key=[redacted]"},
		{"unreachable", unreachable, 0, "", "cannot reach Seerr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.Fail(tt.status, tt.body)
			defer f.Fail(0, "")
			tl := tools(t, tt.c)
			for _, cl := range calls {
				out, err := call(t, tl, cl.tool, cl.args)
				if err == nil || out != "" || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%s: out %q, err %v; want error containing %q", cl.tool, out, err, tt.want)
				}
			}
		})
	}
	if len(f.Created()) != 0 {
		t.Fatal("a request was placed")
	}
}

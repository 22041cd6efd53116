package logctx

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
)

func TestContextAttributesReachRecords(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewHandler(slog.NewJSONHandler(&buf, nil))).With("component", "test")
	ctx := With(context.Background(), slog.String("request_id", "r1"))
	ctx = With(ctx, slog.String("user", "alice"))
	tests := []struct {
		name string
		log  func()
		want map[string]string
	}{
		{"with context", func() { log.InfoContext(ctx, "hello") }, map[string]string{"request_id": "r1", "user": "alice", "component": "test"}},
		{"without context", func() { log.Info("hello") }, map[string]string{"component": "test"}},
		{"cancelled context keeps values", func() {
			c, cancel := context.WithCancel(ctx)
			cancel()
			log.WarnContext(context.WithoutCancel(c), "hello")
		}, map[string]string{"request_id": "r1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			buf.Reset()
			tc.log()
			var m map[string]any
			if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if m[k] != v {
					t.Errorf("%s = %v, want %q (record %s)", k, m[k], v, buf.String())
				}
			}
			if _, ok := m["request_id"]; !ok && tc.want["request_id"] != "" {
				t.Error("request_id missing")
			}
		})
	}
}

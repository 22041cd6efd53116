package dynamo

import (
	"context"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"agentchat/internal/store"
)

// TestStoreCallsAreSpans: a store built by New makes a client span per
// DynamoDB request under the caller's span, and none for a call made
// outside any span.
func TestStoreCallsAreSpans(t *testing.T) {
	s := newTestStore(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	now := time.Now().UTC()
	sess := &store.Session{ThreadID: "t1", UserID: "u1", ProjectID: "p1", Title: "x", CreatedAt: now, UpdatedAt: now}
	if err := s.CreateSession(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("%d spans for an untraced call", n)
	}
	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	if _, err := s.GetSession(ctx, store.Key{ProjectID: "p1", UserID: "u1", ThreadID: "t1"}); err != nil {
		t.Fatal(err)
	}
	parent.End()
	var names []string
	for _, sp := range exp.GetSpans() {
		if sp.Name == "request" {
			continue
		}
		names = append(names, sp.Name)
		if !strings.HasPrefix(sp.Name, "DynamoDB.") || sp.Parent.SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("span %s (parent %s)", sp.Name, sp.Parent.SpanID())
		}
	}
	if len(names) == 0 {
		t.Fatal("no DynamoDB span")
	}
	t.Logf("spans: %v", names)
}

package httpapi

import (
	"log/slog"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"agentchat/internal/logctx"
)

// traced wraps mux in a server span per request when d.Tracer is set (else
// it returns mux itself: no cost when tracing is off). The span continues
// the client's W3C traceparent and is named by the route template the mux
// matched ("POST /v3/projects/{project_id}/chat/stream"), never by the
// raw path; requests no route matched are named by their method alone.
// Records logged during the request carry trace_id and span_id.
func (d Deps) traced(mux http.Handler) http.Handler {
	if d.Tracer == nil {
		return mux
	}
	prop := propagation.TraceContext{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := spanMethod(r.Method)
		ctx := prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := d.Tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", method)))
		if sc := span.SpanContext(); sc.IsValid() {
			// Records logged during the request name its trace.
			ctx = logctx.With(ctx, slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
		}
		r = r.WithContext(ctx)
		done := false
		defer func() {
			status := http.StatusInternalServerError
			if rec, ok := w.(*statusRecorder); ok && done {
				status = rec.status()
			}
			if route := routeOf(r.Pattern); route != "" {
				span.SetName(method + " " + route)
				span.SetAttributes(attribute.String("http.route", route))
			}
			span.SetAttributes(attribute.Int("http.response.status_code", status))
			if status >= 500 {
				span.SetStatus(codes.Error, "")
			}
			span.End()
		}()
		mux.ServeHTTP(w, r)
		done = true
	})
}

// routeOf is the path template of a ServeMux pattern ("POST /a/{id}" or
// "/a/{id}"); empty for the catch-all "/", which matched no route.
func routeOf(pattern string) string {
	if _, p, ok := strings.Cut(pattern, " "); ok {
		pattern = p
	}
	if pattern == "/" {
		return ""
	}
	return pattern
}

// spanMethod is the method as the semantic conventions name it: a known
// method, else _OTHER (a client's made-up method is not a span name).
func spanMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "_OTHER"
}

package telemetry

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// FlushTimeout bounds the export of an invocation's spans by FlushAfter.
const FlushTimeout = 2 * time.Second

// FlushAfter returns h exporting p's spans once each request is served (its
// last byte written), for AWS Lambda, which freezes the environment as soon
// as an invocation returns. With a nil p it returns h.
func FlushAfter(h http.Handler, p *Provider, log *slog.Logger) http.Handler {
	if p == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), FlushTimeout)
			defer cancel()
			if err := p.Flush(ctx); err != nil {
				log.WarnContext(ctx, "spans not exported", "err", err)
			}
		}()
		h.ServeHTTP(w, r)
	})
}

package lambdaapp

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"agentchat/internal/httpapi"
)

// APIGateway returns the Lambda handler of an API function: the api-proxy's
// httpadapter.NewV2(h).ProxyWithContext (h already carries the middleware
// Func.Handler adds).
func APIGateway(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpadapter.NewV2(h).ProxyWithContext
}

// APIGrace is how long before the Lambda deadline the request of an API
// function is cancelled, so that the handler answers with its own error
// (a long POST /v1/chat/sync: an OpenAI-shaped 504) instead of being killed
// and leaving API Gateway to answer its generic error. When the invocation
// has less than twice APIGrace left, half of what is left is kept instead.
const APIGrace = 2 * time.Second

// apiMiddleware bounds the request by the Lambda deadline less APIGrace
// and makes a buffered response complete: a handler that wrote nothing
// answers 200 with an empty body, as net/http would (the api-proxy turns
// "no status" into a 504), and a panic the router lets through answers
// 500 instead of failing the invocation.
func apiMiddleware(next http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := Bound(r.Context(), APIGrace)
		defer cancel()
		r = r.WithContext(ctx)
		sw := &tracker{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil && p != http.ErrAbortHandler {
				log.Error("handler panic", "panic", fmt.Sprint(p), "method", r.Method, "path", r.URL.Path, "stack", string(debug.Stack()))
				if !sw.started() {
					httpapi.Error(sw, r, http.StatusInternalServerError, "Internal server error")
				}
			}
			if !sw.started() {
				sw.WriteHeader(http.StatusOK)
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

package toolkittest

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"agentchat/internal/agent"
	"agentchat/internal/auth"
	"agentchat/internal/syncbuf"
)

// Recorder runs tools and keeps what they said, answers, errors and the
// lines of its Logger, for the secret scan when the test ends.
type Recorder struct {
	t    testing.TB
	logs syncbuf.Buffer
	mu   sync.Mutex
	seen []string
}

// NewRecorder returns a recorder that, when the test ends, fails t if an
// answer, an error or a log line holds one of secrets.
func NewRecorder(t testing.TB, secrets ...string) *Recorder {
	r := &Recorder{t: t}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, s := range append(r.seen, r.logs.String()) {
			for _, secret := range secrets {
				if strings.Contains(s, secret) {
					t.Errorf("a secret (%s) leaked: %s", secret, s)
				}
			}
		}
	})
	return r
}

// Logger returns a JSON logger, at debug level, into the recorder.
func (r *Recorder) Logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(&r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Logs returns what was logged so far.
func (r *Recorder) Logs() string { return r.logs.String() }

// Run runs tl with args and records its answer and error.
func (r *Recorder) Run(ctx context.Context, tl agent.Tool, args string) (string, error) {
	out, err := tl.Run(ctx, json.RawMessage(args))
	r.mu.Lock()
	r.seen = append(r.seen, out)
	if err != nil {
		r.seen = append(r.seen, err.Error())
	}
	r.mu.Unlock()
	return out, err
}

// UserContext returns a context with the identity of a user whose GNS3
// token is token.
func UserContext(token string) context.Context {
	return auth.WithIdentity(context.Background(), auth.Identity{UserID: "user-1", Token: token, Via: auth.ViaJWT})
}

package lambdatest

import (
	"agentchat/internal/syncbuf"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"

	"agentchat/internal/auth"
	"agentchat/internal/lambdaapp"
	"agentchat/internal/store/dynamo"
	"agentchat/internal/store/dynamo/dynalitetest"
)

// Secret is the JWT secret of the functions under test.
const Secret = "lambdatest-secret-0123456789abcdef-0123456789"

// AdminToken is the ADMIN_TOKEN of the functions under test.
const AdminToken = "lambdatest-admin-token-0123456789abcdef"

// InvokeTimeout is the deadline given to each invocation, as Lambda does
// with the function's timeout.
const InvokeTimeout = 2 * time.Minute

// WithDynalite runs a package's tests with one dynalite emulator whose
// endpoint it stores in *endpoint; use it as
// `func TestMain(m *testing.M) { os.Exit(lambdatest.WithDynalite(m, &endpoint)) }`.
// Without dynalite (npm ci) the tests fail with a message saying how to
// install it.
func WithDynalite(m *testing.M, endpoint *string) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	srv, err := dynalitetest.Launch(ctx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "these tests need dynalite: %v\n", err)
		return 1
	}
	*endpoint = srv.Endpoint()
	code := m.Run()
	if err := srv.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop dynalite: %v\n", err)
	}
	return code
}

// Env returns the environment of a function under test: DynamoDB table
// table at endpoint (created by the function), the JWT secret, the admin
// token, dummy AWS credentials, and vars on top.
func Env(endpoint, table string, vars map[string]string) func(string) string {
	env := map[string]string{
		"STORE":                 "dynamodb",
		"TABLE_NAME":            table,
		"DYNAMODB_ENDPOINT":     endpoint,
		"AWS_REGION":            Region,
		"AWS_ACCESS_KEY_ID":     "lambdatest",
		"AWS_SECRET_ACCESS_KEY": "lambdatest",
		"JWT_SECRET":            Secret,
		"ADMIN_TOKEN":           AdminToken,
		"LOG_LEVEL":             "debug",
	}
	for k, v := range vars {
		env[k] = v
	}
	return func(k string) string { return env[k] }
}

// Fixture is one function under test, on its own table.
type Fixture struct {
	T       testing.TB
	Func    lambdaapp.Func
	Handler http.Handler
	// Store is a store on the function's table, for setup and checks.
	Store *dynamo.Store
	Table string
	logs  *syncbuf.Buffer
}

// New builds f's handler exactly as its main does (Func.Handler) with the
// environment of Env on a fresh table (or vars["TABLE_NAME"], to share one
// between functions); the function's logs are printed if the test fails.
func New(t testing.TB, endpoint string, f lambdaapp.Func, vars map[string]string) *Fixture {
	t.Helper()
	table := vars["TABLE_NAME"]
	if table == "" {
		table = "t-" + uuid.NewString()
	}
	fx := &Fixture{T: t, Func: f, Table: table, logs: &syncbuf.Buffer{}}
	h, release, err := f.Handler(context.Background(), Env(endpoint, table, vars), fx.logs)
	if err != nil {
		t.Fatalf("build function %s: %v", f.Name, err)
	}
	t.Cleanup(func() {
		_ = release()
		if t.Failed() {
			t.Logf("logs of function %s:\n%s", f.Name, fx.logs.String())
		}
	})
	fx.Handler = h
	st, err := dynamo.New(context.Background(), dynamo.Options{TableName: table, Endpoint: endpoint, Region: Region})
	if err != nil {
		t.Fatalf("open table %s: %v", table, err)
	}
	fx.Store = st
	return fx
}

// Token returns a valid JWT for user.
func (fx *Fixture) Token(user string) string {
	fx.T.Helper()
	v, err := auth.NewJWTVerifier([]byte(Secret), time.Now)
	if err != nil {
		fx.T.Fatal(err)
	}
	tok, err := v.Issue(user, time.Hour)
	if err != nil {
		fx.T.Fatal(err)
	}
	return tok
}

// Auth returns the headers of a JSON request by user.
func (fx *Fixture) Auth(user string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + fx.Token(user), "Content-Type": "application/json"}
}

// Response is an API Gateway response.
type Response struct {
	Status int
	Header map[string]string
	Body   []byte
}

// JSON decodes the body into v, failing the test on error.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %q: %v", r.Body, err)
	}
}

// API invokes the function with the API Gateway event of route and target
// through httpadapter (APIGateway), as its main does.
func (fx *Fixture) API(route, target string, header map[string]string, body string) Response {
	fx.T.Helper()
	ev, err := APIRequest(route, target, header, body)
	if err != nil {
		fx.T.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), InvokeTimeout)
	defer cancel()
	resp, err := lambdaapp.APIGateway(fx.Handler)(ctx, ev)
	if err != nil {
		fx.T.Fatalf("%s %s: invocation failed: %v", route, target, err)
	}
	out, err := roundTrip(resp)
	if err != nil {
		fx.T.Fatal(err)
	}
	body2 := []byte(out.Body)
	if out.IsBase64Encoded {
		fx.T.Fatalf("%s %s: unexpected base64 body", route, target)
	}
	return Response{Status: out.StatusCode, Header: out.Headers, Body: body2}
}

// StreamResponse is a streamed function URL response.
type StreamResponse struct {
	Prelude
	Body []byte
}

// Stream invokes the function with the function URL event of method and
// target through lambdaurl (FunctionURL), as its main does, and reads the
// whole streamed response (prelude, 8 NUL bytes, body).
func (fx *Fixture) Stream(method, target string, header map[string]string, body string) StreamResponse {
	fx.T.Helper()
	p, r, done := fx.OpenStream(method, target, header, body)
	defer done()
	b, err := io.ReadAll(r)
	if err != nil {
		fx.T.Fatalf("%s %s: read stream: %v", method, target, err)
	}
	return StreamResponse{Prelude: p, Body: b}
}

// OpenStream invokes the function like Stream and returns the prelude and
// the body as it streams; done ends the invocation.
func (fx *Fixture) OpenStream(method, target string, header map[string]string, body string) (Prelude, io.Reader, func()) {
	fx.T.Helper()
	ev, err := FunctionURLRequest(method, target, header, body)
	if err != nil {
		fx.T.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), InvokeTimeout)
	resp, err := lambdaapp.FunctionURL(fx.Handler)(ctx, ev)
	if err != nil {
		cancel()
		fx.T.Fatalf("%s %s: invocation failed: %v", method, target, err)
	}
	if ct := resp.ContentType(); ct != "application/vnd.awslambda.http-integration-response" {
		cancel()
		fx.T.Fatalf("%s %s: content type %q", method, target, ct)
	}
	p, r, err := ReadPrelude(resp)
	if err != nil {
		cancel()
		fx.T.Fatalf("%s %s: %v", method, target, err)
	}
	return p, r, func() { _ = resp.Close(); cancel() }
}

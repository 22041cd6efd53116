package removal_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/lambdatest"
	"agentchat/internal/lambdaapp/removal"
	"agentchat/internal/store"
	"agentchat/internal/store/dynamo"
)

var endpoint string

func TestMain(m *testing.M) { os.Exit(lambdatest.WithDynalite(m, &endpoint)) }

// table is a fresh table whose client can be made slow: once stallAfter
// DeleteItem calls have been made (when armed), every request waits
// until its context is done, as a removal running out of time does.
type table struct {
	client     *dynamodb.Client
	store      *dynamo.Store
	name       string
	armed      atomic.Bool
	stallAfter atomic.Int64
	deletes    atomic.Int64
	failWith   atomic.Value // error returned by every request when set
}

func newTable(t *testing.T) *table {
	t.Helper()
	tb := &table{name: "t-" + uuid.NewString()}
	tb.client = dynamodb.New(dynamodb.Options{
		Region:       lambdatest.Region,
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String(endpoint),
		APIOptions: []func(*middleware.Stack) error{func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("stall",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					if err, _ := tb.failWith.Load().(error); err != nil {
						return middleware.InitializeOutput{}, middleware.Metadata{}, err
					}
					if awsmiddleware.GetOperationName(ctx) == "DeleteItem" && tb.deletes.Add(1) > tb.stallAfter.Load() && tb.armed.Load() {
						<-ctx.Done()
						return middleware.InitializeOutput{}, middleware.Metadata{}, ctx.Err()
					}
					return next.HandleInitialize(ctx, in)
				}), middleware.After)
		}},
	})
	tb.store = dynamo.NewFromClient(tb.client, tb.name)
	if err := tb.store.CreateTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	return tb
}

// stall makes requests hang after n more item deletions.
func (tb *table) stall(n int64) {
	tb.stallAfter.Store(tb.deletes.Load() + n)
	tb.armed.Store(true)
}

func (tb *table) unstall() { tb.armed.Store(false) }

// fill creates sessions × msgs messages in project for two users.
func (tb *table) fill(t *testing.T, project string, sessions, msgs int) {
	t.Helper()
	ctx := context.Background()
	for i := range sessions {
		user := []string{"alice", "bob"}[i%2]
		k := store.Key{ProjectID: project, UserID: user, ThreadID: uuid.NewString()}
		if err := tb.store.CreateSession(ctx, &store.Session{ThreadID: k.ThreadID, UserID: user, ProjectID: project}); err != nil {
			t.Fatal(err)
		}
		batch := make([]store.Message, msgs)
		for j := range batch {
			batch[j] = store.Message{Role: store.RoleUser, Content: strings.Repeat("m", 200)}
		}
		if _, err := tb.store.AppendMessages(ctx, k, batch); err != nil {
			t.Fatal(err)
		}
	}
}

// count scans the table and returns the number of items of project
// (session metas, messages, message parts: their keys start with P#project#).
func (tb *table) count(t *testing.T, project string) int {
	t.Helper()
	n := 0
	p := dynamodb.NewScanPaginator(tb.client, &dynamodb.ScanInput{TableName: aws.String(tb.name)})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range out.Items {
			if pk, ok := it["PK"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(pk.Value, "P#"+project+"#") {
				n++
			}
		}
	}
	return n
}

// jobs records the asynchronous invocations.
type jobs struct {
	mu   sync.Mutex
	jobs []removal.Job
	err  error
}

func (j *jobs) InvokeAsync(_ context.Context, job removal.Job) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return j.err
	}
	j.jobs = append(j.jobs, job)
	return nil
}

func (j *jobs) list() []removal.Job {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]removal.Job(nil), j.jobs...)
}

func TestRemoverWithinBudget(t *testing.T) {
	tb := newTable(t)
	tb.fill(t, "small", 4, 3)
	tb.fill(t, "other", 2, 2)
	other := tb.count(t, "other")
	inv := &jobs{}
	done, err := removal.Remover{Store: tb.store, Invoker: inv}.RemoveProject(context.Background(), "small")
	if err != nil || !done {
		t.Fatalf("RemoveProject = %v, %v; want done", done, err)
	}
	if n := tb.count(t, "small"); n != 0 {
		t.Errorf("%d items of the project left", n)
	}
	if n := tb.count(t, "other"); n != other {
		t.Errorf("other project: %d items, want %d", n, other)
	}
	if got := inv.list(); len(got) != 0 {
		t.Errorf("worker invoked for a removal done within budget: %+v", got)
	}
}

func TestRemoverHandsOffThenWorkerFinishes(t *testing.T) {
	tb := newTable(t)
	tb.fill(t, "big", 50, 20)
	tb.fill(t, "other", 3, 4)
	other := tb.count(t, "other")
	before := tb.count(t, "big")
	inv := &jobs{}

	// The request runs out of its budget part way.
	tb.stall(100)
	done, err := removal.Remover{Store: tb.store, Invoker: inv, Budget: 300 * time.Millisecond}.RemoveProject(context.Background(), "big")
	if err != nil || done {
		t.Fatalf("RemoveProject = %v, %v; want handed off (not done, no error)", done, err)
	}
	got := inv.list()
	if len(got) != 1 || got[0] != (removal.Job{ProjectID: "big", Attempt: 1}) {
		t.Fatalf("worker jobs %+v, want one for project big, attempt 1", got)
	}
	if left := tb.count(t, "big"); left == 0 || left > before {
		t.Fatalf("%d of %d items left after the cut-off request", left, before)
	}

	// The first worker run runs out of its time too, and continues in a
	// second run.
	tb.stall(100)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	err = removal.Worker{Store: tb.store, Invoker: inv, Margin: 100 * time.Millisecond}.Handle(ctx, got[0])
	cancel()
	if err != nil {
		t.Fatalf("cut-off worker run: %v", err)
	}
	got = inv.list()
	if len(got) != 2 || got[1] != (removal.Job{ProjectID: "big", Attempt: 2}) {
		t.Fatalf("worker jobs %+v, want a second run (attempt 2)", got)
	}

	// The second run has the time to finish.
	tb.unstall()
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := (removal.Worker{Store: tb.store, Invoker: inv}).Handle(ctx, got[1]); err != nil {
		t.Fatalf("last worker run: %v", err)
	}
	if n := tb.count(t, "big"); n != 0 {
		t.Errorf("%d items of the removed project left", n)
	}
	if n := tb.count(t, "other"); n != other {
		t.Errorf("other project: %d items, want %d untouched", n, other)
	}
	if n := len(inv.list()); n != 2 {
		t.Errorf("%d invocations, want no more after the removal finished", n)
	}
}

func TestRemovalFailures(t *testing.T) {
	boom := errors.New("dynamodb unavailable")
	tests := []struct {
		name    string
		run     func(tb *table, inv *jobs) error
		wantErr string
		jobs    int
	}{
		{name: "store failure is not handed off", run: func(tb *table, inv *jobs) error {
			tb.failWith.Store(boom)
			_, err := removal.Remover{Store: tb.store, Invoker: inv}.RemoveProject(context.Background(), "p")
			return err
		}, wantErr: "dynamodb unavailable"},
		{name: "hand-off failure", run: func(tb *table, inv *jobs) error {
			tb.stall(0)
			inv.err = errors.New("throttled")
			_, err := removal.Remover{Store: tb.store, Invoker: inv, Budget: 50 * time.Millisecond}.RemoveProject(context.Background(), "p")
			return err
		}, wantErr: "throttled"},
		{name: "worker store failure is retried by Lambda", run: func(tb *table, inv *jobs) error {
			tb.failWith.Store(boom)
			return removal.Worker{Store: tb.store, Invoker: inv}.Handle(context.Background(), removal.Job{ProjectID: "p", Attempt: 1})
		}, wantErr: "dynamodb unavailable"},
		{name: "worker gives up after MaxAttempts", run: func(tb *table, inv *jobs) error {
			tb.stall(0)
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			return removal.Worker{Store: tb.store, Invoker: inv, MaxAttempts: 3, Margin: 50 * time.Millisecond}.Handle(ctx, removal.Job{ProjectID: "p", Attempt: 3})
		}, wantErr: "not finished after 3 runs"},
		{name: "invalid job", run: func(tb *table, inv *jobs) error {
			return removal.Worker{Store: tb.store, Invoker: inv}.Handle(context.Background(), removal.Job{ProjectID: "../x"})
		}, wantErr: "Invalid project_id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb := newTable(t)
			tb.fill(t, "p", 3, 2)
			inv := &jobs{}
			err := tc.run(tb, inv)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if n := len(inv.list()); n != tc.jobs {
				t.Fatalf("%d worker jobs, want %d", n, tc.jobs)
			}
		})
	}
}

// fakeLambda records Invoke requests (REST: POST
// /2015-03-31/functions/{name}/invocations).
type fakeLambda struct {
	mu     sync.Mutex
	calls  []invokeCall
	status int
}

type invokeCall struct {
	Path, InvocationType string
	Job                  removal.Job
	Signed               bool
}

func newFakeLambda(t *testing.T) (*fakeLambda, string) {
	f := &fakeLambda{status: http.StatusAccepted}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c := invokeCall{Path: r.URL.Path, InvocationType: r.Header.Get("X-Amz-Invocation-Type"),
			Signed: strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ")}
		_ = json.Unmarshal(body, &c.Job)
		f.mu.Lock()
		f.calls = append(f.calls, c)
		status := f.status
		f.mu.Unlock()
		if status != http.StatusAccepted {
			w.Header().Set("X-Amzn-ErrorType", "TooManyRequestsException")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"message":"Rate exceeded"}`))
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func (f *fakeLambda) list() []invokeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]invokeCall(nil), f.calls...)
}

func TestLambdaInvoker(t *testing.T) {
	fake, url := newFakeLambda(t)
	client := awslambda.New(awslambda.Options{
		BaseEndpoint: aws.String(url), Region: lambdatest.Region,
		Credentials:      credentials.NewStaticCredentialsProvider("k", "s", ""),
		RetryMaxAttempts: 1,
	})
	inv := &removal.LambdaInvoker{Client: client, FunctionName: "stack-project-removal-worker"}
	if err := inv.InvokeAsync(context.Background(), removal.Job{ProjectID: "p1", Attempt: 2}); err != nil {
		t.Fatal(err)
	}
	got := fake.list()
	want := invokeCall{Path: "/2015-03-31/functions/stack-project-removal-worker/invocations", InvocationType: "Event",
		Job: removal.Job{ProjectID: "p1", Attempt: 2}, Signed: true}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("invocations %+v, want %+v", got, want)
	}
	fake.status = http.StatusTooManyRequests
	if err := inv.InvokeAsync(context.Background(), removal.Job{ProjectID: "p1"}); err == nil || !strings.Contains(err.Error(), "stack-project-removal-worker") {
		t.Fatalf("throttled invocation: error %v", err)
	}
}

// awsEnv points the default AWS configuration at fake endpoints.
func awsEnv(t *testing.T, lambdaURL string) {
	t.Setenv("AWS_REGION", lambdatest.Region)
	t.Setenv("AWS_ACCESS_KEY_ID", "lambdatest")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "lambdatest")
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", lambdaURL)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
}

func TestDeleteFunction(t *testing.T) {
	fake, url := newFakeLambda(t)
	awsEnv(t, url)
	f, err := lambdaapp.Find(removal.Funcs(), removal.DeleteFunction)
	if err != nil {
		t.Fatal(err)
	}
	fx := lambdatest.New(t, endpoint, f, map[string]string{removal.WorkerEnv: "stack-project-removal-worker"})
	ctx := context.Background()
	k := store.Key{ProjectID: "gone", UserID: "alice", ThreadID: uuid.NewString()}
	if err := fx.Store.CreateSession(ctx, &store.Session{ThreadID: k.ThreadID, UserID: k.UserID, ProjectID: k.ProjectID}); err != nil {
		t.Fatal(err)
	}
	route := "DELETE /v3/projects/{project_id}/chat"
	tests := []struct {
		name   string
		header map[string]string
		status int
	}{
		{name: "no credentials", header: nil, status: http.StatusUnauthorized},
		{name: "a user, without a GNS3 controller to say the project is gone", header: fx.Auth("alice"), status: http.StatusForbidden},
		{name: "the admin token", header: map[string]string{"Authorization": "Bearer " + lambdatest.AdminToken}, status: http.StatusNoContent},
	}
	for _, tc := range tests {
		resp := fx.API(route, "/v3/projects/gone/chat", tc.header, "")
		if resp.Status != tc.status {
			t.Fatalf("%s: status %d, want %d: %s", tc.name, resp.Status, tc.status, resp.Body)
		}
	}
	if _, err := fx.Store.GetSession(ctx, k); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("session after removal: %v", err)
	}
	if calls := fake.list(); len(calls) != 0 {
		t.Fatalf("a small removal invoked the worker: %+v", calls)
	}

	// Without the worker's name the function refuses to start.
	_, _, err = f.Handler(ctx, lambdatest.Env(endpoint, "t-noworker", nil), io.Discard)
	if err == nil || !strings.Contains(err.Error(), removal.WorkerEnv) {
		t.Fatalf("start without %s: %v", removal.WorkerEnv, err)
	}
}

func TestNewWorker(t *testing.T) {
	fake, url := newFakeLambda(t)
	awsEnv(t, url)
	tb := newTable(t)
	tb.fill(t, "p", 2, 2)
	env := lambdatest.Env(endpoint, tb.name, map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "stack-project-removal-worker", "JWT_SECRET": ""})
	w, err := removal.NewWorker(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Handle(context.Background(), removal.Job{ProjectID: "p", Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	if n := tb.count(t, "p"); n != 0 {
		t.Fatalf("%d items left", n)
	}
	// Its invoker targets the worker itself.
	if err := w.Invoker.InvokeAsync(context.Background(), removal.Job{ProjectID: "p", Attempt: 2}); err != nil {
		t.Fatal(err)
	}
	if calls := fake.list(); len(calls) != 1 || !strings.Contains(calls[0].Path, "/functions/stack-project-removal-worker/") {
		t.Fatalf("self-invocation %+v", calls)
	}
	if _, err := removal.NewWorker(context.Background(), lambdatest.Env(endpoint, tb.name, nil)); err == nil {
		t.Fatal("worker without AWS_LAMBDA_FUNCTION_NAME: no error")
	}
}

// Package removal removes a project's chat in AWS Lambda, where nothing
// may run after the response (the process is frozen): the
// project-chat-delete function deletes within a budget and, when the
// project is too large, answers 202 and hands the rest to the
// project-removal-worker function by an asynchronous invocation
// (InvocationType Event). The worker deletes until shortly before its own
// deadline and, if still not done, invokes itself again with the next
// attempt. The store's removal is resumable (each thread's meta item goes
// last), so every run continues where the previous one stopped, and a
// failed run is retried by Lambda's asynchronous retries.
package removal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"agentchat/internal/config"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/sessions"
	"agentchat/internal/lambdaapp"
	"agentchat/internal/store"
	"agentchat/internal/wire"
	"agentchat/internal/wire/dynamowire"
)

// Function names (folders under functions/).
const (
	// DeleteFunction serves DELETE /v3/projects/{project_id}/chat.
	DeleteFunction = "project-chat-delete"
	// WorkerFunction finishes large removals in the background.
	WorkerFunction = "project-removal-worker"
)

// WorkerEnv is the variable naming the worker function (name or ARN) for
// the delete function.
const WorkerEnv = "REMOVAL_WORKER_FUNCTION"

// Defaults.
const (
	// DefaultBudget is how long the delete function removes before it
	// hands off to the worker (the HTTP API waits at most 30 seconds).
	DefaultBudget = 5 * time.Second
	// DefaultMargin is how long before its deadline a worker run stops
	// and hands off to the next run.
	DefaultMargin = 15 * time.Second
	// DefaultMaxAttempts bounds the chain of worker runs of one removal
	// (Lambda's recursion detection stops chains of about 16 anyway).
	DefaultMaxAttempts = 15
)

// Job is the event of the worker function.
type Job struct {
	ProjectID string `json:"project_id"`
	// Attempt counts the worker runs of this removal, from 1.
	Attempt int `json:"attempt"`
}

// Invoker starts a worker run asynchronously.
type Invoker interface {
	InvokeAsync(ctx context.Context, job Job) error
}

// LambdaAPI is the part of the Lambda client the invoker uses.
type LambdaAPI interface {
	Invoke(ctx context.Context, in *awslambda.InvokeInput, optFns ...func(*awslambda.Options)) (*awslambda.InvokeOutput, error)
}

// LambdaInvoker invokes a function with InvocationType Event.
type LambdaInvoker struct {
	Client LambdaAPI
	// FunctionName is the worker's name or ARN.
	FunctionName string
}

// NewLambdaInvoker returns an invoker of function through a Lambda client
// built from the default AWS configuration (AWS_ENDPOINT_URL_LAMBDA
// overrides the endpoint).
func NewLambdaInvoker(ctx context.Context, function string) (*LambdaInvoker, error) {
	if function == "" {
		return nil, errors.New("no worker function to invoke")
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	return &LambdaInvoker{Client: awslambda.NewFromConfig(cfg), FunctionName: function}, nil
}

// InvokeAsync implements Invoker.
func (l *LambdaInvoker) InvokeAsync(ctx context.Context, job Job) error {
	payload, err := json.Marshal(job)
	if err != nil {
		return fmt.Errorf("encode removal job: %w", err)
	}
	out, err := l.Client.Invoke(ctx, &awslambda.InvokeInput{
		FunctionName:   aws.String(l.FunctionName),
		InvocationType: types.InvocationTypeEvent,
		Payload:        payload,
	})
	if err != nil {
		return fmt.Errorf("invoke %s asynchronously: %w", l.FunctionName, err)
	}
	if out.StatusCode != http.StatusAccepted {
		return fmt.Errorf("invoke %s asynchronously: status %d, want 202", l.FunctionName, out.StatusCode)
	}
	return nil
}

// Remover is the sessions.ProjectRemover of the delete function.
type Remover struct {
	Store   store.Sessions
	Invoker Invoker
	// Budget is how long the request removes before handing off
	// (0: DefaultBudget).
	Budget time.Duration
	Logger *slog.Logger
}

var _ sessions.ProjectRemover = Remover{}

// RemoveProject removes the project's chat within the budget (done), or
// hands the rest to the worker (not done, answered 202).
func (r Remover) RemoveProject(ctx context.Context, projectID string) (bool, error) {
	budget := r.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	bctx, cancel := context.WithTimeout(ctx, budget)
	err := r.Store.DeleteProject(bctx, projectID)
	cut := bctx.Err() != nil && ctx.Err() == nil
	cancel()
	if err == nil {
		return true, nil
	}
	if !cut {
		return false, err
	}
	if err := r.Invoker.InvokeAsync(ctx, Job{ProjectID: projectID, Attempt: 1}); err != nil {
		return false, fmt.Errorf("hand the removal of project %s to the worker: %w", projectID, err)
	}
	logger(r.Logger).Info("project removal continues in the background", "project_id", projectID, "budget", budget.String())
	return false, nil
}

// Worker is the handler of the worker function.
type Worker struct {
	Store store.Sessions
	// Invoker invokes the worker itself for the next run.
	Invoker Invoker
	// Margin is kept before the invocation's deadline (0: DefaultMargin).
	Margin time.Duration
	// MaxAttempts bounds the chain of runs (0: DefaultMaxAttempts).
	MaxAttempts int
	Logger      *slog.Logger
}

// Handle runs one removal job. It returns an error (so that Lambda retries
// the event) when the removal fails, and hands the job to a next run when
// the invocation's time runs out first.
func (w Worker) Handle(ctx context.Context, job Job) error {
	if err := httpapi.ValidateProjectID(job.ProjectID); err != nil {
		return fmt.Errorf("removal job: %w", err)
	}
	attempt := max(job.Attempt, 1)
	maxAttempts := w.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	margin := w.Margin
	if margin <= 0 {
		margin = DefaultMargin
	}
	log := logger(w.Logger).With("project_id", job.ProjectID, "attempt", attempt)
	rctx, cancel := lambdaapp.Bound(ctx, margin)
	err := w.Store.DeleteProject(rctx, job.ProjectID)
	cut := rctx.Err() != nil && ctx.Err() == nil
	cancel()
	switch {
	case err == nil:
		log.Info("project removal finished")
		return nil
	case !cut:
		return fmt.Errorf("remove project %s (run %d): %w", job.ProjectID, attempt, err)
	case attempt >= maxAttempts:
		return fmt.Errorf("remove project %s: not finished after %d runs", job.ProjectID, attempt)
	}
	if err := w.Invoker.InvokeAsync(ctx, Job{ProjectID: job.ProjectID, Attempt: attempt + 1}); err != nil {
		return fmt.Errorf("continue the removal of project %s: %w", job.ProjectID, err)
	}
	log.Info("project removal continues in a next run")
	return nil
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}

// Funcs returns the delete function.
func Funcs() []lambdaapp.Func { return []lambdaapp.Func{ProjectChatDelete()} }

func buildDelete(ctx context.Context, app *lambdaapp.App) ([]httpapi.Route, error) {
	name := app.Getenv(WorkerEnv)
	if name == "" {
		return nil, fmt.Errorf("%s is required: the function that finishes large removals", WorkerEnv)
	}
	inv, err := NewLambdaInvoker(ctx, name)
	if err != nil {
		return nil, err
	}
	rm := Remover{Store: app.Store, Invoker: inv, Logger: app.Logger}
	return sessions.New(app.Store, rm, app.RemovalPolicy()).RemovalRoutes(), nil
}

// ProjectChatDelete is the function project-chat-delete.
func ProjectChatDelete() lambdaapp.Func {
	return lambdaapp.NewFunc(DeleteFunction, lambdaapp.API, buildDelete, http.MethodDelete+" "+sessions.PathProject)
}

// MainWorker runs the function project-removal-worker, which is invoked
// by the delete function (and by itself) rather than through HTTP.
func MainWorker() {
	ctx := context.Background()
	w, err := NewWorker(ctx, os.Getenv)
	if err != nil {
		lambdaapp.Exit(WorkerFunction, err)
	}
	lambda.Start(w.Handle)
}

// NewWorker builds the worker from the environment: the table, and the
// function itself (AWS_LAMBDA_FUNCTION_NAME, set by Lambda) to invoke for
// the next run. It needs no secret.
func NewWorker(ctx context.Context, getenv func(string) string) (*Worker, error) {
	cfg, err := config.Load(getenv, config.LambdaDefaults())
	if err != nil {
		return nil, err
	}
	log := wire.NewLogger(os.Stdout, cfg.LogLevel).With("function", WorkerFunction)
	st, err := dynamowire.Open(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	inv, err := NewLambdaInvoker(ctx, getenv("AWS_LAMBDA_FUNCTION_NAME"))
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("worker: %w", err)
	}
	return &Worker{Store: st, Invoker: inv, Logger: log}, nil
}

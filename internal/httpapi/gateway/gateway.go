// Package gateway serves the agent gateway (/v1): agentchat's agents
// exposed as OpenAI "models" so that OpenAI SDKs, Open WebUI, LibreChat and
// curl work unchanged. The routes are stateless: the client sends the whole
// conversation with each request and nothing of it is stored.
//
// Routes (every one but GET /v1/ needs a JWT or an API key; every error body
// is OpenAI-shaped, {"error":{"message","type","param","code"}}):
//
//	GET  /v1/                  {"status":"ok"} (public)
//	GET  /v1/agents            [{"id","description"}]
//	GET  /v1/models            {"object":"list","data":[model...]}, one per agent
//	GET  /v1/models/{id}       one model, 404 model_not_found for an unknown id
//	POST /v1/chat              token SSE: data: {"token":"..."} … data: [DONE]
//	POST /v1/chat/sync         {"agent_id","response","usage"}
//	POST /v1/chat/completions  OpenAI Chat Completions, stream true or false
//	GET  /v1/usage             the calling key's usage and cost (package usage)
//
// A failure of a run is reported with one mapping (runFailure): the same
// failure has the same type, code and param whether it is answered before
// a stream started (with its HTTP status: 429 llm_rate_limit, 502
// llm_server, 504 gateway_timeout, ...) or, once the stream started, as
// its error event data: {"error":{...}} before data: [DONE].
//
// The bodies of the routes, the conversion of a request to its agent run
// and the encoding of the answers are package openaiwire's; see its
// ChatCompletionRequest and ChatRequest for the request bodies. Every
// error is an openaierr.Error.
package gateway

import (
	"log/slog"
	"net/http"
	"time"

	"agentchat/internal/agent"
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/gateway/openaiwire"
	"agentchat/internal/httpapi/openaierr"
	"agentchat/internal/store"
)

// Route paths.
const (
	// PathRoot matches exactly "/v1/" ("/v1" is served too: PathRootBare).
	PathRoot        = "/v1/{$}"
	PathRootBare    = "/v1"
	PathAgents      = "/v1/agents"
	PathModels      = "/v1/models"
	PathModel       = "/v1/models/{id}"
	PathChat        = "/v1/chat"
	PathChatSync    = "/v1/chat/sync"
	PathCompletions = "/v1/chat/completions"
	PathUsage       = "/v1/usage"
)

// Defaults applied by New to zero Options fields.
const (
	// DefaultHeartbeat is the idle gap before an SSE keep-alive comment.
	DefaultHeartbeat = 15 * time.Second
	// DefaultTimeout bounds one request's agent run. The runtime's own
	// TurnTimeout normally ends a run first (with a clear message); this is
	// the backstop that holds whatever the runtime is configured with,
	// since in Lambda a client disconnect does not cancel the context.
	DefaultTimeout = 15 * time.Minute
	// MaxBodyBytes bounds the JSON body of the chat routes (long
	// conversations are sent whole with every request).
	MaxBodyBytes = 4 << 20
)

// Options configure the gateway. Each route needs only part of them: the
// model and agent routes need Agents; the chat routes need Agents and
// Runtime (they answer 500 without them).
type Options struct {
	// Runtime runs the agents (RunStateless).
	Runtime *agent.Runtime
	// Agents is the registry the models are listed from and requests are
	// resolved against (agent_id → model → the registry's fallback).
	Agents *agent.Registry
	// Logger receives handler logs when the request carries no logger of
	// the router (which adds the request id); nil: slog.Default().
	Logger *slog.Logger
	// Heartbeat is the idle gap before an SSE keep-alive comment
	// (0: DefaultHeartbeat; negative: none).
	Heartbeat time.Duration
	// Timeout bounds one agent run (0: DefaultTimeout).
	Timeout time.Duration
	// Created is the "created" time of the model entries (zero: the time
	// New was called).
	Created time.Time
	// Now returns the current time, for the "created" of completions
	// (nil: time.Now), and for the minutes of the API keys' rpm and tpm.
	Now func() time.Time
	// Rates holds the per-minute counters of the API keys' rpm and tpm
	// (the store, shared by every instance); nil: rpm and tpm are not
	// enforced. See admit.
	Rates store.RateCounters
	// Ledger is the usage ledger GET /v1/usage reads (nil: that route
	// answers 500).
	Ledger store.UsageLedger
}

// Gateway serves the /v1 routes.
type Gateway struct {
	o Options
}

// New returns the gateway with the defaults applied to o.
func New(o Options) *Gateway {
	if o.Heartbeat == 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Created.IsZero() {
		o.Created = o.Now()
	}
	return &Gateway{o: o}
}

// Routes returns every /v1 route. A process serving only some of them picks
// them with httpapi.Select (patterns such as "GET /v1/models").
func (g *Gateway) Routes() []httpapi.Route {
	open := httpapi.StyleOpenAI
	return []httpapi.Route{
		{Method: http.MethodGet, Path: PathRoot, Handler: g.root, Public: true, Style: open},
		{Method: http.MethodGet, Path: PathRootBare, Handler: g.root, Public: true, Style: open},
		{Method: http.MethodGet, Path: PathAgents, Handler: g.agents, Style: open},
		{Method: http.MethodGet, Path: PathModels, Handler: g.models, Style: open},
		{Method: http.MethodGet, Path: PathModel, Handler: g.model, Style: open},
		{Method: http.MethodPost, Path: PathChat, Handler: g.chat, Style: open},
		{Method: http.MethodPost, Path: PathChatSync, Handler: g.chatSync, Style: open},
		{Method: http.MethodPost, Path: PathCompletions, Handler: g.completions, Style: open},
		{Method: http.MethodGet, Path: PathUsage, Handler: g.usageReport, Style: open},
	}
}

// logger returns the request's logger (with its request id and user), or
// the configured one outside the router.
func (g *Gateway) logger(r *http.Request) *slog.Logger {
	l := httpapi.Logger(r.Context())
	if l == slog.Default() && g.o.Logger != nil {
		return g.o.Logger
	}
	return l
}

// decode reads the JSON body of a chat route into dst (unknown fields
// tolerated).
func decode(w http.ResponseWriter, r *http.Request, dst any) error {
	return httpapi.DecodeJSON(w, r, dst, httpapi.DecodeOptions{MaxBytes: MaxBodyBytes})
}

func (g *Gateway) root(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (g *Gateway) agents(w http.ResponseWriter, r *http.Request) {
	if g.o.Agents == nil {
		httpapi.Fail(w, r, errNoRegistry)
		return
	}
	list := g.o.Agents.List()
	out := make([]openaiwire.AgentInfo, 0, len(list))
	for _, a := range list {
		out = append(out, openaiwire.AgentInfo{ID: a.ID, Description: a.Description})
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

func (g *Gateway) models(w http.ResponseWriter, r *http.Request) {
	if g.o.Agents == nil {
		httpapi.Fail(w, r, errNoRegistry)
		return
	}
	list := g.o.Agents.List()
	out := openaiwire.ModelList{Object: "list", Data: make([]openaiwire.Model, 0, len(list))}
	for _, a := range list {
		out.Data = append(out.Data, openaiwire.ModelOf(a, g.o.Created))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

func (g *Gateway) model(w http.ResponseWriter, r *http.Request) {
	if g.o.Agents == nil {
		httpapi.Fail(w, r, errNoRegistry)
		return
	}
	id := r.PathValue("id")
	a, ok := g.o.Agents.Get(id)
	if !ok {
		openaierr.Write(w, openaiwire.ModelNotFound(id))
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, openaiwire.ModelOf(a, g.o.Created))
}

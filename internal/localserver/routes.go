package localserver

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/apikeys"
	"agentchat/internal/httpapi/chat"
	"agentchat/internal/httpapi/gateway"
	"agentchat/internal/httpapi/llmconfigs"
	"agentchat/internal/httpapi/sessions"
	"agentchat/internal/httpapi/skillsreload"
	"agentchat/internal/httpapi/usageapi"
	"agentchat/internal/httpapi/userpath"
	"agentchat/internal/llmconfig"
	"agentchat/internal/store"
	"agentchat/internal/telemetry"
	"agentchat/internal/webui"
	"agentchat/internal/wire"
	"agentchat/internal/wire/agentwire"
)

// Handler returns the handler serving every route, and a cleanup func.
// Without ENCRYPTION_KEY, the key sealing stored LLM API keys is the one
// in DATA_DIR (created on first start).
func Handler(ctx context.Context, base *wire.Base) (http.Handler, func(), error) {
	if err := base.UseLocalKey(); err != nil {
		return nil, nil, err
	}
	users := userpath.New(base.GNS3)
	groups := llmconfig.NewGroupSource(base.GNS3, users, 0)
	ag, err := agentwire.New(base, groups)
	if err != nil {
		return nil, nil, fmt.Errorf("build agents: %w", err)
	}
	return base.Router(serverRoutes(base, ag, users, groups)...), func() {}, nil
}

// serverRoutes returns every route the local server mounts, the chat and
// the gateway running the agents of ag (a test gives its own).
func serverRoutes(base *wire.Base, ag *agentwire.Agent, users *userpath.Resolver, groups llmconfig.GroupSource) []httpapi.Route {
	sess := sessions.New(base.Store, sessions.BackgroundRemover{Store: base.Store, Logger: base.Logger}, base.RemovalPolicy())
	co := chat.Options{Runtime: ag.Runtime, Heartbeat: base.Config.Heartbeat, Store: base.Store}
	if base.Config.TurnLog {
		co.TurnLogs, co.TurnLogKeep = base.Store, base.Config.TurnTimeout+store.TurnLogKeep
	}
	ch := chat.New(co)
	gw := gateway.New(gateway.Options{Runtime: ag.Runtime, Agents: ag.Registry, Heartbeat: base.Config.Heartbeat,
		Timeout: base.Config.TurnTimeout + time.Minute, Rates: base.Store, Ledger: base.Store})
	keys := apikeys.New(base.Store, apikeys.Options{Users: users})
	cfgs := llmconfigs.New(base.Store, llmconfigs.Options{
		Secrets:    base.Secrets,
		Users:      users,
		Groups:     groups,
		AdminToken: base.Config.AdminToken,
		Auth:       base.Auth,
		GNS3:       base.GNS3,
	})

	var routes []httpapi.Route
	routes = append(routes, sess.Routes()...)
	routes = append(routes, sess.RemovalRoutes()...)
	routes = append(routes, ch.Routes()...)
	routes = append(routes, gw.Routes()...)
	routes = append(routes, keys.Routes()...)
	routes = append(routes, usageapi.New(base.Store, usageapi.Options{Users: users, AdminToken: base.Config.AdminToken, Auth: base.Auth}).Routes()...)
	routes = append(routes, cfgs.Routes()...)
	routes = append(routes, labChangesRoutes(base)...) // undo and audit
	routes = append(routes, webui.Routes()...)         // the web console: GET / and /assets/
	// The console's project list (GET /v3/copilot/projects), local server only.
	routes = append(routes, webui.ProjectsRoute(base.GNS3))
	if ag.Skills != nil { // POST /v3/copilot/reload/skills
		reload := skillsreload.Options{Skills: ag.Skills, AdminToken: base.Config.AdminToken, Auth: base.Auth}
		if base.GNS3 != nil {
			reload.Superadmins = skillsreload.GNS3Superadmins{Client: base.GNS3}
		}
		routes = append(routes, skillsreload.New(reload).Routes()...)
	}
	if base.Metrics != nil { // METRICS=on: GET /metrics
		routes = append(routes, metricsRoute(base.Metrics))
	}
	return routes
}

// metricsRoute answers the process's metrics as Prometheus text. It is
// public, as scrapers expect: it holds counts by model, tool, route and
// outcome, never a user, a session or a message.
func metricsRoute(m *telemetry.Metrics) httpapi.Route {
	return httpapi.Route{Method: http.MethodGet, Path: "/metrics", Public: true,
		Handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", telemetry.ContentType)
			w.Header().Set("Cache-Control", "no-store")
			_ = m.WriteText(w)
		}}
}

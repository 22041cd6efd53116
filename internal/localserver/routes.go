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
	"agentchat/internal/httpapi/sessions"
	"agentchat/internal/wire"
	"agentchat/internal/wire/agentwire"
)

// Handler returns the handler serving every route, and a cleanup func.
func Handler(ctx context.Context, base *wire.Base) (http.Handler, func(), error) {
	ag, err := agentwire.New(base.Config, base.Store, base.GNS3, base.Logger)
	if err != nil {
		return nil, nil, fmt.Errorf("build agents: %w", err)
	}
	sess := sessions.New(base.Store, sessions.BackgroundRemover{Store: base.Store, Logger: base.Logger}, base.RemovalPolicy())
	ch := chat.New(chat.Options{Runtime: ag.Runtime, Heartbeat: base.Config.Heartbeat})
	gw := gateway.New(gateway.Options{Runtime: ag.Runtime, Agents: ag.Registry, Heartbeat: base.Config.Heartbeat,
		Timeout: base.Config.TurnTimeout + time.Minute})
	keys := apikeys.New(base.Store, apikeys.Options{})

	var routes []httpapi.Route
	routes = append(routes, sess.Routes()...)
	routes = append(routes, sess.RemovalRoutes()...)
	routes = append(routes, ch.Routes()...)
	routes = append(routes, gw.Routes()...)
	routes = append(routes, keys.Routes()...)
	return base.Router(routes...), func() {}, nil
}

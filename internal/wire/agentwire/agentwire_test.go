package agentwire

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"agentchat/internal/agent"
	"agentchat/internal/agents"
	"agentchat/internal/auth"
	"agentchat/internal/config"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/tools/gns3topo"
)

func TestRegistryGNS3Topology(t *testing.T) {
	const token = "user-jwt-SECRET"
	fake := gns3test.NewServer(t, gns3test.AcceptTokens(token))
	pid := fake.AddProject("lab", gns3.StatusOpened)
	fake.SeedTopology(pid)
	gc, err := gns3.New(fake.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	ctx := auth.WithIdentity(context.Background(), auth.Identity{UserID: "u1", Token: token, Via: auth.ViaJWT})
	tests := []struct {
		name     string
		gc       *gns3.Client
		want     string
		requests int
	}{
		{"configured", gc, `"name":"Switch1"`, 2},
		{"without GNS3_URL", nil, "GNS3 is not configured on this server", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fake.Requests()
			reg, err := Registry(&config.Config{}, tt.gc, nil, nil, log)
			if err != nil {
				t.Fatal(err)
			}
			a, ok := reg.Get(agents.GNS3Copilot)
			if !ok {
				t.Fatal("no gns3-copilot")
			}
			p, err := a.Prepared(ctx, agent.TurnInfo{ProjectID: pid, UserID: "u1"})
			extra := p.Prompt
			if err != nil || !strings.Contains(extra, tt.want) || strings.Contains(extra, token) {
				t.Fatalf("extra = %q, err %v", extra, err)
			}
			// The lab tools are there either way; without GNS3_URL they say
			// GNS3 is not configured.
			tools := agent.Tools(p.Skills)
			if len(tools) == 0 {
				t.Fatal("no lab tools")
			}
			if tt.gc == nil {
				if _, err := tools[0].Execute(ctx, []byte("{}")); err == nil || err.Error() != "GNS3 is not configured" {
					t.Fatalf("%s without GNS3_URL: %v", tools[0].Name, err)
				}
			}
			if tt.gc != nil && !strings.Contains(extra, gns3topo.Heading) {
				t.Errorf("no topology section: %q", extra)
			}
			if got := fake.Requests() - before; got != tt.requests {
				t.Errorf("%d GNS3 requests, want %d", got, tt.requests)
			}
		})
	}
}

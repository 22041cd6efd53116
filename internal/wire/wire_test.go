package wire_test

import (
	"context"
	"io"
	"testing"
	"time"

	"agentchat/internal/config"
	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/localserver"
	"agentchat/internal/wire"
)

// TestGNS3ClientKeepsItsConnections: the server's GNS3 client (GNS3_URL)
// keeps a connection per request it sends at once, round after round,
// instead of dialling most of them again (Go's default transport keeps
// two per host).
func TestGNS3ClientKeepsItsConnections(t *testing.T) {
	const atOnce, rounds = 16, 4
	fake := gns3test.NewServer(t, nil)
	project := fake.AddProject("lab", gns3.StatusOpened)
	fake.SetLatency(20 * time.Millisecond) // every request of a round in flight at once
	env := map[string]string{"ADDR": "127.0.0.1:0", "DATA_DIR": t.TempDir(), "GNS3_URL": fake.URL,
		"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "OPENAI_MODEL": "m"}
	cfg, err := config.Load(func(k string) string { return env[k] }, config.LocalDefaults())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b, err := wire.NewBase(ctx, cfg, wire.NewLogger(io.Discard, cfg.LogLevel), localserver.StoreOpener(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	n := fake.ConnsOfRounds(t, atOnce, rounds, func() error {
		_, err := b.GNS3.GetNodes(ctx, "", project)
		return err
	})
	if n > atOnce {
		t.Fatalf("%d connections for %d rounds of %d requests at once", n, rounds, atOnce)
	}
}

// Command gns3 is the GNS3 controller of the web console's browser tests
// (web/test): the in-repo fake (internal/gns3/gns3test) run as its own
// process, on a free loopback port, with a few opened and closed projects
// of fixed ids. It prints "listening on http://ADDR" on stdout and serves
// until it is stopped (SIGINT or SIGTERM).
//
// With -token, only requests bearing that token are served (others get
// GNS3's 401), as a controller checking the user's credential does.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
)

func main() {
	token := flag.String("token", "", "serve only requests with this bearer token (default: every request)")
	flag.Parse()
	var authorize gns3test.Authorizer
	if *token != "" {
		authorize = gns3test.AcceptTokens(*token)
	}
	srv, closeServer := gns3test.Start(authorize)
	defer closeServer()
	srv.SeedTemplates()
	// In the order GNS3 lists them, not the order the console shows.
	projects := []struct{ id, name, status string }{
		{"5a0c4e1e-0b7e-4d55-9d1f-3c8f1a2b4c01", "Campus OSPF", gns3.StatusOpened},
		{"5a0c4e1e-0b7e-4d55-9d1f-3c8f1a2b4c02", "branch-vpn", gns3.StatusClosed},
		{"5a0c4e1e-0b7e-4d55-9d1f-3c8f1a2b4c03", "Access lab", gns3.StatusOpened},
		{"5a0c4e1e-0b7e-4d55-9d1f-3c8f1a2b4c04", "Old archive", gns3.StatusClosed},
	}
	for _, p := range projects {
		srv.AddProjectWithID(p.id, p.name, p.status)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Printf("listening on %s\n", srv.URL)
	<-ctx.Done()
}

package gns3_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
)

// TestClientKeepsItsConnections: requests sent to the controller at the
// same time, round after round, reuse the connections of the rounds
// before: a client dials at most once per request in flight at once (Go's
// default transport keeps two idle connections per host and dialled
// again for the others every round).
func TestClientKeepsItsConnections(t *testing.T) {
	const (
		atOnce = 16
		rounds = 5
	)
	cases := []struct {
		name   string
		client func(url string) (*gns3.Client, error)
	}{
		{"New without an http.Client", func(url string) (*gns3.Client, error) { return gns3.New(url, nil) }},
		{"over NewTransport", func(url string) (*gns3.Client, error) {
			return gns3.New(url, &http.Client{Timeout: time.Minute, Transport: gns3.NewTransport()})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := gns3test.NewServer(t, nil)
			project := fake.AddProject("lab", gns3.StatusOpened)
			fake.SeedTopology(project)
			// Long enough for every request of a round to be in flight at once.
			fake.SetLatency(20 * time.Millisecond)
			c, err := tc.client(fake.URL)
			if err != nil {
				t.Fatal(err)
			}
			n := fake.ConnsOfRounds(t, atOnce, rounds, func() error {
				_, err := c.GetNodes(context.Background(), "", project)
				return err
			})
			if n > atOnce {
				t.Fatalf("%d connections for %d rounds of %d requests at once", n, rounds, atOnce)
			}
		})
	}
}

// Package gns3topo gives the gns3-copilot the topology of its project for
// each turn: the nodes and links are fetched once, with the user's own
// token, and shaped into a compact JSON section of the system prompt that
// leaves out node properties and anything else that may hold secrets.
// When the topology cannot be had (GNS3 not configured, no project, the
// controller unreachable or refusing), the section says so in plain words
// and the turn runs anyway.
package gns3topo

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
)

// Defaults applied by New to zero Options fields.
const (
	// DefaultTimeout bounds the fetch of one turn's topology.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxNodes is how many nodes the prompt lists at most.
	DefaultMaxNodes = 200
	// DefaultMaxLinks is how many links the prompt lists at most.
	DefaultMaxLinks = 400
	// DefaultMaxPorts is how many ports of one node the prompt lists at most.
	DefaultMaxPorts = 64
)

// Heading starts the topology section of the system prompt.
const Heading = "## GNS3 project topology"

// errFetchTimeout is the cause of a fetch that ran out of time.
var errFetchTimeout = errors.New("gns3 topology fetch timed out")

// Options configure a Provider.
type Options struct {
	// Client calls the GNS3 controller; nil means GNS3 is not configured
	// and every turn is told the topology is unavailable.
	Client *gns3.Client
	// Logger receives a warning when the topology cannot be fetched; nil
	// means slog.Default().
	Logger *slog.Logger
	// Timeout bounds the fetch (default DefaultTimeout).
	Timeout time.Duration
	// Limits bounds what the prompt lists (zero fields: the defaults).
	Limits Limits
}

// Provider builds the per-turn topology section. Safe for concurrent use.
type Provider struct {
	client  *gns3.Client
	log     *slog.Logger
	timeout time.Duration
	limits  Limits
}

// New returns a provider with the defaults applied to o.
func New(o Options) *Provider {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return &Provider{client: o.Client, log: o.Logger, timeout: o.Timeout, limits: o.Limits.withDefaults()}
}

// Prompt returns the topology section of projectID's system prompt: a
// heading and the topology as compact JSON, fetched with the token of the
// caller in ctx (auth.FromContext). When the topology cannot be fetched the
// section says why, in plain words, and the failure is logged: a warning,
// or at debug level when ctx ended first (the caller gave up).
func (p *Provider) Prompt(ctx context.Context, projectID string) string {
	if p.client == nil {
		return unavailable("GNS3 is not configured on this server")
	}
	if projectID == "" {
		return unavailable("this conversation is not attached to a GNS3 project")
	}
	topo, err := p.Fetch(ctx, projectID)
	if err != nil {
		level := slog.LevelWarn
		if ctx.Err() != nil {
			// The caller gave up (its turn was refused or stopped): no
			// fault of the controller's to warn about.
			level = slog.LevelDebug
		}
		p.log.Log(ctx, level, "gns3 topology unavailable", "project_id", projectID, "err", err)
		return unavailable(reason(ctx, err))
	}
	return Section(topo)
}

// Fetch reads the project's nodes and links concurrently, with the token of
// the caller in ctx, within the provider's timeout, and shapes them; only
// what the topology shows of them is decoded (listed.go).
func (p *Provider) Fetch(ctx context.Context, projectID string) (Topology, error) {
	if p.client == nil {
		return Topology{}, errors.New("gns3 topology: no GNS3 client configured")
	}
	token := ""
	if id, ok := auth.FromContext(ctx); ok {
		token = id.Token
	}
	fctx, cancelTimeout := context.WithTimeoutCause(ctx, p.timeout, errFetchTimeout)
	defer cancelTimeout()
	fctx, cancel := context.WithCancel(fctx)
	defer cancel()

	var (
		nodes    []listedNode
		links    []listedLink
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
			cancel() // the other request is of no use any more
		}
	}
	wg.Go(func() {
		var err error
		if nodes, err = gns3.ListNodes[listedNode](fctx, p.client, token, projectID); err != nil {
			fail(err)
		}
	})
	wg.Go(func() {
		var err error
		if links, err = gns3.ListLinks[listedLink](fctx, p.client, token, projectID); err != nil {
			fail(err)
		}
	})
	wg.Wait()
	if firstErr != nil {
		if errors.Is(firstErr, context.DeadlineExceeded) && context.Cause(fctx) == errFetchTimeout {
			firstErr = errors.Join(errFetchTimeout, firstErr)
		}
		return Topology{}, firstErr
	}
	return Shape(projectID, nodesOf(nodes), linksOf(links), p.limits), nil
}

// unavailable is the section given when the topology cannot be fetched.
func unavailable(why string) string {
	return Heading + "\nThe project topology is unavailable for this turn: " + why + ". " +
		"Do not assume which nodes, links or ports exist; ask the user to describe the lab or to check it in GNS3 when it matters."
}

// reason tells in plain words (no URL, token or error chain) why err kept
// the topology from being fetched.
func reason(ctx context.Context, err error) string {
	var se *gns3.StatusError
	switch {
	case errors.Is(err, errFetchTimeout):
		return "the GNS3 controller did not answer in time"
	case ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return "the request was cancelled before the GNS3 controller answered"
	case errors.Is(err, gns3.ErrInvalidID):
		return "the project id is not a valid GNS3 project id"
	case errors.Is(err, gns3.ErrNotFound):
		return "the GNS3 controller does not know this project (it may have been deleted)"
	case errors.Is(err, gns3.ErrForbidden):
		return "the GNS3 controller does not allow this user to read the project"
	case errors.Is(err, gns3.ErrUnauthorized):
		return "the GNS3 controller did not accept the user's credentials"
	case errors.Is(err, gns3.ErrUnavailable):
		return "the GNS3 controller could not be reached"
	case errors.As(err, &se):
		return "the GNS3 controller answered with an error (HTTP " + strconv.Itoa(se.StatusCode) + " " + http.StatusText(se.StatusCode) + ")"
	}
	return "the GNS3 controller gave an unexpected answer"
}

// trimText shortens s to at most n runes, marking the cut with "...".
func trimText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return strings.TrimSpace(s[:pos]) + "..."
		}
		i++
	}
	return s
}

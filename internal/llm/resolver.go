package llm

import "context"

// staticResolver resolves every user to one client (the server default).
type staticResolver struct {
	client Client
}

// NewStaticResolver returns a Resolver that gives c to every user; with a
// nil c it answers ErrNotConfigured.
func NewStaticResolver(c Client) Resolver {
	return staticResolver{client: c}
}

// Resolve returns the client, or ErrNotConfigured when there is none.
func (r staticResolver) Resolve(ctx context.Context, _ string) (Resolved, error) {
	if r.client == nil {
		return Resolved{}, ErrNotConfigured
	}
	if err := ctx.Err(); err != nil {
		return Resolved{}, err
	}
	return Resolved{Client: r.client}, nil
}

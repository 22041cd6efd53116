package llm

import (
	"context"

	"agentchat/internal/pricing"
)

// staticResolver resolves every user to one client (the server default).
type staticResolver struct {
	client Client
	prices pricing.Prices
}

// NewStaticResolver returns a Resolver that gives c, with unknown prices,
// to every user; with a nil c it answers ErrNotConfigured.
func NewStaticResolver(c Client) Resolver {
	return staticResolver{client: c}
}

// NewPricedResolver is NewStaticResolver with the prices of c's model
// (OPENAI_PRICES).
func NewPricedResolver(c Client, p pricing.Prices) Resolver {
	return staticResolver{client: c, prices: p}
}

// Resolve returns the client, or ErrNotConfigured when there is none.
func (r staticResolver) Resolve(ctx context.Context, _ string) (Resolved, error) {
	if r.client == nil {
		return Resolved{}, ErrNotConfigured
	}
	if err := ctx.Err(); err != nil {
		return Resolved{}, err
	}
	return Resolved{Client: r.client, Prices: r.prices}, nil
}

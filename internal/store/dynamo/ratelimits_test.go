package dynamo

import (
	"testing"

	"agentchat/internal/store"
	"agentchat/internal/store/storetest"
)

func TestRateLimits(t *testing.T) {
	storetest.RunRateLimits(t, func(t *testing.T) store.Store { return newTestStore(t) })
}

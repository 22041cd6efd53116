package sqlite

import (
	"testing"

	"agentchat/internal/store"
	"agentchat/internal/store/storetest"
)

func TestRateLimits(t *testing.T) {
	storetest.RunRateLimits(t, func(t *testing.T) store.Store {
		s, _ := openTemp(t)
		return s
	})
}

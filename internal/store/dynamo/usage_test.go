package dynamo

import (
	"testing"

	"agentchat/internal/store"
	"agentchat/internal/store/storetest"
)

func TestUsageLedger(t *testing.T) {
	storetest.RunUsage(t, func(t *testing.T) store.Store { return newTestStore(t) })
}

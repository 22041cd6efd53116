package llmconfigs

import (
	"agentchat/internal/llmconfig"
	"agentchat/internal/store"
)

// dropMovedKey clears next's stored key when the update moves it (see
// llmconfig.KeyMoves) and the request does not bring a new one; it reports whether
// it did. The decision is made on cur, the version the update is
// conditioned on, so it is atomic with the write: a concurrent change of
// the base URL makes the write fail and the update is decided again.
func dropMovedKey(cur, next *store.LLMConfig, p *patch) bool {
	if p.key != keyKeep || cur.APIKeyCipher == "" || !llmconfig.KeyMoves(cur.Config, next.Config) {
		return false
	}
	next.APIKeyCipher, next.APIKeyHint = "", ""
	return true
}

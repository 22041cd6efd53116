package llmconfig

import "agentchat/internal/store"

// KeyAAD is the associated data the API key of configuration id of owner
// is sealed with (secrets.Box.Seal): "llmcfg:U#<user>:<id>" or
// "llmcfg:G#<group>:<id>". A sealed key only opens for its own record.
func KeyAAD(owner store.Owner, id string) string {
	return "llmcfg:" + ownerKey(owner) + ":" + id
}

func ownerKey(o store.Owner) string {
	if o.GroupID != "" {
		return "G#" + o.GroupID
	}
	return "U#" + o.UserID
}

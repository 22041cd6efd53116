package localserver

import (
	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/labchanges"
	"agentchat/internal/httpapi/skillsreload"
	"agentchat/internal/wire"
)

// labChangesRoutes are the undo and audit routes of the project chat.
func labChangesRoutes(base *wire.Base) []httpapi.Route {
	o := labchanges.Options{Store: base.Store, Snapshots: base.Config.Snapshots, AdminToken: base.Config.AdminToken,
		Auth: base.Auth, Projects: base.Projects, Logger: base.Logger}
	if base.GNS3 != nil {
		o.GNS3 = base.GNS3
		o.Superadmins = skillsreload.GNS3Superadmins{Client: base.GNS3}
	}
	return labchanges.New(o).Routes()
}

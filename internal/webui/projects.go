package webui

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"agentchat/internal/auth"
	"agentchat/internal/gns3"
	"agentchat/internal/httpapi"
)

// PathProjects lists the user's GNS3 projects for the console's project
// field. It lives under /v3/copilot/, where no GNS3 route is: GNS3's own
// list is GET /v3/projects.
const PathProjects = "/v3/copilot/projects"

// msgCannotList starts every message of a failed listing.
const msgCannotList = "Cannot list the GNS3 projects: "

// Project is one project of PathProjects: GNS3's id, name and status
// ("opened" or "closed").
type Project struct {
	ProjectID string `json:"project_id"`
	Name      string `json:"name"`
	Status    string `json:"status"`
}

// ProjectsRoute returns GET PathProjects, authenticated like the chat
// routes. It lists, with the caller's own GNS3 credential, the projects
// the user may see: opened first, then by name. client nil (no GNS3_URL)
// answers 204 No Content: there is nothing to list and any project id
// works (a 404 would be logged as an error by every browser on every page
// load); GNS3's 401 and 403 are passed on with a readable message,
// any other failure is a 502. Messages never hold the token or the
// controller's address.
func ProjectsRoute(client *gns3.Client) httpapi.Route {
	return httpapi.Route{Method: http.MethodGet, Path: PathProjects, Handler: projectsHandler(client)}
}

func projectsHandler(client *gns3.Client) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if client == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		id, _ := auth.FromContext(ctx)
		ps, err := client.ListProjects(ctx, id.Token)
		if err != nil {
			status, msg := listingError(ctx, err)
			httpapi.Logger(ctx).WarnContext(ctx, "gns3 project listing failed", "status", status, "cause", err.Error())
			httpapi.Error(w, r, status, msg)
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, SortProjects(ps))
	}
}

// SortProjects reduces GNS3 projects to their id, name and status, opened
// first, then by name (case-insensitive), then by id.
func SortProjects(ps []gns3.Project) []Project {
	out := make([]Project, 0, len(ps))
	for _, p := range ps {
		out = append(out, Project{ProjectID: p.ProjectID, Name: p.Name, Status: p.Status})
	}
	slices.SortFunc(out, func(a, b Project) int {
		ao, bo := a.Status == gns3.StatusOpened, b.Status == gns3.StatusOpened
		if ao != bo {
			if ao {
				return -1
			}
			return 1
		}
		return cmp.Or(
			strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)),
			strings.Compare(a.Name, b.Name),
			strings.Compare(a.ProjectID, b.ProjectID),
		)
	})
	return out
}

// listingError maps a failed GNS3 listing to the status and message to
// answer: 401 and 403 as GNS3 said, 502 for anything else.
func listingError(ctx context.Context, err error) (int, string) {
	desc := gns3.Describe(err) // secret-free, URLs redacted
	switch {
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return http.StatusBadGateway, msgCannotList + "the request was cancelled"
	case errors.Is(err, gns3.ErrForbidden):
		return http.StatusForbidden, msgCannotList + strings.TrimPrefix(desc, "403: ")
	case errors.Is(err, gns3.ErrUnauthorized):
		return http.StatusUnauthorized, msgCannotList + strings.TrimPrefix(desc, "401: ")
	}
	return http.StatusBadGateway, msgCannotList + desc
}

package httpapi

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"agentchat/internal/auth"
)

// AdminOrCaller authenticates a request to an administrative route that
// does its own authentication (a Public route): admin is true when it
// carries `Authorization: Bearer <adminToken>` (compared in constant time;
// an empty adminToken matches nothing); otherwise the caller is
// authenticated through a (nil: nobody but the admin), and a missing or
// refused credential is a 401 StatusError.
func AdminOrCaller(r *http.Request, adminToken string, a Authenticator) (admin bool, id auth.Identity, err error) {
	header := r.Header.Get("Authorization")
	if adminToken != "" {
		scheme, tok, ok := strings.Cut(strings.TrimSpace(header), " ")
		if ok && strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(adminToken)) == 1 {
			return true, auth.Identity{}, nil
		}
	}
	if a == nil {
		return false, auth.Identity{}, Errorf(http.StatusUnauthorized, "Not authenticated")
	}
	id, err = a.Authenticate(r.Context(), header)
	if err != nil {
		if errors.Is(err, auth.ErrNoCredentials) {
			return false, auth.Identity{}, Errorf(http.StatusUnauthorized, "Not authenticated")
		}
		return false, auth.Identity{}, Errorf(http.StatusUnauthorized, "Could not validate credentials")
	}
	return false, id, nil
}

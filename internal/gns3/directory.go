package gns3

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"agentchat/internal/auth"
)

// ProjectDirectory decides whether a project chat may run for a user.
type ProjectDirectory interface {
	// CheckProject returns nil when the project exists, the user may see
	// it, and it is opened; otherwise a *ProjectError to answer with, or
	// the context's error when ctx is done.
	CheckProject(ctx context.Context, id auth.Identity, projectID string) error
	// ProjectGone reports whether the project no longer exists, which
	// allows removing all of its chat sessions. Errors are *ProjectError
	// or the context's error.
	ProjectGone(ctx context.Context, id auth.Identity, projectID string) (bool, error)
}

// ProjectError is a refusal of the directory, ready for the HTTP layer:
// answer Status with body {"message": Message}. Message never holds a
// secret; Err, the cause, is for logs.
type ProjectError struct {
	Status  int
	Message string
	Err     error
}

// Error returns the public message.
func (e *ProjectError) Error() string { return e.Message }

// Refusal returns the HTTP status and the public message of the refusal
// (it is an httpapi.Refusal).
func (e *ProjectError) Refusal() (int, string) { return e.Status, e.Message }

// Unwrap returns the cause.
func (e *ProjectError) Unwrap() error { return e.Err }

// Public messages of the directory.
const (
	MsgUnavailable        = "GNS3 controller unavailable"
	MsgInvalidCredentials = "Could not validate credentials"
)

// NotFoundError is the 404 for projectID: "Project '<id>' not found".
func NotFoundError(projectID string, cause error) *ProjectError {
	return &ProjectError{Status: http.StatusNotFound, Message: fmt.Sprintf("Project '%s' not found", projectID), Err: cause}
}

// NotOpenedError is the 403 for a project whose status is not "opened".
func NotOpenedError(status string) *ProjectError {
	return &ProjectError{
		Status:  http.StatusForbidden,
		Message: "Project must be opened to use chat. Current status: " + status,
	}
}

// OpenDirectory is the directory without a GNS3 controller (no GNS3_URL):
// every project counts as opened, and removing a project's chat is always
// allowed.
type OpenDirectory struct{}

// CheckProject always succeeds.
func (OpenDirectory) CheckProject(context.Context, auth.Identity, string) error { return nil }

// ProjectGone always reports true: without a controller there is nothing
// to contradict a removal.
func (OpenDirectory) ProjectGone(context.Context, auth.Identity, string) (bool, error) {
	return true, nil
}

// DefaultCacheTTL is a sensible TTL for NewGNS3Directory.
const DefaultCacheTTL = 5 * time.Second

// maxCacheEntries bounds the cache; past it, expired entries are swept and,
// if still full, the cache is emptied.
const maxCacheEntries = 10000

// GNS3Directory asks the GNS3 controller, with the user's token, about the
// project (GET /v3/projects/{id}). Successful checks are cached for a
// short TTL per (user, token, project); refusals and failures never are,
// and one user's result never answers for another.
type GNS3Directory struct {
	client *Client
	ttl    time.Duration
	now    func() time.Time

	mu    sync.Mutex
	cache map[cacheKey]time.Time // expiry of a successful check
}

type cacheKey struct {
	user, project string
	token         [sha256.Size]byte // the credential also keys the entry, hashed
}

// DirectoryOption configures a GNS3Directory.
type DirectoryOption func(*GNS3Directory)

// WithClock sets the clock used for cache expiry (tests).
func WithClock(now func() time.Time) DirectoryOption {
	return func(d *GNS3Directory) { d.now = now }
}

// NewGNS3Directory returns a directory backed by client; ttl <= 0 disables
// the cache.
func NewGNS3Directory(client *Client, ttl time.Duration, opts ...DirectoryOption) *GNS3Directory {
	d := &GNS3Directory{client: client, ttl: ttl, now: time.Now, cache: map[cacheKey]time.Time{}}
	for _, o := range opts {
		o(d)
	}
	return d
}

func keyOf(id auth.Identity, projectID string) cacheKey {
	return cacheKey{user: id.UserID, project: projectID, token: sha256.Sum256([]byte(id.Token))}
}

// CheckProject implements ProjectDirectory.
func (d *GNS3Directory) CheckProject(ctx context.Context, id auth.Identity, projectID string) error {
	if !ValidID(projectID) {
		return NotFoundError(projectID, ErrInvalidID)
	}
	k := keyOf(id, projectID)
	if d.cached(k) {
		return nil
	}
	p, err := d.client.GetProject(ctx, id.Token, projectID)
	if err != nil {
		return d.mapErr(ctx, projectID, err)
	}
	if p.Status != StatusOpened {
		return NotOpenedError(p.Status)
	}
	d.remember(k)
	return nil
}

// ProjectGone implements ProjectDirectory: true when GNS3 answers 404 (or
// the id cannot be a GNS3 project id). It never uses the cache, and a
// project reported gone is dropped from the cache for every user.
func (d *GNS3Directory) ProjectGone(ctx context.Context, id auth.Identity, projectID string) (bool, error) {
	if !ValidID(projectID) {
		return true, nil
	}
	gone, err := d.client.ProjectGone(ctx, id.Token, projectID)
	if err != nil {
		return false, d.mapErr(ctx, projectID, err)
	}
	if gone {
		d.forget(projectID)
	}
	return gone, nil
}

// mapErr turns a client error into a *ProjectError (or the context error).
func (d *GNS3Directory) mapErr(ctx context.Context, projectID string, err error) error {
	var se *StatusError
	switch {
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return err
	case errors.Is(err, ErrProjectNotFound):
		return NotFoundError(projectID, err)
	case errors.Is(err, ErrForbidden):
		return &ProjectError{Status: http.StatusForbidden, Message: fmt.Sprintf("Access to project '%s' denied", projectID), Err: err}
	case errors.Is(err, ErrUnauthorized):
		return &ProjectError{Status: http.StatusUnauthorized, Message: MsgInvalidCredentials, Err: err}
	case errors.As(err, &se):
		return &ProjectError{Status: http.StatusBadGateway, Message: fmt.Sprintf("GNS3 controller error (HTTP %d)", se.StatusCode), Err: err}
	default:
		return &ProjectError{Status: http.StatusBadGateway, Message: MsgUnavailable, Err: err}
	}
}

func (d *GNS3Directory) cached(k cacheKey) bool {
	if d.ttl <= 0 {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	exp, ok := d.cache[k]
	if !ok {
		return false
	}
	if !d.now().Before(exp) {
		delete(d.cache, k)
		return false
	}
	return true
}

func (d *GNS3Directory) remember(k cacheKey) {
	if d.ttl <= 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	if len(d.cache) >= maxCacheEntries {
		for key, exp := range d.cache {
			if !now.Before(exp) {
				delete(d.cache, key)
			}
		}
		if len(d.cache) >= maxCacheEntries {
			clear(d.cache)
		}
	}
	d.cache[k] = now.Add(d.ttl)
}

func (d *GNS3Directory) forget(projectID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for key := range d.cache {
		if key.project == projectID {
			delete(d.cache, key)
		}
	}
}

package auth

// CredentialError is an authentication failure. Its text is the public
// message of the 401 response body; errors returned by Authenticate wrap
// one of the two values below with a reason for logs (never a secret), so
// test with errors.Is and answer with the sentinel's own Error().
type CredentialError string

// Error returns the public message.
func (e CredentialError) Error() string { return string(e) }

const (
	// ErrNoCredentials: the request carries no Authorization header.
	ErrNoCredentials CredentialError = "Not authenticated"
	// ErrInvalidCredentials: the credential is malformed, badly signed,
	// expired, revoked or unknown.
	ErrInvalidCredentials CredentialError = "Could not validate credentials"
	// ErrNotAccessToken: a JWT whose type claim is present and is not
	// "access" (a refresh token, say). Errors carrying it also match
	// ErrInvalidCredentials; errors.As finds this one first.
	ErrNotAccessToken CredentialError = `Could not validate credentials: only access tokens are accepted (the token's "type" claim is not "access")`
)

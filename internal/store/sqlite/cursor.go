package sqlite

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"

	"agentchat/internal/store"
)

// cursor is the sort key of the last session of a page. It travels as
// opaque base64url JSON.
type cursor struct {
	Pinned    bool   `json:"p"`
	UpdatedAt string `json:"u"` // stored fixed-width text
	ThreadID  string `json:"t"`
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c) // a struct of strings and a bool always marshals
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor parses a cursor; any malformed value is store.ErrInvalidCursor.
func decodeCursor(s string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return c, fmt.Errorf("%w: not base64url", store.ErrInvalidCursor)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("%w: malformed", store.ErrInvalidCursor)
	}
	if _, err := dec.Token(); err != io.EOF {
		return c, fmt.Errorf("%w: trailing data", store.ErrInvalidCursor)
	}
	if c.ThreadID == "" {
		return c, fmt.Errorf("%w: no thread id", store.ErrInvalidCursor)
	}
	if t, err := decTime(c.UpdatedAt); err != nil || t.IsZero() {
		return c, fmt.Errorf("%w: bad timestamp", store.ErrInvalidCursor)
	}
	return c, nil
}

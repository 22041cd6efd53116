package toolkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Encode renders a tool answer as one line of JSON, without HTML
// escaping.
func Encode(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("encode tool answer: %w", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

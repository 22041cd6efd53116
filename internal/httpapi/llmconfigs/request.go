package llmconfigs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"agentchat/internal/agents/catalog"
	"agentchat/internal/approval"
	"agentchat/internal/httpapi"
	"agentchat/internal/llmconfig"
	"agentchat/internal/pricing"
)

// Field names of the API.
const (
	fieldName            = "name"
	fieldModelType       = "model_type"
	fieldConfig          = "config"
	fieldIsDefault       = "is_default"
	fieldExpectedVersion = "expected_version"

	fieldProvider        = "provider"
	fieldBaseURL         = "base_url"
	fieldModel           = "model"
	fieldTemperature     = "temperature"
	fieldContextLimit    = "context_limit"
	fieldMaxTokens       = "max_tokens"
	fieldContextStrategy = "context_strategy"
	fieldCopilotMode     = "copilot_mode"
	fieldAPIKey          = "api_key"
)

// Limits and defaults of a configuration.
const (
	// MaxNameLength bounds name (characters).
	MaxNameLength = 100
	// MaxProviderLength bounds config.provider (characters).
	MaxProviderLength = 100
	// MaxModelLength bounds config.model (characters).
	MaxModelLength = 200
	// MaxBaseURLLength bounds config.base_url (bytes).
	MaxBaseURLLength = 2048
	// MaxAPIKeyLength bounds api_key (bytes).
	MaxAPIKeyLength = 4096
	// MaxContextLimit bounds config.context_limit (thousands of tokens).
	MaxContextLimit = 1_000_000
	// MaxMaxTokens bounds config.max_tokens.
	MaxMaxTokens = 10_000_000
	// MaxExtraFields bounds the extra keys of config.
	MaxExtraFields = 64
	// MaxExtraKeyLength bounds the name of an extra key (characters).
	MaxExtraKeyLength = 64
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes = 64 << 10

	// DefaultModelType is the model_type of a configuration created
	// without one.
	DefaultModelType = "text"
	// DefaultTemperature is the temperature of a configuration created
	// without one.
	DefaultTemperature = 0.7
	// DefaultContextStrategy is the context_strategy of a configuration
	// created without one.
	DefaultContextStrategy = "balanced"
)

// ModelTypes returns the accepted model_type values.
func ModelTypes() []string {
	return []string{"text", "vision", "stt", "tts", "multimodal", "embedding", "reranking", "other"}
}

// ContextStrategies returns the accepted config.context_strategy values.
func ContextStrategies() []string { return []string{"conservative", "balanced", "aggressive"} }

// configFields are the keys of config the API knows; the GNS3 form of a
// request gives them at the top level.
var configFields = []string{fieldProvider, fieldBaseURL, fieldModel, fieldTemperature, fieldContextLimit,
	fieldMaxTokens, fieldContextStrategy, fieldCopilotMode, fieldAPIKey}

// readOnlyFields are fields of the answers that a request cannot set.
var readOnlyFields = []string{"config_id", "user_id", "group_id", "version", "created_at", "updated_at",
	"source", "group_name", "api_key_set", "api_key_hint"}

// readOnlyConfigFields are keys a request cannot put in config.
var readOnlyConfigFields = []string{"api_key_set", "api_key_hint"}

// topFields are the top-level fields of the nested form, in the order
// problems are reported.
var topFields = []string{fieldName, fieldModelType, fieldConfig, fieldCopilotMode, fieldIsDefault, fieldExpectedVersion}

// keyOp is what a request does with the stored API key.
type keyOp int

const (
	keyKeep   keyOp = iota // omitted or null
	keySet                 // a new key
	keyRemove              // ""
)

// patch is a validated create or update request.
type patch struct {
	name, modelType *string
	// set are the config keys given (normalized); unset those given as
	// null (removed by an update).
	set   map[string]any
	unset []string
	key   keyOp
	// apiKey is the new key (key == keySet). Never log it.
	apiKey          string
	isDefault       *bool
	expectedVersion int64 // 0: not given
	// prefix is how config keys were named: "config." (nested form) or
	// "" (the GNS3 web UI's flat form).
	prefix string
}

func unprocessable(format string, args ...any) error {
	return httpapi.Errorf(http.StatusUnprocessableEntity, format, args...)
}

// decodeObject reads the body as one JSON object (an empty body is
// allowed when optional, and gives an empty object).
func decodeObject(w http.ResponseWriter, r *http.Request, optional bool) (map[string]json.RawMessage, error) {
	if optional && r.ContentLength == 0 {
		return map[string]json.RawMessage{}, nil
	}
	var raw map[string]json.RawMessage
	if err := httpapi.DecodeJSON(w, r, &raw, httpapi.DecodeOptions{MaxBytes: MaxBodyBytes}); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, unprocessable("Request body must be a JSON object")
	}
	return raw, nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// orderedKeys returns the keys of m: those of first (in that order), then
// the others sorted.
func orderedKeys(m map[string]json.RawMessage, first []string) []string {
	var out, rest []string
	for _, k := range first {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	for k := range m {
		if !slices.Contains(first, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// parsePatch validates a create or update body. Two forms are accepted:
// the nested one, {name, model_type, config: {...}, is_default,
// expected_version}, where any other top-level field is refused but for
// copilot_mode (a shortcut for config.copilot_mode: the GNS3 web UI's
// mode toggle sends it alone), and the GNS3 web UI's flat one, without
// config, where every top-level field but name, model_type, is_default
// and expected_version is a key of config (extra keys included).
func parsePatch(raw map[string]json.RawMessage) (*patch, error) {
	p := &patch{set: map[string]any{}}
	cfgRaw, nested := raw[fieldConfig]
	var cfg map[string]json.RawMessage
	if nested {
		p.prefix = "config."
		if !isNull(cfgRaw) {
			if err := json.Unmarshal(cfgRaw, &cfg); err != nil || cfg == nil {
				return nil, unprocessable("Field 'config' must be an object")
			}
		}
	}
	for _, k := range orderedKeys(raw, topFields) {
		v := raw[k]
		switch {
		case k == fieldName:
			if isNull(v) {
				continue
			}
			name, err := parseName(v)
			if err != nil {
				return nil, err
			}
			p.name = &name
		case k == fieldModelType:
			if isNull(v) {
				continue
			}
			mt, err := parseEnum(fieldModelType, v, ModelTypes())
			if err != nil {
				return nil, err
			}
			p.modelType = &mt
		case k == fieldIsDefault:
			if isNull(v) {
				continue
			}
			var b bool
			if err := json.Unmarshal(v, &b); err != nil {
				return nil, unprocessable("Field 'is_default' must be a boolean")
			}
			p.isDefault = &b
		case k == fieldExpectedVersion:
			if isNull(v) {
				continue
			}
			n, ok := integer(v)
			if !ok || n < 1 {
				return nil, unprocessable("Field 'expected_version' must be a positive integer (the version you read)")
			}
			p.expectedVersion = n
		case k == fieldConfig:
			for _, ck := range orderedKeys(cfg, configFields) {
				if err := p.configKey(ck, cfg[ck], p.prefix); err != nil {
					return nil, err
				}
			}
		case k == fieldCopilotMode:
			if _, dup := cfg[fieldCopilotMode]; dup {
				return nil, unprocessable("Give 'copilot_mode' either at the top level or inside 'config', not both")
			}
			if err := p.configKey(k, v, ""); err != nil {
				return nil, err
			}
		case slices.Contains(readOnlyFields, k):
			return nil, unprocessable("Field '%s' is read-only", k)
		case nested && slices.Contains(configFields, k):
			return nil, unprocessable("Unknown field '%s': configuration fields go inside 'config'", k)
		case nested:
			return nil, unprocessable("Unknown field '%s'", truncate(k, 64))
		default: // the flat form: a key of config
			if err := p.configKey(k, v, ""); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// configKey validates one key of config given with the request.
func (p *patch) configKey(k string, v json.RawMessage, prefix string) error {
	name := prefix + k
	if slices.Contains(readOnlyConfigFields, k) {
		return unprocessable("Field '%s' is read-only", name)
	}
	if prefix != "" && slices.Contains(topFields, k) && k != fieldCopilotMode {
		return unprocessable("Field '%s' belongs at the top level, not inside 'config'", name)
	}
	if k == fieldAPIKey {
		return p.parseAPIKey(name, v)
	}
	if isNull(v) || (k == fieldMaxTokens && bytes.Equal(bytes.TrimSpace(v), []byte(`"null"`))) {
		delete(p.set, k)
		if !slices.Contains(p.unset, k) {
			p.unset = append(p.unset, k)
		}
		return nil
	}
	val, err := configValue(k, name, v)
	if err != nil {
		return err
	}
	p.unset = slices.DeleteFunc(p.unset, func(u string) bool { return u == k })
	p.set[k] = val
	return nil
}

// configValue validates and normalizes the value of config key k.
func configValue(k, name string, v json.RawMessage) (any, error) {
	switch k {
	case fieldProvider:
		return parseText(name, v, MaxProviderLength)
	case fieldModel:
		return parseText(name, v, MaxModelLength)
	case fieldBaseURL:
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, unprocessable("Field '%s' must be a string", name)
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return "", nil // the provider's default
		}
		if err := checkBaseURL(s); err != nil {
			return nil, unprocessable("Field '%s' %s", name, err.Error())
		}
		return s, nil
	case fieldTemperature:
		f, ok := number(v)
		if !ok || f < 0 || f > 2 {
			return nil, unprocessable("Field '%s' must be a number between 0 and 2", name)
		}
		return f, nil
	case fieldContextLimit:
		n, ok := integer(v)
		if !ok || n < 1 {
			return nil, unprocessable("Field '%s' must be a positive integer, in thousands of tokens (128 means 128K)", name)
		}
		if n > MaxContextLimit {
			return nil, unprocessable("Field '%s' must be at most %d (thousands of tokens)", name, MaxContextLimit)
		}
		return n, nil
	case fieldMaxTokens:
		n, ok := integer(v)
		if !ok || n < 1 || n > MaxMaxTokens {
			return nil, unprocessable("Field '%s' must be a positive integer (at most %d)", name, MaxMaxTokens)
		}
		return n, nil
	case fieldContextStrategy:
		return parseEnum(name, v, ContextStrategies())
	case fieldCopilotMode:
		return parseEnum(name, v, catalog.CopilotModes())
	case approval.ConfigKey:
		return parseEnum(name, v, []string{string(approval.Off), string(approval.Changes), string(approval.All)})
	}
	// An extra key, kept as given.
	switch n := utf8.RuneCountInString(k); {
	case strings.TrimSpace(k) == "":
		return nil, unprocessable("Configuration keys must not be blank")
	case n > MaxExtraKeyLength:
		return nil, unprocessable("Configuration key '%s' is longer than %d characters", truncate(k, 64), MaxExtraKeyLength)
	case strings.ContainsFunc(k, isControl):
		return nil, unprocessable("Configuration keys must not contain control characters")
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, unprocessable("Field '%s' is not valid JSON", truncate(name, 80))
	}
	x, ok := plainNumbers(x)
	if !ok {
		return nil, unprocessable("Field '%s' holds a number too large to store", truncate(name, 80))
	}
	return x, nil
}

// parseAPIKey reads api_key: null keeps the stored key (answers carry
// "api_key": null, so a configuration read and sent back keeps its key),
// "" removes it, any other string replaces it. Messages never show it.
func (p *patch) parseAPIKey(name string, v json.RawMessage) error {
	if isNull(v) {
		p.key, p.apiKey = keyKeep, ""
		return nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return unprocessable("Field '%s' must be a string", name)
	}
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		p.key, p.apiKey = keyRemove, ""
	case len(s) > MaxAPIKeyLength:
		return unprocessable("Field '%s' must be at most %d bytes long", name, MaxAPIKeyLength)
	case strings.ContainsFunc(s, isControl) || !utf8.ValidString(s):
		return unprocessable("Field '%s' must not contain control characters", name)
	default:
		p.key, p.apiKey = keySet, s
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func parseName(v json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", unprocessable("Field 'name' must be a string")
	}
	s = strings.TrimSpace(s)
	switch n := utf8.RuneCountInString(s); {
	case n == 0:
		return "", unprocessable("Field 'name' must not be blank")
	case n > MaxNameLength:
		return "", unprocessable("Field 'name' must be at most %d characters (got %d)", MaxNameLength, n)
	case strings.ContainsFunc(s, isControl):
		return "", unprocessable("Field 'name' must not contain control characters")
	}
	return s, nil
}

// parseText reads a required, non-blank, bounded string.
func parseText(name string, v json.RawMessage, max int) (string, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", unprocessable("Field '%s' must be a string", name)
	}
	s = strings.TrimSpace(s)
	switch n := utf8.RuneCountInString(s); {
	case n == 0:
		return "", unprocessable("Field '%s' must not be blank", name)
	case n > max:
		return "", unprocessable("Field '%s' must be at most %d characters (got %d)", name, max, n)
	case strings.ContainsFunc(s, isControl):
		return "", unprocessable("Field '%s' must not contain control characters", name)
	}
	return s, nil
}

// parseEnum reads one of values (case and surrounding spaces ignored).
func parseEnum(name string, v json.RawMessage, values []string) (string, error) {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		s = strings.ToLower(strings.TrimSpace(s))
		if slices.Contains(values, s) {
			return s, nil
		}
	}
	return "", unprocessable("Field '%s' must be one of: %s", name, strings.Join(values, ", "))
}

// checkBaseURL accepts an http(s) URL with a host and no query, fragment
// or credentials. The error never shows the URL.
func checkBaseURL(s string) error {
	if len(s) > MaxBaseURLLength {
		return fmt.Errorf("must be at most %d bytes long", MaxBaseURLLength)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.Opaque != "" {
		return fmt.Errorf("must be an http:// or https:// URL with a host")
	}
	if u.User != nil {
		return fmt.Errorf("must not contain credentials (give the key as api_key)")
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return fmt.Errorf("must be a base URL without query or fragment")
	}
	return nil
}

// number reads a JSON number.
func number(v json.RawMessage) (float64, bool) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if dec.Decode(&x) != nil {
		return 0, false
	}
	n, ok := x.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// integer reads a JSON number with an integral value (128 or 128.0).
func integer(v json.RawMessage) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if dec.Decode(&x) != nil {
		return 0, false
	}
	n, ok := x.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := n.Int64(); err == nil {
		return i, true
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// plainNumbers turns the json.Numbers of a decoded value into int64 (when
// integral and in range) or float64, so that every store encodes them as
// numbers; ok is false when one is beyond float64 (1e400), which no JSON
// encoder could write back.
func plainNumbers(x any) (_ any, ok bool) {
	switch v := x.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i, true
		}
		f, err := v.Float64()
		if err != nil || math.IsInf(f, 0) {
			return nil, false
		}
		return f, true
	case map[string]any:
		for k, e := range v {
			if v[k], ok = plainNumbers(e); !ok {
				return nil, false
			}
		}
	case []any:
		for i, e := range v {
			if v[i], ok = plainNumbers(e); !ok {
				return nil, false
			}
		}
	}
	return x, true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// isExtra reports whether k is an extra key of config.
func isExtra(k string) bool { return !slices.Contains(configFields, k) }

// finalize completes and checks a configuration's config (after an
// update's merge): defaults for temperature, context_strategy and a known
// provider's base_url; provider, model and context_limit required; at
// most MaxExtraFields extra keys.
func finalize(cfg map[string]any, prefix string) error {
	delete(cfg, fieldAPIKey)
	for _, k := range []string{fieldProvider, fieldModel, fieldContextLimit} {
		if _, ok := cfg[k]; !ok {
			hint := ""
			if k == fieldContextLimit {
				hint = " (the model's context window in thousands of tokens, e.g. 128 for 128K)"
			}
			return unprocessable("Field '%s%s' is required%s", prefix, k, hint)
		}
	}
	if _, ok := cfg[fieldTemperature]; !ok {
		cfg[fieldTemperature] = DefaultTemperature
	}
	if _, ok := cfg[fieldContextStrategy]; !ok {
		cfg[fieldContextStrategy] = DefaultContextStrategy
	}
	provider, _ := cfg[fieldProvider].(string)
	if u, _ := cfg[fieldBaseURL].(string); u == "" {
		def, ok := llmconfig.DefaultBaseURL(provider)
		if !ok {
			return unprocessable("Field '%sbase_url' is required for provider '%s' (providers with a default base URL: %s)",
				prefix, truncate(provider, 64), strings.Join(llmconfig.KnownProviders(), ", "))
		}
		cfg[fieldBaseURL] = def
	}
	extras := 0
	for k := range cfg {
		if isExtra(k) {
			extras++
		}
	}
	if extras > MaxExtraFields {
		return unprocessable("A configuration may have at most %d extra keys (got %d)", MaxExtraFields, extras)
	}
	if _, err := pricing.FromConfig(cfg); err != nil {
		if fe, ok := errors.AsType[*pricing.FieldError](err); ok {
			return unprocessable("Field '%s%s' must be a price in USD per million tokens: %s", prefix, fe.Key, fe.Reason)
		}
		return unprocessable("%s", err)
	}
	return nil
}

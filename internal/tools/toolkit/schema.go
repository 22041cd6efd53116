package toolkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// UUIDPattern is the form of every GNS3 v3 id.
const UUIDPattern = `^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`

// maxValidationText bounds the text of one argument problem.
const maxValidationText = 300

// Args is a tool's argument schema: what the model is shown, and what the
// model's arguments are validated against.
type Args struct {
	raw    json.RawMessage
	schema *jsonschema.Schema
	// resolved is the schema resolved for validation, made again on the
	// tool's first call: a process holds tens of tools (their patterns
	// compiled into regexps by the resolution), most of which it never
	// calls (bench-e2e, /v1 stream: the registry's tools were 0.9 MiB of
	// the idle server's 3.2 MiB of live heap).
	resolved func() (*jsonschema.Resolved, error)
}

// JSON returns the schema as the model is shown it.
func (a *Args) JSON() json.RawMessage { return a.raw }

// inferSchema returns the schema of the argument struct A, with the
// optional (pointer, slice) types reduced to their plain JSON type and
// every object given its properties, then changed by adjust (bounds,
// enums, lengths, descriptions) when not nil.
func inferSchema[A any](adjust func(*jsonschema.Schema)) (*jsonschema.Schema, error) {
	s, err := jsonschema.For[A](nil)
	if err != nil {
		return nil, err
	}
	normalize(s)
	if adjust != nil {
		adjust(s)
	}
	return s, nil
}

// normalize walks s: a type ["null", T] becomes T (a null argument is
// taken as absent, see Parse), and an object without properties gets an
// empty properties map, so that every object lists its properties.
func normalize(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	if s.Type == "object" && s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	normalize(s.Items)
	for _, p := range s.Properties {
		normalize(p)
	}
}

// withProjectID returns a copy of s with a required project_id property
// first: the /v1 form of a project tool.
func withProjectID(s *jsonschema.Schema) *jsonschema.Schema {
	c := s.CloneSchemas()
	if c.Properties == nil {
		c.Properties = map[string]*jsonschema.Schema{}
	}
	c.Properties["project_id"] = &jsonschema.Schema{
		Type:        "string",
		Pattern:     UUIDPattern,
		Description: "Id (UUID) of the GNS3 project to act on, from list_gns3_projects.",
	}
	order := c.PropertyOrder
	if len(order) == 0 {
		order = slices.Sorted(maps.Keys(s.Properties))
	}
	c.PropertyOrder = append([]string{"project_id"}, order...)
	c.Required = append([]string{"project_id"}, c.Required...)
	return c
}

// compile checks that s resolves for validation and renders it for the
// model (newArgs). The resolution is dropped, and made again on the first
// Parse.
func compile(s *jsonschema.Schema) (*Args, error) {
	if _, err := s.Resolve(nil); err != nil {
		return nil, fmt.Errorf("resolve schema: %w", err)
	}
	return newArgs(s)
}

// newArgs renders s, which resolves, for the model; it is resolved for
// validation on the first Parse.
func newArgs(s *jsonschema.Schema) (*Args, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("render schema: %w", err)
	}
	return &Args{raw: raw, schema: s, resolved: sync.OnceValues(func() (*jsonschema.Resolved, error) {
		return s.Resolve(nil)
	})}, nil
}

// Parse reads the model's arguments: a JSON object (empty or null means
// {}), valid against the schema once the null members it lists as
// properties are dropped as absent. A null member the schema does not
// list is left for the validation to refuse.
func (a *Args) Parse(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("invalid arguments: not valid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("invalid arguments: the arguments must be a JSON object")
	}
	dropNulls(m, a.schema)
	rs, err := a.resolved()
	if err != nil {
		return nil, fmt.Errorf("resolve schema: %w", err)
	}
	if err := rs.Validate(m); err != nil {
		return nil, fmt.Errorf("invalid arguments: %s", validationText(err))
	}
	return m, nil
}

// dropNulls removes, at every depth of v, the null members of objects
// that s lists as properties.
func dropNulls(v any, s *jsonschema.Schema) {
	if s == nil {
		return
	}
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			p, listed := s.Properties[k]
			switch {
			case !listed:
			case e == nil:
				delete(t, k)
			default:
				dropNulls(e, p)
			}
		}
	case []any:
		for _, e := range t {
			dropNulls(e, s.Items)
		}
	}
}

// bind decodes validated arguments into the argument struct dst.
func bind(m map[string]any, dst any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("invalid arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// validationText turns a jsonschema validation error, a chain of
// "validating <schema path>: ..." prefixes, into "<argument>: <problem>",
// for example `nodes[].template: minLength: "" contains 0 Unicode code
// points, fewer than 1`. An argument that fits none of the forms of an
// anyOf or oneOf (one line per form) gets the problem of each form:
// `seasons: fits none of its forms: minItems: array length 0 is less than
// 1; or type: [] has type "array", want "string"`.
func validationText(err error) string {
	lines := strings.Split(err.Error(), "\n")
	loc, msg := innermost(lines[0])
	where := argumentPath(loc)
	if len(lines) > 1 {
		forms := make([]string, len(lines)-1)
		for i, l := range lines[1:] {
			formLoc, formMsg := innermost(strings.TrimSpace(l))
			forms[i] = located(argumentPath(formLoc), where, formMsg)
		}
		msg = "fits none of its forms: " + strings.Join(forms, "; or ")
	}
	msg = strings.ReplaceAll(msg, "<invalid reflect.Value>", "null")
	if len(msg) > maxValidationText { // the message quotes the value given
		msg = strings.ToValidUTF8(msg[:maxValidationText], "") + "..."
	}
	return located(where, "", msg)
}

// innermost strips the "validating <schema path>: " prefixes of line and
// returns the last path and the problem.
func innermost(line string) (loc, msg string) {
	msg = line
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			return loc, msg
		}
		i := strings.Index(rest, ": ")
		if i < 0 {
			return loc, msg
		}
		loc, msg = rest[:i], rest[i+2:]
	}
}

// located is msg after the argument path where, unless where is empty or
// the same as outer, the path already said.
func located(where, outer, msg string) string {
	if where == "" || where == outer {
		return msg
	}
	return where + ": " + msg
}

// argumentPath turns a schema location (/properties/nodes/items/properties/x)
// into an argument path (nodes[].x); the root is "".
func argumentPath(loc string) string {
	var b strings.Builder
	parts := strings.Split(strings.TrimPrefix(loc, "/"), "/")
	for i := 0; i < len(parts); i++ {
		switch parts[i] {
		case "properties":
			if i+1 < len(parts) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(parts[i+1])
				i++
			}
		case "items":
			b.WriteString("[]")
		}
	}
	return b.String()
}

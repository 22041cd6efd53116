package toolkit

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestValidationText checks the texts of refused arguments, anyOf
// included.
func TestValidationText(t *testing.T) {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"name": {Type: "string", MinLength: jsonschema.Ptr(1)},
		"seasons": {AnyOf: []*jsonschema.Schema{
			{Type: "array", Items: &jsonschema.Schema{Type: "integer", Minimum: jsonschema.Ptr(0.0)}, MinItems: jsonschema.Ptr(1)},
			{Type: "string", Enum: []any{"all"}},
		}},
	}}
	args, err := compile(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ args, want string }{
		{`{"name":""}`, `invalid arguments: name: minLength: "" contains 0 Unicode code points, fewer than 1`},
		{`{"seasons":[]}`, `invalid arguments: seasons: fits none of its forms: minItems: array length 0 is less than 1; or type: [] has type "array", want "string"`},
		{`{"seasons":[-1]}`, `invalid arguments: seasons: fits none of its forms: seasons[]: minimum: -1/1 is less than 0.000000; or type: [-1] has type "array", want "string"`},
		{`{"seasons":"x"}`, `invalid arguments: seasons: fits none of its forms: type: x has type "string", want "array"; or enum: x does not equal any of: [all]`},
	} {
		_, err := args.Parse(json.RawMessage(tt.args))
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: err %v\nwant %s", tt.args, err, tt.want)
		}
	}
}

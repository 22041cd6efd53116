package toolkit

import "github.com/google/jsonschema-go/jsonschema"

// Array bounds the number of items of the array property name of s and
// returns that property.
func Array(s *jsonschema.Schema, name string, minItems, maxItems int) *jsonschema.Schema {
	p := s.Properties[name]
	p.MinItems, p.MaxItems = jsonschema.Ptr(minItems), jsonschema.Ptr(maxItems)
	return p
}

// NonEmpty requires the string properties names of s to be non-empty.
func NonEmpty(s *jsonschema.Schema, names ...string) {
	for _, n := range names {
		s.Properties[n].MinLength = jsonschema.Ptr(1)
	}
}

// Length bounds the length of the string schema s (a property or the
// items of an array).
func Length(s *jsonschema.Schema, minLength, maxLength int) {
	s.MinLength, s.MaxLength = jsonschema.Ptr(minLength), jsonschema.Ptr(maxLength)
}

package console

import (
	"maps"
	"slices"
	"testing"
)

// SupportedTypes names every entry of the table, sorted, without building
// it.
func TestSupportedTypesAreTheTable(t *testing.T) {
	t.Parallel()
	want := slices.Sorted(maps.Keys(builtinTypes()))
	if got := SupportedTypes(); !slices.Equal(got, want) {
		t.Fatalf("SupportedTypes() = %v, the table has %v", got, want)
	}
}

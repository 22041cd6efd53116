package catalog_test

import (
	"slices"
	"strings"
	"testing"

	"agentchat/internal/agents"
	"agentchat/internal/agents/catalog"
)

// TestCatalogMatchesTheAgents checks the catalogue against the agents
// package agents defines: same ids, same descriptions, same order as the
// registry lists them.
func TestCatalogMatchesTheAgents(t *testing.T) {
	var want []catalog.Entry
	for _, a := range agents.DefaultRegistry(agents.Deps{}).List() {
		want = append(want, catalog.Entry{ID: a.ID, Description: a.Description})
	}
	got := catalog.Entries()
	if !slices.Equal(got, want) {
		t.Fatalf("catalog.Entries() =\n%+v\nthe agents of package agents are\n%+v", got, want)
	}
	if !slices.IsSortedFunc(got, func(a, b catalog.Entry) int { return strings.Compare(a.ID, b.ID) }) {
		t.Errorf("entries not sorted by id: %+v", got)
	}
	for id, want := range map[string]string{catalog.Naked: agents.Naked, catalog.GNS3Copilot: agents.GNS3Copilot, catalog.MediaAgent: agents.MediaAgent} {
		if id != want {
			t.Errorf("catalog id %q, package agents says %q", id, want)
		}
	}
}

func TestEntriesIsACopy(t *testing.T) {
	e := catalog.Entries()
	e[0].Description = "changed"
	if catalog.Entries()[0].Description == "changed" {
		t.Fatal("Entries returns a shared slice")
	}
}

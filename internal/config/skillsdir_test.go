package config

import (
	"strings"
	"testing"
)

// SKILLS_DIR names the directory of extra skills; unset, the built-in
// skills only. The configuration shown at start gives it.
func TestSkillsDir(t *testing.T) {
	for _, tc := range []struct{ value, want string }{{"", ""}, {"/srv/gns3-skills", "/srv/gns3-skills"}, {"  ./skills ", "./skills"}} {
		c, err := Load(env(map[string]string{"SKILLS_DIR": tc.value}), LocalDefaults())
		if err != nil {
			t.Fatalf("SKILLS_DIR=%q: %v", tc.value, err)
		}
		if c.SkillsDir != tc.want {
			t.Errorf("SKILLS_DIR=%q: SkillsDir %q, want %q", tc.value, c.SkillsDir, tc.want)
		}
		if tc.want != "" && !strings.Contains(c.String(), "skills_dir="+tc.want) {
			t.Errorf("the configuration shown at start does not give the skills directory: %s", c)
		}
	}
}

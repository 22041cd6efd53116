package skills

import (
	"agentchat/internal/idsyntax"

	"path"
	"slices"
)

// injections reads injection/*.yaml: each file a group of issues, each
// issue a scenario keyed by its name. A later one replaces an earlier one
// of the same name.
func (l *loader) injections() error {
	files, _, err := l.entries(injectionDir)
	if err != nil {
		return err
	}
	for _, f := range files {
		p := path.Join(injectionDir, f)
		var g injectionYAML
		if err := l.decode(p, &g); err != nil {
			return err
		}
		switch {
		case g.Name == "":
			return fileErr(p, "missing name")
		case g.Description == "":
			return fileErr(p, "missing description")
		case g.Issues == nil:
			return fileErr(p, "missing issues")
		}
		for key, is := range g.Issues {
			if err := checkIssue(key, is); err != nil {
				return fileErr(p, "issue %q: %v", key, err)
			}
			l.set.scenarios[norm(key)] = &Scenario{
				Key: norm(key), Name: is.Name, Group: stem(f), Description: is.Description,
				Severity: is.Severity, Difficulty: is.Difficulty,
				Protocols:     orList(is.Protocols, g.Protocols),
				Applicability: is.Applicability, Requires: is.Requires, Platforms: is.Platforms,
				Symptoms: is.Symptoms, TroubleshootingHints: is.TroubleshootingHints,
				Inject: is.Inject, Verify: is.Verify, Undo: is.Undo,
				Source: l.src(p),
			}
		}
	}
	return nil
}

// issueError is a problem of one issue.
type issueError string

func (e issueError) Error() string { return string(e) }

func checkIssue(key string, is issueYAML) error {
	switch {
	case !idsyntax.Plain(key, keyChars, 64):
		return issueError("invalid name: letters, digits, _ . + - only, at most 64")
	case is.Name == "":
		return issueError("missing name")
	case is.Description == "":
		return issueError("missing description")
	case is.Severity != "" && !slices.Contains(severities, is.Severity):
		return issueError("severity must be one of low, medium, high, critical")
	case is.Difficulty != "" && !slices.Contains(difficulties, is.Difficulty):
		return issueError("difficulty must be one of beginner, intermediate, advanced")
	}
	return nil
}

// orList is a unless it is empty, else b.
func orList(a, b lines) []string {
	if len(a) > 0 {
		return a
	}
	return b
}

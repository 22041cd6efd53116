package skills

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
)

// builtinFiles are our own skills, in the layout of the GNS3 skills
// repository.
//
//go:embed all:builtin
var builtinFiles embed.FS

// Builtin returns the built-in skills alone.
func Builtin() (*Set, error) {
	sub, err := fs.Sub(builtinFiles, "builtin")
	if err != nil {
		return nil, fmt.Errorf("built-in skills: %w", err)
	}
	l := &loader{fsys: sub, source: "builtin", set: newSet()}
	if err := l.load(); err != nil {
		return nil, fmt.Errorf("built-in skills: %w", err)
	}
	return l.set, nil
}

// Load returns the built-in skills with those of dir added and overriding
// them; dir "" means the built-in skills alone. Reading is confined to
// dir: a path or symbolic link that leads out of it is refused, and so
// are files past MaxFileBytes, MaxFiles or MaxTotalBytes. A file that
// cannot be read or parsed fails the whole load with a *FileError naming
// it.
func Load(dir string) (*Set, error) {
	set, err := Builtin()
	if err != nil || dir == "" {
		return set, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open SKILLS_DIR: %w", err)
	}
	defer root.Close()
	l := &loader{fsys: root.FS(), source: "skills_dir", set: set}
	if err := l.load(); err != nil {
		return nil, err
	}
	return l.set, nil
}

// Registry holds the skills in use: the built-in ones and those of a
// directory. Reload replaces them whole, only when the directory loads
// without error. It belongs to one process (one Lambda instance): a reload
// changes what that process serves, and every process loads anew when it
// starts. Safe for concurrent use.
type Registry struct {
	dir    string
	reload sync.Mutex // one reload at a time
	cur    atomic.Pointer[Set]
}

// New returns a registry of the built-in skills and those of dir ("" for
// none). When dir does not load, the registry still serves the built-in
// skills and the error says why (a *FileError names the file).
func New(dir string) (*Registry, error) {
	r := &Registry{dir: dir}
	set, err := Load(dir)
	if err != nil {
		b, berr := Builtin()
		if berr != nil {
			return nil, berr
		}
		r.cur.Store(b)
		return r, err
	}
	r.cur.Store(set)
	return r, nil
}

// Current returns the skills in use.
func (r *Registry) Current() *Set { return r.cur.Load() }

// Dir returns the directory the registry reads besides the built-in
// skills ("" for none).
func (r *Registry) Dir() string { return r.dir }

// Reload reads the skills again and puts them in use, returning their
// counts. On error (a *FileError names the file) the skills in use stay.
func (r *Registry) Reload() (Counts, error) {
	r.reload.Lock()
	defer r.reload.Unlock()
	set, err := Load(r.dir)
	if err != nil {
		return Counts{}, err
	}
	r.cur.Store(set)
	return set.Counts(), nil
}

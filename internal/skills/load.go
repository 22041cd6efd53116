package skills

import (
	"agentchat/internal/idsyntax"

	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Bounds of one load, so that a directory cannot make the server read or
// hold without limit.
const (
	// MaxFileBytes bounds one skill file.
	MaxFileBytes = 256 << 10
	// MaxFiles bounds the skill files of one directory.
	MaxFiles = 1000
	// MaxTotalBytes bounds the bytes of all the files of one directory.
	MaxTotalBytes = 16 << 20
)

// Folders of the layout.
const (
	deviceDir    = "device"
	injectionDir = "injection"
	baseFile     = "_base"
)

// FileError is a skill file that could not be read or is not a valid
// skill; File is its path in the layout (device/vpcs.yaml).
type FileError struct {
	File string
	Err  error
}

// Error names the file and the problem.
func (e *FileError) Error() string { return e.File + ": " + e.Err.Error() }

// Unwrap returns the problem.
func (e *FileError) Unwrap() error { return e.Err }

func fileErr(file string, format string, args ...any) error {
	return &FileError{File: file, Err: fmt.Errorf(format, args...)}
}

var (
	// keyChars are the bytes of a skill's key after its first (a letter
	// or digit; 64 bytes at most).
	keyChars     = idsyntax.NewSet(true, "_.+-")
	severities   = []string{"low", "medium", "high", "critical"}
	difficulties = []string{"beginner", "intermediate", "advanced"}
)

// loader reads one source (the built-in files or a directory) into a Set.
type loader struct {
	fsys   fs.FS
	source string // "builtin" or "skills_dir"
	set    *Set
	files  int
	bytes  int64
}

// load reads the device and injection folders of l.fsys, adding to and
// overriding l.set. A missing folder is no error.
func (l *loader) load() error {
	if err := l.devices(); err != nil {
		return err
	}
	if err := l.injections(); err != nil {
		return err
	}
	l.set.index()
	return nil
}

func isYAML(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
}

func stem(name string) string {
	return strings.TrimSuffix(strings.TrimSuffix(name, ".yaml"), ".yml")
}

// entries lists a folder: file and folder names apart, sorted, hidden ones
// skipped. A symbolic link is classified by what it points to; one that
// leads out of the directory is an error naming it.
func (l *loader) entries(dir string) (files, dirs []string, err error) {
	list, err := fs.ReadDir(l.fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, &FileError{File: dir, Err: err}
	}
	for _, e := range list {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p := path.Join(dir, name)
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			fi, err := fs.Stat(l.fsys, p)
			if err != nil {
				return nil, nil, &FileError{File: p, Err: errors.New("refused: a link that leaves the skills directory or leads nowhere")}
			}
			isDir = fi.IsDir()
		}
		switch {
		case isDir:
			dirs = append(dirs, name)
		case isYAML(name):
			files = append(files, name)
		}
	}
	return files, dirs, nil
}

// read returns one file, bounded by MaxFileBytes, MaxFiles and
// MaxTotalBytes; it must be a regular file.
func (l *loader) read(p string) ([]byte, error) {
	l.files++
	if l.files > MaxFiles {
		return nil, fileErr(p, "too many skill files (at most %d)", MaxFiles)
	}
	fi, err := fs.Stat(l.fsys, p)
	if err != nil {
		return nil, &FileError{File: p, Err: err}
	}
	if !fi.Mode().IsRegular() {
		return nil, fileErr(p, "not a regular file")
	}
	if fi.Size() > MaxFileBytes {
		return nil, fileErr(p, "larger than %d bytes", MaxFileBytes)
	}
	f, err := l.fsys.Open(p)
	if err != nil {
		return nil, &FileError{File: p, Err: err}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, &FileError{File: p, Err: err}
	}
	if len(b) > MaxFileBytes {
		return nil, fileErr(p, "larger than %d bytes", MaxFileBytes)
	}
	l.bytes += int64(len(b))
	if l.bytes > MaxTotalBytes {
		return nil, fileErr(p, "the skill files exceed %d bytes in all", MaxTotalBytes)
	}
	return b, nil
}

// decode reads the YAML mapping of file p into v.
func (l *loader) decode(p string, v any) error {
	b, err := l.read(p)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return fileErr(p, "empty file")
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		return &FileError{File: p, Err: err}
	}
	return nil
}

func (l *loader) src(p string) string {
	if l.source == "builtin" {
		return "builtin"
	}
	return l.source + ":" + p
}

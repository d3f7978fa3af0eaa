package engine

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// Workspace is what the engine knows of the file system: whether a folder
// is a git repository and where its root is, which paths are links and
// where they lead, what git tracks or ignores, which files a folder holds.
// The engine reads it and never the disk: the caller builds it (package
// workspace: a view kept across decisions and refreshed when its check
// says stale, or one built for a single call) and passes it to Compile.
//
// The methods answer as their namesakes in package os do (os.Lstat,
// os.Stat, os.Readlink, os.ReadDir sorted by name, os.ReadFile,
// os.Getenv, os.UserHomeDir), for absolute paths, with errors that
// errors.Is matches against fs.ErrNotExist as the os ones do. Git runs
// git in the work tree top with the arguments given (the process's
// environment less the GIT_ variables that point git elsewhere) and
// returns what it prints; when git fails and finds no repository at top
// to use, it returns no output and no error (the agent's git prints
// nothing there either). Implementations must be safe for concurrent use.
type Workspace interface {
	Lstat(name string) (fs.FileInfo, error)
	Stat(name string) (fs.FileInfo, error)
	Readlink(name string) (string, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	ReadFile(name string) ([]byte, error)
	Git(top string, args ...string) ([]byte, error)
	Getenv(key string) string
	UserHomeDir() (string, error)
	// UserHome is the home folder of the user name, as os/user's Lookup
	// finds it; an error when the system knows no such user.
	UserHome(name string) (string, error)
}

// isNotExist reports an error that says the path does not exist.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// maxLinks bounds the links followed in one path, as the system does.
const maxLinks = 255

// evalSymlinks returns the absolute path abs with every symbolic link in
// it resolved, as filepath.EvalSymlinks does, reading the links through
// ws: an error when a part of the path does not exist, or the links loop.
func evalSymlinks(ws Workspace, abs string) (string, error) {
	if !filepath.IsAbs(abs) {
		return "", &fs.PathError{Op: "evalsymlinks", Path: abs, Err: fs.ErrInvalid}
	}
	dest, rest, links := "/", abs, 0
	for rest != "" {
		seg, more, _ := strings.Cut(rest, "/")
		rest = more
		switch seg {
		case "", ".":
			continue
		case "..":
			dest = filepath.Dir(dest)
			continue
		}
		next := dest + "/" + seg
		if dest == "/" {
			next = "/" + seg
		}
		fi, err := ws.Lstat(next)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if !fi.IsDir() && rest != "" {
				return "", &fs.PathError{Op: "lstat", Path: next + "/" + rest, Err: errNotDir}
			}
			dest = next
			continue
		}
		links++
		if links > maxLinks {
			return "", &fs.PathError{Op: "evalsymlinks", Path: abs, Err: errLinks}
		}
		target, err := ws.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			dest = "/"
		}
		rest = target + "/" + rest
	}
	return filepath.Clean(dest), nil
}

var (
	errNotDir = errors.New("not a directory")
	errLinks  = errors.New("too many links")
)

// walkDir walks the tree at root as filepath.WalkDir does (lexical order,
// links not followed), reading the folders through ws.
func walkDir(ws Workspace, root string, fn fs.WalkDirFunc) {
	info, err := ws.Lstat(root)
	if err != nil {
		fn(root, nil, err)
		return
	}
	walkFrom(ws, root, fs.FileInfoToDirEntry(info), fn)
}

func walkFrom(ws Workspace, path string, d fs.DirEntry, fn fs.WalkDirFunc) error {
	if err := fn(path, d, nil); err != nil || !d.IsDir() {
		if err == filepath.SkipDir && d.IsDir() {
			err = nil
		}
		return err
	}
	ents, err := ws.ReadDir(path)
	if err != nil {
		if err = fn(path, d, err); err != nil {
			if err == filepath.SkipDir {
				err = nil
			}
			return err
		}
	}
	if !slices.IsSortedFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) }) {
		ents = slices.SortedFunc(slices.Values(ents), func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	}
	for _, ent := range ents {
		if err := walkFrom(ws, filepath.Join(path, ent.Name()), ent, fn); err != nil {
			if err == filepath.SkipDir {
				break
			}
			return err
		}
	}
	return nil
}

// globPaths returns the paths that match the absolute pattern, as
// filepath.Glob does (its syntax, names in lexical order, dot files
// matched too), reading the folders through ws.
func globPaths(ws Workspace, pattern string) ([]string, error) {
	return globDepth(ws, pattern, 0)
}

func globDepth(ws Workspace, pattern string, depth int) ([]string, error) {
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, err
	}
	if depth > 10000 {
		return nil, filepath.ErrBadPattern
	}
	if !strings.ContainsAny(pattern, `*?[\`) {
		if _, err := ws.Lstat(pattern); err != nil {
			return nil, nil
		}
		return []string{pattern}, nil
	}
	dir, file := filepath.Split(pattern)
	switch dir {
	case "":
		dir = "."
	case "/":
	default:
		dir = dir[:len(dir)-1] // the trailing separator
	}
	if !strings.ContainsAny(dir, `*?[\`) {
		return globIn(ws, dir, file, nil)
	}
	if dir == pattern {
		return nil, filepath.ErrBadPattern
	}
	dirs, err := globDepth(ws, dir, depth+1)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range dirs {
		if out, err = globIn(ws, d, file, out); err != nil {
			return out, err
		}
	}
	return out, nil
}

// globIn appends to matches the names in the folder dir that match
// pattern.
func globIn(ws Workspace, dir, pattern string, matches []string) ([]string, error) {
	if fi, err := ws.Stat(dir); err != nil || !fi.IsDir() {
		return matches, nil
	}
	ents, _ := ws.ReadDir(dir) // what it read before an error, as Glob
	for _, ent := range ents {
		ok, err := filepath.Match(pattern, ent.Name())
		if err != nil {
			return matches, err
		}
		if ok {
			matches = append(matches, filepath.Join(dir, ent.Name()))
		}
	}
	return matches, nil
}

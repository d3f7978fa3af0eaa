package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/shell"
	"github.com/warden-run/warden/shell/progs"
)

// repoReadCheck checks a git command that prints the content of files the
// repository keeps (shell.Write.Repo) against the private paths: git grep
// KEY prints the lines of a tracked .env, git diff its changes, git log -p
// and git show every .env a commit ever held, though no operand names it.
//
// The operands that name a path that exists are pathspecs, the others
// revisions, as git tells them apart; the files read are those under the
// pathspecs, or under the working folder (git grep) or the whole work tree
// (the others) when there is none.
//
//   - Tracked files (git grep, git diff without a revision): the index
//     names them; git diff prints those that changed (git lists them). A
//     private path among those read is denied, named.
//   - The index beside HEAD (git diff --cached, git status -v): the files
//     staged, as git lists them, which include a file HEAD has and the
//     index no longer does.
//   - History (a revision, git log -p, git show, git cat-file -p OBJECT):
//     warden does not search the commits, so the call asks when a private
//     path could lie under what is read. A pathspec that names a file that
//     exists reads that file's history alone.
func (e *Engine) repoReadCheck(st *state, r shell.Write, dirs []string) {
	if len(e.private) == 0 {
		return
	}
	base := dirs[0]
	for i, d := range dirs {
		if i > 0 {
			if shell.IsDyn(d) {
				// A folder computed at run time: any part of the
				// repository.
				whole := r
				whole.RepoWhole = true
				e.repoReadFrom(st, whole, base)
				continue
			}
			d, _, _ = e.resolve(d, base)
		}
		e.repoReadFrom(st, r, d)
	}
}

// repoScope is a part of the repository a git command prints: the files
// at or below abs that match accepts (by their path below abs; nil: all).
type repoScope struct {
	abs   string
	match func(rel string) bool
}

// repoReadFrom is repoReadCheck for git run in the folder dir.
func (e *Engine) repoReadFrom(st *state, r shell.Write, dir string) {
	top, index := e.repoOf(dir)
	if top == "" {
		return // no repository: git reads nothing
	}
	history := r.Repo == progs.RepoHistory
	var scopes []repoScope
	whole := r.RepoWhole
	for _, op := range r.RepoOps {
		switch {
		case shell.IsDyn(op):
			history, whole = true, true
		case strings.HasPrefix(op, ":"):
			// Pathspec magic: an exclusion only narrows; any other
			// (:/, :(glob), :(icase), ...) may name any file.
			if !strings.HasPrefix(op, ":!") && !strings.HasPrefix(op, ":^") && !strings.HasPrefix(op, ":(exclude") {
				whole = true
			}
		case strings.ContainsAny(op, "*?[\\"):
			scopes = append(scopes, repoScope{abs: dir, match: progs.PathspecMatch(op)})
		default:
			abs, _, _ := e.resolve(op, dir)
			if _, err := e.ws.Lstat(abs); err == nil {
				scopes = append(scopes, repoScope{abs: abs})
			} else {
				// No such path: a revision, whose commit holds any file.
				history = true
			}
		}
	}
	if whole || len(scopes) == 0 && r.Top {
		// The whole work tree, wherever in it git runs.
		scopes = []repoScope{{abs: top}}
	} else if len(scopes) == 0 {
		scopes = []repoScope{{abs: dir}}
	}
	if history {
		for _, s := range scopes {
			if fi, err := e.ws.Lstat(s.abs); err == nil && fi.Mode().IsRegular() {
				continue // one file's history: the read of its path is checked as such
			}
			if e.couldMatchUnder(s.abs, e.private) {
				st.check("read", item{effect: warden.Ask, code: warden.CodeUnparsable, subject: r.Op, extra: gitHistory, note: e.show(s.abs)})
				return
			}
		}
		return
	}
	// The files git prints: all it tracks (git grep), or those that
	// changed (git diff: the index beside the work tree; --cached: HEAD
	// beside the index, which holds a file HEAD has and the index no
	// longer does).
	var lists [][]string
	if r.Repo == progs.RepoTracked || !r.RepoDiff {
		names, err := readIndexNames(e.ws, index)
		if errors.Is(err, errIndex) {
			// A form warden does not read (version 4, a sparse index):
			// git lists it.
			names, err = gitNames(e.ws, top, "ls-files", "-z", "--cached", "--full-name")
		}
		if err == nil && len(e.privateIn(top, names, scopes)) > 0 && (r.RepoDiff || r.Repo == progs.RepoStaged) {
			names, err = gitNames(e.ws, top, "diff", "--name-only", "-z", "--no-renames")
		}
		if err != nil {
			e.repoUnlisted(st, r, err)
			return
		}
		lists = append(lists, names)
	}
	if r.Repo == progs.RepoStaged {
		staged, err := gitNames(e.ws, top, "diff", "--cached", "--name-only", "-z", "--no-renames")
		if err != nil {
			e.repoUnlisted(st, r, err)
			return
		}
		lists = append(lists, staged)
	}
	for _, names := range lists {
		if hits := e.privateIn(top, names, scopes); len(hits) > 0 {
			st.check("read", item{effect: warden.Deny, code: warden.CodeProtectedPath,
				subject: e.show(hits[0]) + " (tracked by git, which " + r.Op + " prints)", extra: "read"})
			return
		}
	}
}

// privateIn returns the private paths among names (relative to the top of
// the work tree) that lie in scopes.
func (e *Engine) privateIn(top string, names []string, scopes []repoScope) []string {
	var hits []string
	for _, name := range names {
		abs := filepath.Join(top, filepath.FromSlash(name))
		in := false
		for _, s := range scopes {
			if under(abs, s.abs) && (s.match == nil || abs != s.abs && s.match(abs[len(s.abs)+1:])) {
				in = true
				break
			}
		}
		if !in {
			continue
		}
		rel, inside := e.relTo(abs)
		for _, g := range e.private {
			if g.match(abs, rel, inside) {
				hits = append(hits, abs)
				break
			}
		}
	}
	return hits
}

// repoUnlisted asks for a git command whose files warden could not list.
func (e *Engine) repoUnlisted(st *state, r shell.Write, err error) {
	st.check("read", item{effect: warden.Ask, code: warden.CodeUnparsable, subject: r.Op,
		extra: r.Op + " prints files git tracks, and warden cannot list them to tell whether a private path is among them (" + err.Error() + ")"})
}

// gitNames runs a git command that lists paths (-z) in the repository
// whose work tree is top (Workspace.Git: no repository there lists none).
func gitNames(ws Workspace, top string, args ...string) ([]string, error) {
	out, err := ws.Git(top, args...)
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	var names []string
	for _, n := range strings.Split(string(out), "\x00") {
		if n != "" {
			names = append(names, n)
		}
	}
	return names, nil
}

// repoOf finds the repository git uses when it runs in dir, as git looks:
// the top of its work tree and its index file; "" when there is none. The
// workspace's own repository is the common case; git elsewhere below the
// root is asked for already (gitHere), and one above the root holds the
// workspace's files too.
func (e *Engine) repoOf(dir string) (top, index string) {
	if d := e.nearestGit(dir); d != "" {
		return d, gitIndexFile(e.ws, d)
	}
	return "", ""
}

// nearestGit is the nearest folder at or above dir that holds a .git.
func (e *Engine) nearestGit(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := e.ws.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if p := filepath.Dir(d); p == d {
			return ""
		}
	}
}

// gitIndexFile is the index of the repository whose work tree is top: in
// its .git folder, or where a .git file (a linked work tree, a submodule)
// points.
func gitIndexFile(ws Workspace, top string) string {
	gd := filepath.Join(top, ".git")
	if fi, err := ws.Stat(gd); err == nil && !fi.IsDir() {
		data, err := ws.ReadFile(gd)
		if err != nil {
			return gd // unreadable: the read fails, and the call asks
		}
		line, _, _ := strings.Cut(string(data), "\n")
		p, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return gd
		}
		p = strings.TrimSpace(p)
		if !filepath.IsAbs(p) {
			p = filepath.Join(top, p)
		}
		return filepath.Join(p, "index")
	}
	return filepath.Join(gd, "index")
}

// gitHistory marks the item of a git command that prints files from the
// repository's history (repoReadFrom).
const gitHistory = "\x00git history"

// errIndex: the index is in a form warden does not read.
var errIndex = errors.New("an index format warden does not read")

// readIndexNames returns the paths git's index names (versions 2 and 3,
// with SHA-1 or SHA-256 object names). No index (a repository with
// nothing added yet) names none. A sparse index, whose folder entries
// stand for files it does not list, is an error.
func readIndexNames(ws Workspace, file string) ([]string, error) {
	data, err := readIndex(ws, file)
	if err != nil || data == nil {
		return nil, err
	}
	version := binary.BigEndian.Uint32(data[4:8])
	count := int(binary.BigEndian.Uint32(data[8:12]))
	for _, hash := range []int{20, 32} {
		if names, ok := indexEntries(data, version, count, hash); ok {
			return names, nil
		}
	}
	return nil, errIndex
}

// readIndex reads git's index file: nil and no error when there is none,
// errIndex when it is not version 2 or 3 (version 4 compresses the names).
func readIndex(ws Workspace, file string) ([]byte, error) {
	data, err := ws.ReadFile(file)
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return nil, errIndex
	}
	if v := binary.BigEndian.Uint32(data[4:8]); v != 2 && v != 3 {
		return nil, errIndex
	}
	return data, nil
}

// indexEntries reads count entries of an index whose object names are
// hash bytes long; ok is false when they do not read as entries.
func indexEntries(data []byte, version uint32, count, hash int) ([]string, bool) {
	names := make([]string, 0, count)
	off := 12
	for range count {
		start := off
		off += 40 + hash // stat data, object name
		if off+2 > len(data) {
			return nil, false
		}
		flags := binary.BigEndian.Uint16(data[off:])
		off += 2
		if flags&0x4000 != 0 {
			if version < 3 {
				return nil, false
			}
			off += 2
		}
		if off > len(data) {
			return nil, false
		}
		end := bytes.IndexByte(data[off:], 0)
		if end <= 0 {
			return nil, false
		}
		if n := int(flags & 0xfff); n < 0xfff && n != end {
			return nil, false
		}
		name := string(data[off : off+end])
		if strings.HasSuffix(name, "/") {
			return nil, false // a sparse index's folder entry
		}
		names = append(names, name)
		// 1 to 8 NULs pad the entry to a multiple of 8 bytes.
		off = start + (off+end-start+8)&^7
		if off > len(data) {
			return nil, false
		}
	}
	// What follows the entries is extensions and the checksum.
	return names, len(data)-off >= hash
}

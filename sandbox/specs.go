package sandbox

import (
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/warden-run/warden/internal/glob"
	"github.com/warden-run/warden/policy"
)

// SpecDir is the folder, inside a policy's store folder (.warden), where
// Specs writes the spec files a hook's rewrite runs: confined commands
// cannot write there (the store folder is bound read-only), nor can the
// agent's own file tools (the engine protects the store folder).
const SpecDir = "sandbox"

// Specs derives the confinement of the policies a process decides calls
// under, writes it to spec files for the lean runner (warden-sandbox
// --spec), and keeps what it read of the workspace between calls: the
// walk that resolves the relative protected and private globs (every
// .env, by default) is the costly part of a derivation, and Specs reads
// again only the folders whose stamp (identity, modification and change
// times, size) changed since the last walk. The rest of the Spec (a few
// dozen fixed paths) is derived anew each call, as FromPolicy does. A
// Specs is safe for concurrent use; hookd keeps one for its life.
type Specs struct {
	mu    sync.Mutex
	walks walkCaches
	// files remembers the spec files written: a file unchanged since
	// (same stamp) is not read again to check its bytes.
	files map[string]fileStamp
}

// NewSpecs returns an empty Specs.
func NewSpecs() *Specs { return &Specs{files: map[string]fileStamp{}} }

// Watch makes c watch the folders of each workspace it walks (inotify on
// Linux) for a process that keeps c between calls (hookd): a call then
// checks only the folders something happened in since the last, instead
// of the stamp of every folder. Where a watch cannot be had (the user's
// inotify limits, another system), or events were lost, folders are
// checked by their stamps as without it. A one-shot process gains
// nothing from it: adding the watches costs a system call a folder.
func (c *Specs) Watch() {
	c.mu.Lock()
	c.walks.watching = true
	c.mu.Unlock()
}

// Prepared is a Spec written to a file for the runner.
type Prepared struct {
	Spec Spec
	// File is the spec file (absolute) and Sum the SHA-256 (hex) of its
	// bytes, which the runner checks before it runs anything.
	File, Sum string
}

// Prepare derives the Spec of p for its workspace, with digest (hex) as
// the policy's digest (the bytes the decision was made under: a run
// under a policy changed since refuses), and writes it under p's store
// folder (.warden/sandbox/, named by its content). Its error is
// FromPolicy's, or the store folder's.
func (c *Specs) Prepare(p *policy.Policy, digest string) (Prepared, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	dir := filepath.Join(p.Dir, policy.StoreDir, SpecDir)
	c.walks.dir, c.walks.used = dir, nil
	s, err := fromPolicy(p, "", digest, &c.walks)
	if u := c.walks.used; u != nil && u.changed && err == nil && time.Since(u.saved) >= saveEvery {
		u.save()
		u.saved = time.Now()
	}
	if err != nil {
		return Prepared{}, err
	}
	_, sum, err := s.Encode()
	if err != nil {
		return Prepared{}, err
	}
	file := filepath.Join(dir, sum[:32]+".json")
	if st, ok := c.files[file]; ok {
		if now, err := statFile(file); err == nil && now == st && st.usable {
			return Prepared{Spec: s, File: file, Sum: sum}, nil
		}
		delete(c.files, file)
	}
	got, gotSum, err := s.WriteFileDigest(dir)
	if err != nil {
		return Prepared{}, fmt.Errorf("write the sandbox spec into %s: %w", dir, err)
	}
	if got != file || gotSum != sum {
		return Prepared{}, fmt.Errorf("internal: the sandbox spec was written as %s, not %s", got, file)
	}
	// A spec file in use stays young: another process that writes a new
	// one removes the old ones (removeOldSpecs).
	if fi, err := os.Stat(file); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
		now := time.Now()
		os.Chtimes(file, now, now)
	}
	removeOldSpecs(dir, file)
	if st, err := statFile(file); err == nil && !st.racy(time.Now()) {
		if len(c.files) > 256 {
			clear(c.files)
		}
		c.files[file] = st
	}
	return Prepared{Spec: s, File: file, Sum: sum}, nil
}

// specMaxAge is the age past which a spec file no rewrite still names is
// removed: a rewritten line runs right after its decision.
const specMaxAge = 7 * 24 * time.Hour

// removeOldSpecs removes the spec files of dir not changed for
// specMaxAge but keep (each workspace change that changes the
// confinement writes a new one).
func removeOldSpecs(dir, keep string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	cutoff := time.Now().Add(-specMaxAge)
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if p == keep || !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") && !strings.HasSuffix(e.Name(), ".gob") {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
			os.Remove(p)
		}
	}
}

// walkCaches keeps one walkCache per workspace root and set of globs.
// Each is also kept in a file of the spec folder (dir), so that a process
// that decides one call (a one-shot warden hook) starts from the last
// walk instead of walking the whole workspace.
type walkCaches struct {
	m    map[string]*walkCache
	dir  string     // the spec folder of the policy being derived
	used *walkCache // the cache the last derivation used
	// watching: each cache watches its folders (Specs.Watch).
	watching bool
}

func (w *walkCaches) get(root string, pro, priv []glob.Path) *walkCache {
	var b strings.Builder
	b.WriteString(root)
	for _, g := range pro {
		b.WriteString("\x00p" + g.String())
	}
	for _, g := range priv {
		b.WriteString("\x00h" + g.String())
	}
	key := b.String()
	if w.m == nil {
		w.m = map[string]*walkCache{}
	}
	c, ok := w.m[key]
	if !ok {
		if len(w.m) >= 16 {
			for _, old := range w.m {
				if old.watch != nil {
					old.watch.close()
				}
			}
			clear(w.m)
		}
		c = &walkCache{key: key}
		if w.watching {
			c.watch = newDirWatch()
		}
		if w.dir != "" {
			sum := sha256.Sum256([]byte(key))
			c.file = filepath.Join(w.dir, "walk-"+hex.EncodeToString(sum[:12])+".gob")
			c.load()
		}
		w.m[key] = c
	}
	w.used = c
	return c
}

// walkCache is the walk of one workspace for one set of globs: for each
// folder entered, its stamp when read and what was found directly in it.
type walkCache struct {
	dirs map[string]*dirRecord
	key  string
	// file keeps the walk between processes ("" for none); changed: the
	// last walk read or dropped a folder, so the file is out of date.
	file    string
	changed bool
	saved   time.Time
	// skip is the store folder, not walked: warden's own files (the
	// audit trail, these spec and walk files) change with every call,
	// and confined commands cannot write there (it is bound read-only).
	skip string
	// watch watches the walked folders (Specs.Watch), or is nil.
	watch *dirWatch
}

// saveEvery spaces the writes of a walk file by a process that keeps its
// walk in memory (hookd); a one-shot hook writes it once.
const saveEvery = 5 * time.Second

type dirRecord struct {
	st fileStamp
	// trusted: the stamp tells a later change (not within the clock step
	// of the read); an untrusted record is read again next time.
	trusted bool
	ro      []string // entries that matched a protected glob
	hide    []string // entries that matched a private glob
	subs    []string // folders to enter
	n       int      // entries counted
	// watched: the folder's watch was in place before it was last read
	// or its stamp last checked, so an event tells any change since.
	watched bool
}

// walk adds the paths under root that the relative protected (pro) and
// private (priv) globs match to ro and hide. A matched private folder is
// not entered (hidden whole); a matched protected one is (for private
// paths inside). The root's .git is not entered (its control files are
// fixed). A folder whose stamp is the one recorded at its last read is
// not read again: adding, removing or renaming an entry changes a
// folder's modification and change times.
func (c *walkCache) walk(root string, pro, priv []glob.Path, ro, hide *pathSet) error {
	next := make(map[string]*dirRecord, len(c.dirs))
	total := 0
	tooMany := fmt.Errorf("the workspace %s has more than %d files and folders: the protected and private globs of the policy cannot all be resolved to paths to confine (name the paths exactly, or narrow the workspace root)", root, maxWalk)
	// What happened in the watched folders since the last walk; all:
	// events were lost, or nothing is watched.
	dirty, all := map[string]bool(nil), true
	if c.watch != nil {
		dirty, all = c.watch.drain()
	}
	var visit func(dir string) error
	visit = func(dir string) error {
		rec := c.dirs[dir]
		if rec == nil || !rec.watched || !rec.trusted || all || dirty[dir] {
			// The watch goes in first: a change after the check below
			// is an event for the next walk.
			watched := c.watch != nil && c.watch.add(dir)
			now := time.Now()
			dirStats.Add(1)
			st, err := statFile(dir)
			if rec == nil || !rec.trusted || err != nil || st != rec.st {
				c.changed = true
				rec, err = readDirRecord(root, dir, c.skip, pro, priv)
				if err != nil {
					if dir == root {
						return err
					}
					rec = &dirRecord{} // unreadable: nothing inside is resolved, as before
				} else {
					rec.st = st
					rec.trusted = st.usable && !st.racy(now)
				}
			}
			rec.watched = watched
		}
		next[dir] = rec
		if total += rec.n; total > maxWalk {
			return tooMany
		}
		for _, p := range rec.ro {
			ro.add(p)
		}
		for _, p := range rec.hide {
			hide.add(p)
		}
		for _, sub := range rec.subs {
			if err := visit(sub); err != nil {
				return err
			}
		}
		return nil
	}
	c.changed = false
	err := visit(root)
	if err != nil {
		c.dirs, c.changed = nil, false
		if c.watch != nil {
			c.watch.close()
			c.watch = newDirWatch()
		}
		return err
	}
	c.changed = c.changed || len(next) != len(c.dirs)
	if c.watch != nil {
		for dir := range c.dirs {
			if next[dir] == nil {
				c.watch.remove(dir)
			}
		}
	}
	c.dirs = next
	return nil
}

// walkFile is what a walk file holds (encoding/gob).
type walkFile struct {
	V    int
	Key  string
	Dirs map[string]walkFileDir
}

type walkFileDir struct {
	Dev, Ino      uint64
	Mode          uint32
	Size          int64
	Mtime, Ctime  int64
	Trusted       bool
	RO, Hide, Sub []string
	N             int
}

const walkFileVersion = 1

// load reads the walk file, when there is one of this user that others
// cannot write, for the same workspace and globs. A walk file decides
// which paths a confined command is kept from, as a spec file does: it
// lies in the store folder, which confined commands and the agent's file
// tools cannot write.
func (c *walkCache) load() {
	f, err := os.Open(c.file)
	if err != nil {
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !ownedFile(st) {
		return
	}
	var wf walkFile
	if err := gob.NewDecoder(io.LimitReader(f, 256<<20)).Decode(&wf); err != nil || wf.V != walkFileVersion || wf.Key != c.key {
		return
	}
	c.dirs = make(map[string]*dirRecord, len(wf.Dirs))
	for p, d := range wf.Dirs {
		c.dirs[p] = &dirRecord{
			st:      fileStamp{dev: d.Dev, ino: d.Ino, mode: d.Mode, size: d.Size, mtime: d.Mtime, ctime: d.Ctime, usable: true},
			trusted: d.Trusted, ro: d.RO, hide: d.Hide, subs: d.Sub, n: d.N,
		}
	}
}

// save writes the walk file (best effort: without it the next process
// walks the workspace).
func (c *walkCache) save() {
	if c.file == "" {
		return
	}
	wf := walkFile{V: walkFileVersion, Key: c.key, Dirs: make(map[string]walkFileDir, len(c.dirs))}
	for p, r := range c.dirs {
		wf.Dirs[p] = walkFileDir{Dev: r.st.dev, Ino: r.st.ino, Mode: r.st.mode, Size: r.st.size, Mtime: r.st.mtime, Ctime: r.st.ctime,
			Trusted: r.trusted && r.st.usable, RO: r.ro, Hide: r.hide, Sub: r.subs, N: r.n}
	}
	dir := filepath.Dir(c.file)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".walk-*")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name())
	if err := gob.NewEncoder(tmp).Encode(&wf); err != nil {
		tmp.Close()
		return
	}
	if tmp.Close() == nil {
		os.Rename(tmp.Name(), c.file)
	}
}

// readDirRecord reads one folder's entries and matches them.
func readDirRecord(root, dir, skip string, pro, priv []glob.Path) (*dirRecord, error) {
	dirReads.Add(1)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	rec := &dirRecord{n: len(ents)}
	for _, d := range ents {
		path := filepath.Join(dir, d.Name())
		rel := strings.TrimPrefix(path, root+"/")
		if rel == ".git" || path == skip {
			// Not entered; a worktree's or a submodule's .git file is
			// not a folder to skip either.
			continue
		}
		isDir := d.IsDir()
		// A folder whose every entry matches (secrets/** for secrets) is
		// confined whole: new files inside it too.
		inside := rel + "/_"
		matched := false
		for _, g := range priv {
			if g.MatchExact(rel) || isDir && g.MatchExact(inside) {
				rec.hide = append(rec.hide, path)
				matched = true
				break
			}
		}
		if matched {
			continue // hidden whole
		}
		for _, g := range pro {
			if g.MatchExact(rel) || isDir && g.MatchExact(inside) {
				// Read-only whole; still entered for private paths.
				rec.ro = append(rec.ro, path)
				break
			}
		}
		if isDir {
			rec.subs = append(rec.subs, path)
		}
	}
	return rec, nil
}

// dirReads counts the folders read, dirStats the folders whose stamp was
// checked (for tests).
var dirReads, dirStats atomic.Int64

// The clock step within which a change may leave a folder's times as
// they were (as package workspace).
const (
	fineStep   = 100 * time.Millisecond
	coarseStep = 2 * time.Second
)

// racy reports a stamp whose times are within the clock step of now.
func (s fileStamp) racy(now time.Time) bool {
	step := fineStep
	if s.mtime%1e9 == 0 && s.ctime%1e9 == 0 {
		step = coarseStep
	}
	return max(s.mtime, s.ctime) > now.Add(-step).UnixNano()
}

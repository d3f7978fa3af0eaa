package gate

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/workspace"
)

// Source is one policy file, compiled, and compiled again by the one
// reload rule every front end shares:
//
//   - the file's content changed (its bytes, not its time stamp: a save
//     that changed nothing compiles nothing);
//   - only a whole file is compiled: bytes other than those compiled last
//     are read again with policy.ReadStable, which waits for a file being
//     rewritten to settle (a file mid-write passes through prefixes that
//     load and lack its later rules);
//   - the policy's intents file changed (its bytes are compiled in);
//   - a report plugin file changed (policy.Report.Stale).
//
// A policy that does not load or compile is an error, also when an
// earlier version did: the file on disk is the policy a person reads and
// means, and the gate denies until it loads. A call costs a stat of the
// policy and intents files, not a read, while their stamps (size,
// modification time, inode) are unchanged and old enough to vouch for
// their contents (see racyWindow).
//
// It is safe for concurrent use. Make one with NewSource.
type Source struct {
	file string
	// Logf, when set, is told when the policy stops loading and when it
	// loads again (once per change, not per call).
	Logf func(format string, args ...any)

	mu      sync.Mutex
	ws      *workspace.View // the engine's view of the workspace, checked each call
	eng     *engine.Engine
	sum     [32]byte // of the policy file the engine was compiled from
	intents [32]byte // of its intents file
	// stamps of the policy file and the intents file as they were hashed.
	polStamp, intStamp stamp
	failing            bool // the last load failed
	used               time.Time
}

// NewSource returns the source of the policy file (made absolute).
func NewSource(file string) (*Source, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", file, err)
	}
	return &Source{file: abs, ws: workspace.New()}, nil
}

// File is the policy file, absolute.
func (s *Source) File() string { return s.file }

// racyWindow is how long after a file's modification time a read of it
// cannot vouch for its stamp: a write within the same tick of the file
// system's clock would leave the same modification time. A file system
// that keeps times to the second (or two, FAT) needs the coarse window; one
// that keeps sub-second times (ext4, xfs, btrfs, tmpfs: its clock ticks in
// 1 to 10 ms) the fine one, as the workspace view and the sandbox specs
// judge their stamps.
const (
	racyWindow     = 2 * time.Second
	fineRacyWindow = 100 * time.Millisecond
)

// stamp is what a stat tells of a file, and whether the contents hashed
// with it are the contents of every file with this stamp.
type stamp struct {
	fi    os.FileInfo // nil: no stamp
	trust bool
}

// same reports that fi is the file the stamp was taken of, unchanged.
func (s stamp) same(fi os.FileInfo) bool {
	return s.trust && s.fi != nil && fi != nil && os.SameFile(s.fi, fi) &&
		s.fi.Size() == fi.Size() && s.fi.ModTime().Equal(fi.ModTime())
}

// stampOf is the stamp of a file with the info fi taken before a read at
// read: trusted once the read came racyWindow after the modification time.
func stampOf(fi os.FileInfo, read time.Time) stamp {
	if fi == nil {
		return stamp{}
	}
	window := racyWindow
	if fi.ModTime().Nanosecond()%1e7 != 0 {
		// A time finer than 10 ms: the file system keeps sub-second times.
		window = fineRacyWindow
	}
	return stamp{fi: fi, trust: read.Sub(fi.ModTime()) >= window}
}

// Engine returns the policy compiled as the files are now (see Source),
// with its view of the workspace checked: what changed on disk since the
// last call is read again.
func (s *Source) Engine() (*engine.Engine, error) {
	eng, err := s.engine()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used = time.Now()
	if err != nil && !s.failing && s.Logf != nil {
		s.Logf("the policy does not load: every call is denied until it does: %v", err)
	} else if err == nil && s.failing && s.Logf != nil {
		s.Logf("policy %s loads again", s.file)
	}
	s.failing = err != nil
	return eng, err
}

// Current implements Policy.
func (s *Source) Current() (session.Engine, error) {
	eng, err := s.Engine()
	if err != nil {
		return nil, err
	}
	return eng, nil
}

func (s *Source) engine() (*engine.Engine, error) {
	// The view is checked first, then asked for the files' stamps: what
	// it remembers of them is what a stat tells now (the watcher saw no
	// change), without the stats.
	s.ws.Refresh()
	fi, err := s.ws.Stat(s.file)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	s.mu.Lock()
	if eng := s.eng; eng != nil && s.polStamp.same(fi) && !eng.Policy().Report.Stale() {
		ifile := intentsFile(eng.Policy())
		if ifile == "" {
			s.mu.Unlock()
			return eng, nil
		}
		if ifi, err := s.ws.Stat(ifile); err == nil && s.intStamp.same(ifi) {
			s.mu.Unlock()
			return eng, nil
		}
	}
	s.mu.Unlock()
	read := time.Now()
	data, err := policy.ReadOnce(s.file)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	s.mu.Lock()
	same := s.eng != nil && s.sum == sum
	s.mu.Unlock()
	if !same {
		// Only a whole file: the bytes compiled last are whole however
		// recent; anything else must settle. The stamp is taken before
		// the read.
		read = time.Now()
		if fi, err = os.Stat(s.file); err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		if data, err = policy.ReadStable(s.file); err != nil {
			return nil, err
		}
		sum = sha256.Sum256(data)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.eng != nil && s.sum == sum && !s.eng.Policy().Report.Stale() {
		if isum, ist := intentsSum(s.eng.Policy()); isum == s.intents {
			s.polStamp, s.intStamp = stampOf(fi, read), ist
			return s.eng, nil
		}
	}
	pol, err := policy.LoadBytes(s.file, data)
	if err != nil {
		return nil, err
	}
	// Hashed before the compile reads it: a change during the compile
	// shows as a change on the next call.
	isum, ist := intentsSum(pol)
	eng, err := engine.Compile(pol, s.ws)
	if err != nil {
		return nil, fmt.Errorf("compile policy %s: %w", pol.File, err)
	}
	s.eng, s.sum, s.intents = eng, sum, isum
	s.polStamp, s.intStamp = stampOf(fi, read), ist
	return eng, nil
}

// intentsFile is the policy's intents file ("" for none).
func intentsFile(p *policy.Policy) string {
	if p.Intents == nil {
		return ""
	}
	return p.Intents.File
}

// intentsSum hashes the policy's intents file (all zero without one), and
// returns its stamp as it was before the read.
func intentsSum(p *policy.Policy) ([32]byte, stamp) {
	file := intentsFile(p)
	if file == "" {
		return [32]byte{}, stamp{}
	}
	read := time.Now()
	fi, err := os.Stat(file)
	if err != nil {
		return sha256.Sum256([]byte("unreadable: " + err.Error())), stamp{}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return sha256.Sum256([]byte("unreadable: " + err.Error())), stamp{}
	}
	return sha256.Sum256(data), stampOf(fi, read)
}

// Sources are the policies of many projects (hookd serves every project
// of a user), each a Source, at most Max of them (the least recently used
// goes first). The zero value keeps DefaultMax.
type Sources struct {
	Max int

	mu sync.Mutex
	m  map[string]*Source
}

// DefaultMax is how many policies Sources keeps by default.
const DefaultMax = 64

// Engine is Source.Engine for the policy file (an absolute path).
func (ss *Sources) Engine(file string) (*engine.Engine, error) {
	file, err := filepath.Abs(file)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", file, err)
	}
	ss.mu.Lock()
	if ss.m == nil {
		ss.m = map[string]*Source{}
	}
	s := ss.m[file]
	if s == nil {
		s = &Source{file: file, ws: workspace.New()}
		ss.m[file] = s
		limit := ss.Max
		if limit <= 0 {
			limit = DefaultMax
		}
		if len(ss.m) > limit {
			ss.evict(file)
		}
	}
	ss.mu.Unlock()
	return s.Engine()
}

// evict drops the least recently used source but keep.
func (ss *Sources) evict(keep string) {
	var oldest string
	var at time.Time
	for k, s := range ss.m {
		s.mu.Lock()
		u := s.used
		s.mu.Unlock()
		if k != keep && (oldest == "" || u.Before(at)) {
			oldest, at = k, u
		}
	}
	delete(ss.m, oldest)
}

package mcpproxy

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/workspace"
)

// Policy is a policy file compiled for the proxy, compiled again when the
// file or its intents file changes (a proxy lives as long as its client's
// session, and a policy edited meanwhile must take effect). It is safe for
// concurrent use; its zero value needs File.
//
// A call costs a stat of each file, not a read: a file is read and hashed
// again only when its stamp (size, modification time, inode) changed, or
// while its last read came too soon after its last change for the stamp to
// tell a later change apart (a file system's clock ticks coarsely, so two
// writes of the same size within one tick leave the same stamp).
type Policy struct {
	// File is the policy file.
	File string

	mu      sync.Mutex
	ws      *workspace.View // the engine's view of the workspace, checked each call
	eng     *engine.Engine
	sum     [32]byte // of the policy file the engine was compiled from
	intents [32]byte // of its intents file
	// stamps of the policy file and the intents file as they were hashed.
	polStamp, intStamp stamp
}

// racyWindow is how long after a file's modification time a read of it
// cannot vouch for its stamp: a write within the same tick of the file
// system's clock would leave the same modification time.
const racyWindow = 2 * time.Second

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

// stampOf is the stamp of a file read at read (before) with the info fi
// (taken before the read): trusted once the read came racyWindow after the
// modification time.
func stampOf(fi os.FileInfo, read time.Time) stamp {
	if fi == nil {
		return stamp{}
	}
	return stamp{fi: fi, trust: read.Sub(fi.ModTime()) >= racyWindow}
}

// Engine returns the compiled policy as the file is now. A policy that
// does not load or compile is an error (the gate then denies), also when
// an earlier version did.
func (p *Policy) Engine() (session.Engine, error) {
	eng, err := p.Compiled()
	if err != nil {
		return nil, err
	}
	return eng, nil
}

// Compiled is Engine with the concrete type.
func (p *Policy) Compiled() (*engine.Engine, error) {
	fi, err := os.Stat(p.File)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	p.mu.Lock()
	if p.ws == nil {
		p.ws = workspace.New()
	}
	ws := p.ws
	p.mu.Unlock()
	ws.Refresh()
	p.mu.Lock()
	if p.eng != nil && p.polStamp.same(fi) {
		ifile := intentsFile(p.eng.Policy())
		if ifile == "" {
			defer p.mu.Unlock()
			return p.eng, nil
		}
		if ifi, err := os.Stat(ifile); err == nil && p.intStamp.same(ifi) {
			defer p.mu.Unlock()
			return p.eng, nil
		}
	}
	p.mu.Unlock()
	read := time.Now()
	data, err := policy.ReadOnce(p.File)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	p.mu.Lock()
	same := p.eng != nil && p.sum == sum
	p.mu.Unlock()
	if !same {
		// Only a whole file: a policy being rewritten in place passes
		// through prefixes that load. The bytes compiled last are whole
		// however recent; anything else must settle (policy.ReadStable,
		// the read every front end uses).
		// The stamp is taken before the read, as above.
		read = time.Now()
		if fi, err = os.Stat(p.File); err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		if data, err = policy.ReadStable(p.File); err != nil {
			return nil, err
		}
		sum = sha256.Sum256(data)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.eng != nil && p.sum == sum {
		isum, ist := intentsSum(p.eng.Policy())
		if isum == p.intents {
			p.polStamp, p.intStamp = stampOf(fi, read), ist
			return p.eng, nil
		}
	}
	pol, err := policy.LoadBytes(p.File, data)
	if err != nil {
		return nil, err
	}
	// Hashed before the compile reads it: a change during the compile
	// shows as a change on the next call.
	isum, ist := intentsSum(pol)
	eng, err := engine.Compile(pol, ws)
	if err != nil {
		return nil, fmt.Errorf("compile policy %s: %w", pol.File, err)
	}
	p.eng, p.sum, p.intents = eng, sum, isum
	p.polStamp, p.intStamp = stampOf(fi, read), ist
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

package mcpproxy

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sync"

	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
)

// Policy is a policy file compiled for the proxy, compiled again when the
// file or its intents file changes (a proxy lives as long as its client's
// session, and a policy edited meanwhile must take effect). It is safe for
// concurrent use; its zero value needs File.
type Policy struct {
	// File is the policy file.
	File string

	mu      sync.Mutex
	eng     *engine.Engine
	sum     [32]byte // of the policy file the engine was compiled from
	intents [32]byte // of its intents file
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
	data, err := os.ReadFile(p.File)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	sum := sha256.Sum256(data)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.eng != nil && p.sum == sum && intentsSum(p.eng.Policy()) == p.intents {
		return p.eng, nil
	}
	pol, err := policy.LoadBytes(p.File, data)
	if err != nil {
		return nil, err
	}
	// Hashed before the compile reads it: a change during the compile
	// shows as a change on the next call.
	isum := intentsSum(pol)
	eng, err := engine.Compile(pol)
	if err != nil {
		return nil, fmt.Errorf("compile policy %s: %w", pol.File, err)
	}
	p.eng, p.sum, p.intents = eng, sum, isum
	return eng, nil
}

// intentsSum hashes the policy's intents file (all zero without one).
func intentsSum(p *policy.Policy) [32]byte {
	if p.Intents == nil || p.Intents.File == "" {
		return [32]byte{}
	}
	data, err := os.ReadFile(p.Intents.File)
	if err != nil {
		return sha256.Sum256([]byte("unreadable: " + err.Error()))
	}
	return sha256.Sum256(data)
}

package mcpproxy

import (
	"sync"

	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/gate"
	"github.com/warden-run/warden/session"
)

// Policy is a policy file compiled for the proxy, compiled again when it
// changes by the one reload rule of every front end (gate.Source: its
// content, a file mid-write, its intents file, its report plugins): a
// proxy lives as long as its client's session, and a policy edited
// meanwhile must take effect. It is safe for concurrent use; its zero
// value needs File.
type Policy struct {
	// File is the policy file.
	File string

	once sync.Once
	src  *gate.Source
	err  error
}

// Source is the policy's gate.Source.
func (p *Policy) Source() (*gate.Source, error) {
	p.once.Do(func() { p.src, p.err = gate.NewSource(p.File) })
	return p.src, p.err
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

// Compiled is Engine with the concrete type (gate.Policy).
func (p *Policy) Compiled() (*engine.Engine, error) {
	src, err := p.Source()
	if err != nil {
		return nil, err
	}
	return src.Engine()
}

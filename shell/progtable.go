package shell

import (
	"sync"

	"github.com/warden-run/warden/shell/progs"
)

// progEntry is what add needs to know of a program by its base name,
// gathered from the tables it reads (progs.Lookup, progKinds, setsVars,
// readOnly, readOnlySubs) so that one map lookup per command answers them
// all: each lookup hashes the name again, and the four of them took some
// 8% of a simple command's decision.
type progEntry struct {
	spec     *progs.Spec
	roSubs   map[string]bool // readOnlySubs[name]
	kinds    uint8           // progKinds[name]
	setsVars bool            // setsVars[name]
	readOnly bool            // readOnly[name]
}

var (
	progTableOnce sync.Once
	progTable     map[string]progEntry
)

// lookupProg returns the entry of a program; the zero entry for a program
// none of the tables names. The tables are read once, at the first call
// (the program tables load lazily, progs.Lookup's first call loads them),
// and never change afterwards.
func lookupProg(name string) progEntry {
	progTableOnce.Do(buildProgTable)
	return progTable[name]
}

func buildProgTable() {
	m := map[string]progEntry{}
	for _, n := range progs.Names() {
		e := m[n]
		e.spec = progs.Lookup(n)
		m[n] = e
	}
	for n, k := range progKinds {
		e := m[n]
		e.kinds = k
		m[n] = e
	}
	for n, ok := range setsVars {
		e := m[n]
		e.setsVars = ok
		m[n] = e
	}
	for n, ok := range readOnly {
		e := m[n]
		e.readOnly = ok
		m[n] = e
	}
	for n, subs := range readOnlySubs {
		e := m[n]
		e.roSubs = subs
		m[n] = e
	}
	progTable = m
}

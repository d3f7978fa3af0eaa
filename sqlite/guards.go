package sqlite

import "github.com/warden-run/warden"

// Interface guards: a Store is everything warden keeps, and the session
// layer's store (session.Store asks for a subset of warden.Store: the
// check of it is in the tests, so that this package does not import the
// engine), and it spools.
var (
	_ warden.Store   = (*Store)(nil)
	_ warden.Spooler = (*Store)(nil)
)

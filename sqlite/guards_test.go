package sqlite_test

import (
	"github.com/warden-run/warden/session"
	"github.com/warden-run/warden/sqlite"
)

// A Store is what the session layer decides with: the compiler checks it.
var _ session.Store = (*sqlite.Store)(nil)

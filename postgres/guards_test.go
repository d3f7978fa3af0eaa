package postgres_test

import (
	"github.com/warden-run/warden/postgres"
	"github.com/warden-run/warden/session"
)

// A Store is what the session layer decides with: the compiler checks it.
var _ session.Store = (*postgres.Store)(nil)

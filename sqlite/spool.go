package sqlite

import (
	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/sqlstore"
)

// SpoolFile is the spool file of the store at db.
func SpoolFile(db string) string { return spoolFile(db) }

// spoolFile holds the audit records of a store that could not be written
// to it in time, one JSON object a line, until the store is next opened.
func spoolFile(db string) string { return db + ".pending" }

// Spool appends an audit record (secrets already redacted) to the spool
// file of the store at path and syncs it: a record that a store too busy
// to take it in time must still not lose. Open moves spooled records into
// the store; a record whose CallID the store holds already is dropped.
func Spool(path string, r warden.AuditRecord) error {
	return sqlstore.SpoolRecord(spoolFile(path), r)
}

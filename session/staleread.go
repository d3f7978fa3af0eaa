package session

import "errors"

// staleRead reports a store's refusal to record a decision made on halts
// and grants it kept from an earlier read that changed meanwhile
// (sqlstore.StaleRead, under sqlstore.CachedReads): nothing of the
// decision was written, and the store reads fresh for the call's next
// attempt.
func staleRead(err error) bool {
	var sr interface{ StaleRead() bool }
	return err != nil && errors.As(err, &sr) && sr.StaleRead()
}

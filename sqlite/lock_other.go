//go:build !unix

package sqlite

import "context"

// locked: lockDir excludes no other creator here (they each make a store
// and the first linked into place wins).
const locked = false

func lockDir(context.Context, string, func() bool) (func(), error) { return func() {}, nil }

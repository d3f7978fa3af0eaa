package sqlstore

import "github.com/warden-run/warden"

// sandboxJSON is the audit column of a call's confinement: ” for none.
func sandboxJSON(c *warden.Confinement) string {
	if c == nil {
		return ""
	}
	return toJSON(c)
}

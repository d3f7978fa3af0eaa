package session

import (
	"time"

	"github.com/warden-run/warden"
)

// ShownApprovals are approvals as warden lists them to a person or a
// program (warden approvals ls --json; warden serve's GET /v1/approvals
// can share it): never nil, each with ExpiresAt filled in for the
// lifetime (ApprovalExpiry), and its parts' values redacted again, so
// that a secret a store kept in clear (an old one) is not shown.
func ShownApprovals(list []warden.Approval, lifetime time.Duration) []warden.Approval {
	if list == nil {
		return []warden.Approval{}
	}
	for i := range list {
		list[i].ExpiresAt = ApprovalExpiry(list[i], lifetime)
		parts := make([]warden.GrantPart, len(list[i].Parts))
		for j, p := range list[i].Parts {
			parts[j] = warden.GrantPart{Subject: p.Subject, Value: warden.RedactString(p.Value)}
		}
		list[i].Parts = parts
	}
	return list
}

// ShownGrants are grants as warden lists them (warden grants ls --json,
// GET /v1/grants): never nil, values and patterns redacted again.
func ShownGrants(list []warden.Grant) []warden.Grant {
	if list == nil {
		return []warden.Grant{}
	}
	for i := range list {
		list[i].Value, list[i].Pattern = warden.RedactString(list[i].Value), warden.RedactString(list[i].Pattern)
	}
	return list
}

package warden

import (
	"fmt"
	"strings"
)

// Confinement is how an allowed shell call runs confined by the policy's
// sandbox section (docs/sandbox.md): the settings it runs under, and,
// once a hook has rewritten the call to run under `warden sandbox`, what
// the kernel enforces. A decision carries it for every shell call under a
// policy with sandbox.shell on or required; an ask or deny keeps it for
// the approval that may release the call.
type Confinement struct {
	// Shell is the policy's sandbox.shell: "on" or "required".
	Shell string `json:"shell"`
	// Network is "deny" or "allow"; Ports the TCP ports reachable when
	// it is deny; Writable the policy's extra writable folders.
	Network  string   `json:"network"`
	Ports    []int    `json:"ports,omitempty"`
	Writable []string `json:"writable,omitempty"`
	// Only: the call is allowed only because it runs confined (the
	// policy's default.confined decided a part of it). It may not run
	// unconfined whatever sandbox.shell says.
	Only bool `json:"only,omitempty"`
	// Ran is set by the hook that rewrote the call: it runs under
	// `warden sandbox`. Enforced says what the kernel enforces there
	// ("" when the call did not run confined); Note why not.
	Ran      bool   `json:"ran,omitempty"`
	Enforced string `json:"enforced,omitempty"`
	Note     string `json:"note,omitempty"`
}

// String is the confinement in one line, for the audit trail and explain.
func (c *Confinement) String() string {
	if c == nil {
		return "not confined"
	}
	var b strings.Builder
	if c.Ran {
		b.WriteString("ran confined")
	} else {
		b.WriteString("to run confined")
	}
	fmt.Fprintf(&b, " (sandbox.shell %s, network %s", c.Shell, c.Network)
	if len(c.Ports) > 0 && c.Network != "allow" {
		ports := make([]string, len(c.Ports))
		for i, p := range c.Ports {
			ports[i] = fmt.Sprint(p)
		}
		b.WriteString(" but ports " + strings.Join(ports, ", "))
	}
	if len(c.Writable) > 0 {
		b.WriteString(", also writable: " + strings.Join(c.Writable, ", "))
	}
	b.WriteString(")")
	if c.Only {
		b.WriteString(", allowed only confined (default.confined)")
	}
	if c.Enforced != "" {
		b.WriteString(": " + c.Enforced)
	}
	if c.Note != "" {
		b.WriteString("; " + c.Note)
	}
	return b.String()
}

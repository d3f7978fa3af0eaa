package policy_test

import (
	"strings"
	"testing"
)

// TestRolesDefault: roles.default names the role of a session without
// one; a name no role has is an error at its line; a mapping under
// default is a role called default.
func TestRolesDefault(t *testing.T) {
	p, fs := parse(t, "version: 1\nroles:\n  default: dev\n  dev:\n    tools: [read]\n")
	if len(fs) != 0 || p.DefaultRole != "dev" || p.Roles["default"] != nil {
		t.Errorf("default: %q %v %v", p.DefaultRole, p.Roles, fs)
	}
	_, fs = parse(t, "version: 1\nroles:\n  default: nobody\n  dev:\n    tools: [read]\n")
	if len(fs) == 0 || fs[0].Field != "roles.default" || !strings.Contains(fs[0].String(), ":3:") || !strings.Contains(fs[0].Message, "dev") {
		t.Errorf("unknown default role: %v", fs)
	}
	p, fs = parse(t, "version: 1\nroles:\n  default:\n    tools: [read]\n")
	if len(fs) != 0 || p.DefaultRole != "" || p.Roles["default"] == nil {
		t.Errorf("a role called default: %q %v %v", p.DefaultRole, p.Roles, fs)
	}
}

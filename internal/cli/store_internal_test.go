package cli

import "testing"

// A subcommand's usage is its own form of the command's usage, without
// its name twice (`warden serve token add add ...` was printed).
func TestSubUsage(t *testing.T) {
	for _, c := range []struct{ cmd, sub, usage, want string }{
		{"serve token", "add", "add --kind agent|person NAME | ls | revoke NAME [--policy FILE] [--tokens FILE]", "--kind agent|person NAME"},
		{"serve token", "revoke", "add --kind agent|person NAME | ls | revoke NAME [--policy FILE] [--tokens FILE]", "NAME [--policy FILE] [--tokens FILE]"},
		{"serve token", "ls", "add --kind agent|person NAME | ls | revoke NAME", ""},
		{"approvals", "approve", approvalsUsage, "ID (--once | --session | --always) [--pattern P] [--expires D] [--uses N] [--message M]"},
		{"approvals", "reject", approvalsUsage, "ID --message M"},
		{"grants", "add", grantsUsage, "TOOL (--command CMD | --path FILE | --pattern GLOB | --all) [--role R] [--session S] [--expires D] [--uses N]"},
		{"anchor", "rm", anchorUsage, "ID..."},
		{"anchor", "nope", anchorUsage, "[flags]"},
	} {
		if got := subUsage(c.cmd, c.sub, c.usage); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.cmd, c.sub, got, c.want)
		}
	}
}

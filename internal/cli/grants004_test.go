package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/warden-run/warden/internal/cli"
)

// TestSeed004ApproveForever is seed 004's approve-forever scenario end to
// end through the CLI: an agent's call of an app tool without paths
// (gmail.delete, which the policy does not name) needs approval; the
// human approves the whole tool forever from the grants CLI; every later
// call of that tool is allowed, from any session, by the grant, while
// another tool still asks and a deny rule still denies. Before any agent
// called the tool, its name is refused as a possible slip.
func TestSeed004ApproveForever(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := filepath.Join(dir, "warden.yaml")
	os.WriteFile(pol, []byte(`version: 1
default: ask
rules:
  - id: no-inbox-purge
    effect: deny
    tool: gmail.purge
    message: Purging the inbox loses mail for good.
    suggestion: Delete the messages one by one.
`), 0o644)
	run := func(stdin string, args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := cli.Run(context.Background(), append(args, "--policy", pol), strings.NewReader(stdin), &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, out := run("", "grants", "add", "gmail.delete", "--all"); code != 1 || !strings.Contains(out, "gmail.delete is neither a tool warden knows nor a kind") || !strings.Contains(out, "no agent has called gmail.delete here either") {
		t.Errorf("a tool nobody called: %d %s", code, out)
	}
	call := func(tool, args string) string {
		return `{"tool":"` + tool + `","args":` + args + `,"intent":"delete old emails"}`
	}
	if code, out := run(call("gmail.delete", `{"ids":["1"]}`), "check", "--session", "s1", "--text"); code != 3 || !strings.Contains(out, "APPROVAL REQUIRED") {
		t.Fatalf("the first call: %d %s", code, out)
	}
	code, out := run("", "grants", "add", "gmail.delete", "--all")
	m := regexp.MustCompile(`grant (g-[0-9a-f]+): gmail.delete`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("approve forever: %d %s", code, out)
	}
	for i, args := range []string{`{"ids":["1"]}`, `{"ids":["2","3"]}`, `{}`} {
		if code, out := run(call("gmail.delete", args), "check", "--session", "s"+string(rune('2'+i))); code != 0 || !strings.Contains(out, `"rule": "grant:`+m[1]+`"`) {
			t.Errorf("gmail.delete %s after approve forever: %d %s", args, code, out)
		}
	}
	if code, out := run(call("gmail.send", `{"to":"a@b.org"}`), "check", "--session", "s9"); code != 3 {
		t.Errorf("another tool: %d %s", code, out)
	}
	// A grant never overrides a deny.
	run(call("gmail.purge", `{}`), "check", "--session", "s9")
	if code, out := run("", "grants", "add", "gmail.purge", "--all"); code != 0 {
		t.Fatalf("grant of a denied tool: %d %s", code, out)
	}
	if code, out := run(call("gmail.purge", `{}`), "check", "--session", "s9"); code != 2 || !strings.Contains(out, "no-inbox-purge") {
		t.Errorf("a denied tool with a grant: %d %s", code, out)
	}
	if code, out := run("", "grants", "ls"); code != 0 || !strings.Contains(out, "gmail.delete") || !strings.Contains(out, "call matching *") {
		t.Errorf("grants ls: %d %s", code, out)
	}
}

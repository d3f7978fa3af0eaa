package e2e

import (
	"strings"
	"testing"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/scripted"
)

// servePolicyDeny is servePolicy with a deny rule whose reason the model
// must see.
const servePolicyDeny = servePolicy + `  - id: no-rm
    effect: deny
    tool: shell
    command: ["rm *"]
    message: The team's service blocks deleting files.
    suggestion: Ask a person on the team.
`

// TestServeRealHosts runs each real host headless (claude -p, codex exec,
// gemini -p, opencode run) wired by `warden init HOST --serve URL` to a
// team's warden serve: the service decides every call with its policy, the
// model gets the service's reason for a deny, the allowed command runs,
// and the service's audit trail has both calls under the host's name and
// the agent token's.
func TestServeRealHosts(t *testing.T) {
	t.Parallel()
	dir := serveProject(t, servePolicyDeny)
	person := serveToken(t, dir, "person", "alice")
	s := startServe(t, dir)
	for _, h := range governedHosts {
		t.Run(h.name, func(t *testing.T) {
			bin := requireHost(t, h.spec)
			agent := serveToken(t, dir, "agent", "laptop-"+h.name)
			e := newEnv(t,
				scripted.Turn{Name: "deny", Match: scripted.MinToolResults(0), ToolCalls: []scripted.ToolCall{h.shell("rm victim.txt")}},
				scripted.Turn{Name: "allow", Match: scripted.MinToolResults(1), ToolCalls: []scripted.ToolCall{h.shell("echo served-by-the-team")}},
				scripted.Turn{Name: "final", Match: scripted.MinToolResults(2), Text: "Done."},
			)
			e.vars = append(e.vars, "WARDEN_SERVE_TOKEN="+agent)
			e.write("victim.txt", "precious\n")
			h.setup(e)
			if out, err := e.warden("init", h.name, "--bin", wardenHookBin, "--serve", s.url); err != nil {
				t.Fatalf("warden init %s --serve: %v\n%s", h.name, err, out)
			}
			r := h.run(e, bin, "Tidy up.")
			res := e.lastResults()
			if r.err != nil || len(res) < 2 || !e.exists("victim.txt") || !strings.Contains(res[1].Text, "served-by-the-team") ||
				!strings.Contains(res[0].Text, "The team's service blocks deleting files.") {
				e.dump(r)
				t.Fatalf("err=%v; victim.txt kept %v; results %+v", r.err, e.exists("victim.txt"), res)
			}
			var recs []warden.AuditRecord
			s.call("GET", "/v1/audit?agent=laptop-"+h.name+"&tool="+h.tool, person, nil, &recs)
			var got []string
			for _, rec := range recs {
				got = append(got, string(rec.Decision)+" "+rec.Rule+" "+rec.Host)
			}
			if len(got) != 2 || got[0] != "deny no-rm "+h.name || !strings.HasPrefix(got[1], "allow ") {
				t.Errorf("the service's audit of %s's calls: %q", h.name, got)
			}
		})
	}
}

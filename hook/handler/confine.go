package handler

import (
	"encoding/hex"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/hook"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/sandbox"
)

// Every allowed shell call runs confined under a policy with sandbox.shell
// on or required (docs/sandbox.md): the hook answers the allow with the
// host's input rewrite, the command line replaced by one that runs it,
// byte for byte, under the lean runner warden-sandbox on a spec file the
// hook writes, started by unshare where it can be (sandbox.RewriteInside,
// else sandbox.RewriteSpec; docs/sandbox.md, "Speed"), or under
// `warden sandbox` where warden-sandbox is not next to warden
// (sandbox.Rewrite). A call an
// approval or a grant released is an allow here too, and an ask the
// host's own prompt shows carries the rewrite, so that what the user
// approves runs confined.

// kernel is what this machine offers, probed once per process (hookd
// runs for hours; the kernel does not change under it).
var kernel = sync.OnceValue(sandbox.Probe)

// wardenExe is warden's own binary, resolved once per process: what a
// rewritten line runs when there is no lean runner next to it.
var wardenExe = sync.OnceValues(sandbox.Executable)

// specRunner is the lean runner (warden-sandbox) next to warden, "" when
// there is none; looked up once per process (a variable for tests).
var specRunner = sync.OnceValue(func() string {
	exe, err := wardenExe()
	if err != nil {
		return ""
	}
	return sandbox.Runner(exe)
})

// specs derives the confinement of the policies this process decides
// under and keeps the walk of each workspace between calls (hookd keeps
// it for hours, and watches the folders: WatchWorkspaces; a one-shot
// warden hook for its one call).
var specs = sandbox.NewSpecs()

// WatchWorkspaces makes this process watch the folders of the workspaces
// whose confinement it derives (sandbox.Specs.Watch), so that a call
// checks only the folders that changed since the last: for a process
// that answers many calls (hookd), not a one-shot hook.
func WatchWorkspaces() { specs.Watch() }

// confinedNote tells the model, with each confined command, what the
// sandbox refuses and what to do instead.
const confinedNote = "This command runs confined by warden's sandbox: it may write only in the workspace and the temp folders " +
	"(not the policy, .warden, .git hooks and config, or the agents' settings folders), cannot read private files (.env, ~/.ssh, " +
	"the policy's private paths: they look empty), and has no network except the policy's ports. \"Permission denied\", " +
	"\"Read-only file system\", \"Operation not permitted\" or \"Network is unreachable\" from it come from the sandbox, not from a bug: " +
	"do not retry or work around them; use the edit tools for workspace files, or ask the user to run the command or change the policy."

// confineAnswer rewrites an allowed shell call of a to run confined, or,
// when it must run confined and cannot, turns the allow into a deny that
// says why. prompts reports whether the host shows its own prompt for an
// ask (which then carries the rewrite).
func confineAnswer(ev hook.Event, a *hook.Answer, pol *policy.Policy, prompts bool) {
	if a.Decision != nil {
		a.Input = prepareConfined(ev, a.Decision, pol, prompts, false)
	}
}

// confiner prepares a call's confinement for the session layer, which
// records it with the decision (session.Options.Confine), and gives the
// answer the input rewrite prepared then.
type confiner struct {
	ev      hook.Event
	pol     *policy.Policy
	prompts bool
	// remote: the answer goes to a hook on another machine (warden serve).
	remote bool
	// done: the decision recorded was prepared; d and input are it.
	done  bool
	d     warden.Decision
	input map[string]any
}

// confine is session.Options.Confine.
func (c *confiner) confine(d *warden.Decision) {
	c.input = prepareConfined(c.ev, d, c.pol, c.prompts, c.remote)
	c.done, c.d = true, *d
}

// answer gives a the input rewrite: the one prepared for the record when
// the decision is still the one recorded, else one prepared now (an
// approval that released the call after the record, a replay).
func (c *confiner) answer(a *hook.Answer) {
	d := a.Decision
	if d == nil {
		return
	}
	if c.done && d.Decision == c.d.Decision && d.Sandbox == c.d.Sandbox {
		if d.Decision != warden.Deny {
			a.Input = c.input
		}
		return
	}
	again(d)
	a.Input = prepareConfined(c.ev, d, c.pol, c.prompts, c.remote)
}

// again readies a decision read back from the audit trail (a replayed
// call, a late answer given from the record) to be confined once more:
// the record says the call ran confined because its first answer carried
// the rewrite, and this answer must carry it too, or the host runs the
// call unconfined. The sandbox's own warnings go, as prepareConfined
// gives them again.
func again(d *warden.Decision) {
	if d.Sandbox == nil || !d.Sandbox.Ran {
		return
	}
	sb := *d.Sandbox
	sb.Ran, sb.Enforced = false, ""
	d.Sandbox = &sb
	ws := d.Warnings[:0:0]
	for _, w := range d.Warnings {
		if w != confinedNote && !strings.HasPrefix(w, "Sandbox: ") {
			ws = append(ws, w)
		}
	}
	d.Warnings = ws
}

// prepareConfined makes d's confinement final and returns the input
// rewrite that runs the call confined, or nil: when the call must run
// confined and cannot, d becomes a deny that says why. remote: the answer
// goes to a hook on another machine (a call to warden serve), where this
// machine's paths of warden and the policy do not hold.
func prepareConfined(ev hook.Event, d *warden.Decision, pol *policy.Policy, prompts, remote bool) map[string]any {
	if ev.Kind != hook.PreTool || d == nil || d.Sandbox == nil || d.Mode == "audit" || d.Sandbox.Ran {
		return nil
	}
	if d.Decision != warden.Allow && (d.Decision != warden.Ask || !prompts) {
		return nil
	}
	sb := *d.Sandbox
	d.Sandbox = &sb
	// A call allowed only because it runs confined may not run
	// unconfined, unless a human approved it (they vouch for it).
	only := sb.Only && !strings.HasPrefix(d.Rule, "approval:")
	must := sb.Shell == policy.SandboxRequired || only
	// cannot says why the call cannot run confined: when it must, a deny
	// (or, for a call only the confined default allowed, the ask of a
	// host that prompts: the user decides, as default.destructive would
	// have them), else it runs as it would without the sandbox, with a
	// warning.
	cannot := func(why string) {
		sb.Note = why
		if must {
			refuse(d, why, prompts && sb.Shell != policy.SandboxRequired)
			return
		}
		d.Warnings = append(slicesClone(d.Warnings), "This command runs unconfined: "+why+".")
	}
	if remote {
		cannot("it was decided by a warden serve on another machine, which cannot name the paths of warden and the policy on this one (run the hook locally to confine commands)")
		return nil
	}
	key, line := commandArg(ev.Call.Args)
	if key == "" {
		if _, typed := ev.Call.Args["chars"]; typed {
			return nil // input typed into a running command, which was started confined or not
		}
		cannot("its command is not one line of text that warden can rewrite to run confined")
		return nil
	}
	plan, err := sandbox.Spec{NetworkDeny: sb.Network != "allow", Required: must}.Plan(kernel())
	if err != nil {
		cannot(strings.TrimSuffix(err.Error(), "."))
		return nil
	}
	if !plan.Confined() {
		cannot("this machine offers no mechanism to confine it (" + kernel().String() + ")")
		return nil
	}
	if ev.Call.Host == "codex" {
		if v := codexTooOld(); v != "" {
			cannot("Codex " + v + " does not run a hook's rewrite of a call (Codex 0.131 or later does; upgrade Codex)")
			return nil
		}
	}
	if ev.NoRewrite {
		cannot("the OpenCode plugin is older than warden's rewrite of calls to run confined (run `warden init opencode` to update it)")
		return nil
	}
	exe, err := wardenExe()
	if err != nil {
		cannot(err.Error())
		return nil
	}
	if inner, ok := sandbox.Unwrap(exe, specRunner(), line); ok {
		// Sent again with the rewritten input: run the original line
		// under this decision's confinement, not a sandbox in a sandbox.
		line = inner
	}
	digest := hex.EncodeToString(pol.Digest[:])
	var rw string
	// The lean runner on a spec written now: the run loads no policy and
	// starts no warden. Without it (warden alone, `go install`), or when
	// the spec cannot be written, `warden sandbox` derives the
	// confinement itself when the line runs.
	if runner := specRunner(); runner != "" {
		if prep, perr := specs.Prepare(pol, digest); perr == nil {
			if u := sandbox.Unshare(); u != "" && plan.Mounts && ev.Call.Host != "codex" && !unshareRefusedHere(pol) {
				// One process: unshare starts the runner in the
				// namespaces it confines itself in. Not for Codex,
				// whose own sandbox (on by default) refuses user
				// namespaces to what it runs: there the runner
				// alone confines with what is left (sandbox.shell:
				// on) or says why it cannot (required). Nor where
				// unshare failed before (unshareRefusedHere).
				rw, err = sandbox.RewriteInside(u, runner, prep.File, prep.Sum, must, line)
			} else {
				rw, err = sandbox.RewriteSpec(runner, prep.File, prep.Sum, must, line)
			}
			plan.Warnings = append(plan.Warnings, prep.Spec.Warnings...)
		}
	}
	if rw == "" && err == nil {
		rw, err = sandbox.Rewrite(exe, pol.File, digest, must, line)
	}
	if err != nil {
		cannot("it cannot be rewritten to run confined: " + err.Error())
		return nil
	}
	in := maps.Clone(ev.Call.Args)
	in[key] = rw
	sb.Ran, sb.Enforced = true, plan.String()
	d.Warnings = append(slicesClone(d.Warnings), confinedNote)
	for _, w := range plan.Warnings {
		d.Warnings = append(d.Warnings, "Sandbox: "+w)
	}
	return in
}

// refuse turns d into the deny of a call that may run only confined, or
// into an ask for the host's prompt.
func refuse(d *warden.Decision, why string, ask bool) {
	reason := "This command may run only confined by warden's sandbox"
	if d.Sandbox != nil && d.Sandbox.Only {
		reason += " (warden cannot fully judge it, and the policy allows such commands only confined)"
	} else {
		reason += " (sandbox.shell is required)"
	}
	d.Decision = warden.Deny
	if ask {
		d.Decision = warden.Ask
	}
	if d.Code == "" || d.Code == warden.CodeAllowed {
		d.Code = warden.CodeDefault
	}
	d.Reason = reason + ", and " + why + ". Nothing was run."
	d.Suggestion = "Use a command the policy allows by a rule, or ask the user to run it; `warden doctor` shows what this machine can confine."
	d.Recoverable = true
}

// commandArg finds the command line of a shell call: its key and text.
func commandArg(args map[string]any) (string, string) {
	for _, k := range []string{"command", "cmd"} {
		if s, ok := args[k].(string); ok {
			return k, s
		}
	}
	return "", ""
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// confineOnRecord is confineAnswer for a decision read back from the
// audit trail after a failure (failureAnswer): the policy is loaded from
// file; a policy that does not load leaves no way to confine the call,
// which is then denied.
func confineOnRecord(ev hook.Event, a *hook.Answer, file string, prompts, remote bool) {
	d := a.Decision
	if d == nil || d.Sandbox == nil || d.Decision == warden.Deny {
		return
	}
	pol, err := policy.LoadStable(file)
	if err != nil {
		sb := *d.Sandbox
		d.Sandbox = &sb
		refuse(d, "its policy could not be loaded to confine it ("+err.Error()+")", false)
		return
	}
	again(d)
	a.Input = prepareConfined(ev, d, pol, prompts, remote)
}

// remoteRuntime reports whether rt answers a hook on another machine:
// warden serve's runtime names the agent token and the answer page.
func remoteRuntime(rt *Runtime) bool { return rt.Agent != "" || rt.AnswerAt != "" }

// sandboxErrors are what a confined command prints when the sandbox
// refuses it something.
var sandboxErrors = []string{"Read-only file system", "Permission denied", "Operation not permitted", "Network is unreachable",
	"Device or resource busy", "Invalid cross-device link"}

// unshareRefused are what unshare prints when the machine, or a sandbox
// around the shell, refuses the namespaces of RewriteInside's line.
var unshareRefused = []string{"unshare: unshare failed", "unshare: write failed /proc/self/"}

// unshareNote tells the model why a command under unshare did not run.
const unshareNote = "warden's sandbox could not start for this command: the machine, or a sandbox around the shell, refused the user namespace it needs, so the command did not run. " +
	"Run it again as it was: warden now starts it so that it is confined with what this machine allows, or says why it cannot run here."

// unshareMarker is the file, in the policy's spec folder, whose presence
// says that a line under unshare failed here (the hook's probe cannot see
// a sandbox around the host's shell): for unshareMarkerAge, rewrites
// start the runner alone, which confines with what is left under
// sandbox.shell: on and says why it cannot under required.
func unshareMarker(pol *policy.Policy) string {
	return filepath.Join(pol.Dir, policy.StoreDir, sandbox.SpecDir, "unshare-refused")
}

const unshareMarkerAge = 24 * time.Hour

func unshareRefusedHere(pol *policy.Policy) bool {
	fi, err := os.Stat(unshareMarker(pol))
	return err == nil && time.Since(fi.ModTime()) < unshareMarkerAge
}

// confinedAfter adds, after a confined command whose output shows one of
// the sandbox's refusals, the text that says why to the context for the
// model; after a line under unshare that unshare could not start, it
// says so, and marks the workspace so that the next rewrites do without
// unshare (unshareMarker).
func confinedAfter(ev hook.Event, pol *policy.Policy, context string) string {
	_, line := commandArg(ev.Call.Args)
	if line == "" || !strings.Contains(line, " sandbox --policy ") && !strings.Contains(line, " --spec ") {
		return context
	}
	exe, err := wardenExe()
	if err != nil {
		return context
	}
	if !sandbox.IsRewritten(exe, line) {
		if _, ok := sandbox.Unwrap(exe, specRunner(), line); !ok {
			return context
		}
	}
	if sandbox.IsInsideRewrite(line) {
		for _, s := range unshareRefused {
			if strings.Contains(ev.Output, s) {
				m := unshareMarker(pol)
				if os.MkdirAll(filepath.Dir(m), 0o755) == nil {
					os.WriteFile(m, []byte(s+"\n"), 0o644)
				}
				return strings.TrimSpace(context + "\n\nwarden: " + unshareNote)
			}
		}
	}
	for _, s := range sandboxErrors {
		if strings.Contains(ev.Output, s) {
			return strings.TrimSpace(context + "\n\nwarden: " + confinedNote)
		}
	}
	return context
}

package mcpproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/sandbox"
	"github.com/warden-run/warden/sandbox/confine"
)

// ServerStartTool is the tool name of the audit record `warden mcp proxy`
// writes when it starts a stdio server: whether the server runs confined,
// under which settings, or unconfined and why (--no-sandbox, sandbox.shell
// off), or that it was refused.
const ServerStartTool = "warden_mcp_server_start"

// Upstream is how a stdio MCP server is started (Command).
type Upstream struct {
	// Argv is the server's program and arguments.
	Argv []string
	// Name, Session and Role name the server, the proxy's session and
	// role in the start's audit record.
	Name, Session, Role string
	// PolicyFile is the policy the proxy decides with ("" when a service
	// decides: then the policy here, if there is one, confines).
	PolicyFile string
	// Store receives the audit record of the start (nil: no local store).
	Store warden.Store
	// NoSandbox runs the server unconfined (--no-sandbox), recorded.
	NoSandbox bool
	// Exe is the confining program (sandbox/confine.Helper: the helper
	// next to warden, else warden itself).
	Exe string
	// Log receives what is not enforced and why.
	Log io.Writer
}

// Command builds the command of the stdio MCP server: confined by the
// policy's sandbox settings (docs/sandbox.md) when sandbox.shell is on or
// required and NoSandbox is not set. It writes the audit record of the
// start (ServerStartTool) to the store when there is one, and says on Log
// what is not enforced. An error means the server must not start
// (required and the kernel cannot confine, a workspace that does not
// exist).
func (u Upstream) Command(ctx context.Context) (*exec.Cmd, error) {
	st, policyFile, session, role, name, argv, noSandbox := u.Store, u.PolicyFile, u.Session, u.Role, u.Name, u.Argv, u.NoSandbox
	stderr := u.Log
	if stderr == nil {
		stderr = io.Discard
	}
	rec := warden.AuditRecord{Role: role, Host: "mcp", Tool: ServerStartTool, Mode: "enforce", Decision: warden.Allow, Code: warden.CodeAllowed}
	args := map[string]any{"server": name, "command": strings.Join(argv, " "), "session": session}
	record := func() {
		if st == nil {
			return
		}
		rec.Args = warden.RedactArgsCut(args, 4000)
		if _, err := st.AppendAudit(context.WithoutCancel(ctx), rec); err != nil {
			fmt.Fprintf(stderr, "warden mcp proxy: record the server's start in the audit trail: %v\n", err)
		}
	}
	plain := func() *exec.Cmd { return exec.Command(argv[0], argv[1:]...) }
	var pol *policy.Policy
	if policyFile == "" {
		if wd, err := os.Getwd(); err == nil {
			policyFile, _ = policy.Find(wd)
		}
	}
	if policyFile != "" {
		p, err := policy.Load(policyFile)
		if err != nil {
			return nil, err
		}
		pol = p
	}
	switch {
	case noSandbox:
		args["sandbox"] = "off: --no-sandbox"
		rec.Reason = "the MCP server runs unconfined: the proxy was started with --no-sandbox"
		if pol != nil && pol.Sandbox.Required() {
			rec.Warnings = append(rec.Warnings, "sandbox.shell is required, and --no-sandbox overrides it for this server")
		}
		fmt.Fprintf(stderr, "warden mcp proxy: %s\n", rec.Reason)
		if st == nil {
			fmt.Fprintln(stderr, "warden mcp proxy: warning: no local store (the service decides), so --no-sandbox is not in an audit trail")
		}
		record()
		return plain(), nil
	case pol == nil:
		args["sandbox"] = "off: no policy here"
		rec.Reason = "the MCP server runs unconfined: no policy here to derive the confinement from"
		fmt.Fprintf(stderr, "warden mcp proxy: %s\n", rec.Reason)
		record()
		return plain(), nil
	case !pol.Sandbox.Confine():
		args["sandbox"] = "off: sandbox.shell is off"
		rec.Reason = "the MCP server runs unconfined: the policy's sandbox.shell is off"
		record()
		return plain(), nil
	}
	spec, err := sandbox.FromPolicy(pol, "")
	if err == nil {
		var cmd *exec.Cmd
		var plan sandbox.Plan
		// The proxy ends the server itself (StartServer): no context that
		// would kill it at once.
		cmd, plan, err = spec.Command(context.WithoutCancel(ctx), u.Exe, argv)
		if err == nil {
			for _, w := range plan.Warnings {
				fmt.Fprintf(stderr, "warden mcp proxy: warning: %s\n", w)
			}
			if plan.Confined() {
				// A session of its own (Setsid) leads a process group
				// already; the kernel kills it when the proxy dies.
				killWithParent(cmd)
				args["sandbox"] = "confined: " + plan.String()
				rec.Reason = "the MCP server runs confined: " + plan.String()
			} else {
				args["sandbox"] = "off: the kernel cannot confine"
				rec.Reason = "the MCP server runs unconfined: the kernel offers no mechanism to confine it with"
				cmd = plain()
			}
			args["network"] = map[bool]string{true: "deny", false: "allow"}[spec.NetworkDeny]
			if len(spec.Ports) > 0 {
				args["ports"] = spec.Ports
			}
			rec.Warnings = append(rec.Warnings, plan.Warnings...)
			record()
			return cmd, nil
		}
	}
	// Not started: required and the kernel cannot, or the workspace is
	// gone.
	rec.Decision, rec.Code = warden.Deny, warden.CodePolicyError
	rec.Reason = "the MCP server was not started: " + err.Error()
	args["sandbox"] = "refused"
	record()
	if errors.Is(err, confine.ErrStale) {
		return nil, err
	}
	return nil, fmt.Errorf("the server cannot run confined, so it was not started: %w (give --no-sandbox to run it unconfined, recorded in the audit trail)", err)
}

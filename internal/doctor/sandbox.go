package doctor

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/sandbox"
	"github.com/warden-run/warden/sandbox/confine"
)

// Exe is the confining program the live proof runs through (the helper
// next to warden when installed, else warden itself): a variable for
// tests, whose own binary is not warden.
var Exe = confine.Helper

// Sandbox reports the sandbox of the policy in root: what the
// kernel offers (kernel), what a confined command gets under the policy
// (sandbox), and a live proof (confine): a confined write to a protected
// path and a confined read of a private path, both refused, in a scratch
// workspace with the same mechanisms (nothing of the user's is written).
func Sandbox(ctx context.Context, root string) []Check {
	k := sandbox.Probe()
	out := []Check{{"kernel", true, k.String()}}
	file, err := policy.Find(root)
	if err != nil {
		return out // the policy check says why
	}
	pol, err := policy.Load(file)
	if err != nil {
		return out
	}
	mode := pol.Sandbox.Mode()
	spec, err := sandbox.FromPolicy(pol, "")
	if err != nil {
		return append(out, Check{"sandbox", false, fmt.Sprintf("the confinement of %s cannot be derived: %v", file, err)})
	}
	plan, perr := spec.Plan(k)
	var text string
	ok := true
	switch {
	case perr != nil:
		ok, text = false, perr.Error()
	case !pol.Sandbox.Confine():
		text = fmt.Sprintf("sandbox.shell is off: allowed shell commands run unconfined (set sandbox.shell: on or required; docs/sandbox.md). Under on they would get: %s", plan)
	default:
		text = fmt.Sprintf("sandbox.shell: %s; a confined command gets: %s; %d protected path(s) read-only, %d private path(s) hidden", mode, plan, len(spec.ReadOnly), len(spec.Hidden))
		if spec.NetworkDeny && plan.Network {
			text += fmt.Sprintf("; TCP only to loopback ports %v", spec.Ports)
		}
		if len(plan.Warnings) > 0 {
			text += "; not enforced here: " + strings.Join(plan.Warnings, "; ")
		}
	}
	out = append(out, Check{"sandbox", ok, text})
	err = sandboxProof(ctx, k)
	var np noProof
	switch {
	case err == nil:
		return append(out, Check{"confine", true, "live: a confined write to a protected file (the policy) and a confined read of a private file (.env) were both refused"})
	case !pol.Sandbox.Confine():
		// Nothing relies on the sandbox: said, not failed.
		return append(out, Check{"confine", true, "sandbox.shell is off; " + err.Error()})
	case errors.As(err, &np):
		// Under on, commands run with what the kernel offers (the
		// sandbox check says what); under required they do not run.
		return append(out, Check{"confine", !pol.Sandbox.Required(), err.Error()})
	}
	return append(out, Check{"confine", false, err.Error()})
}

// noProof is the error of a live proof that could not be given (the
// kernel lacks the mechanism, a scratch folder could not be made), as
// opposed to one that ran and failed.
type noProof struct{ msg string }

func (e noProof) Error() string { return "no live proof: " + e.msg }

func noProofErr(format string, a ...any) error { return noProof{fmt.Sprintf(format, a...)} }

// sandboxProof runs one confined command in a scratch workspace (a git
// repository, a policy, a .env file holding a fresh secret) that appends
// to the policy and prints the .env file, and checks the effects: the
// policy's bytes unchanged, the secret in no output. Its error says which
// refusal failed.
func sandboxProof(ctx context.Context, k sandbox.Kernel) error {
	if k.LandlockABI == 0 && !k.UserNS {
		return noProofErr("the kernel offers no mechanism to confine with (%s)", k)
	}
	ws, err := os.MkdirTemp("", "warden-doctor-sandbox-")
	if err != nil {
		return noProofErr("%v", err)
	}
	defer os.RemoveAll(ws)
	buf := make([]byte, 16)
	rand.Read(buf)
	secret := "warden-doctor-secret-" + hex.EncodeToString(buf)
	polFile := filepath.Join(ws, policy.FileName)
	polText := []byte("version: 1\nsandbox: {shell: required}\n")
	if err := os.WriteFile(polFile, polText, 0o644); err != nil {
		return noProofErr("%v", err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".env"), []byte("TOKEN="+secret+"\n"), 0o600); err != nil {
		return noProofErr("%v", err)
	}
	pol, err := policy.Load(polFile)
	if err != nil {
		return noProofErr("%v", err)
	}
	spec, err := sandbox.FromPolicy(pol, "")
	if err != nil {
		return noProofErr("%v", err)
	}
	// The proof needs the mount namespace (the paths are inside the
	// workspace); what else the kernel lacks the sandbox check says.
	spec.Required = false
	plan, err := spec.Plan(k)
	if err != nil || !plan.Mounts {
		return noProofErr("protected and private paths inside a workspace need user namespaces (%s)", k)
	}
	const done = "warden-doctor-probe-ran"
	script := `printf 'tampered\n' >> "$1" 2>/dev/null; cat "$2" 2>/dev/null; echo ` + done
	cmd, _, err := spec.Command(ctx, Exe(), []string{"/bin/sh", "-c", script, "sh", polFile, filepath.Join(ws, ".env")})
	if err != nil {
		return fmt.Errorf("the live proof did not start: %v", err)
	}
	cmd.Dir = ws
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	runErr := cmd.Run()
	got, _ := os.ReadFile(polFile)
	switch {
	case !bytes.Equal(got, polText):
		return fmt.Errorf("a confined command wrote to the protected policy file of a scratch workspace: the sandbox does not hold on this machine (%s); report it", plan)
	case strings.Contains(output.String(), secret):
		return fmt.Errorf("a confined command read the private .env file of a scratch workspace: the sandbox does not hold on this machine (%s); report it", plan)
	case runErr != nil || !strings.Contains(output.String(), done):
		return fmt.Errorf("the live proof did not run to its end (%v): %s", runErr, firstLines(output.String(), 3))
	}
	return nil
}

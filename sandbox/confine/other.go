//go:build !linux

package confine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
)

// Probe reports what the running system offers: on this system, nothing
// yet (docs/sandbox.md describes the macOS design).
func Probe() Kernel { return Kernel{OS: runtime.GOOS} }

// Command runs argv unconfined, with a warning in the plan, unless s is
// Required (then an error).
func (s Spec) Command(ctx context.Context, exe string, argv []string) (*exec.Cmd, Plan, error) {
	if len(argv) == 0 {
		return nil, Plan{}, errors.New("no program to run")
	}
	if err := s.Check(); err != nil {
		return nil, Plan{}, err
	}
	plan, err := s.Plan(Probe())
	if err != nil {
		return nil, Plan{}, err
	}
	return exec.CommandContext(ctx, argv[0], argv[1:]...), plan, nil
}

// Run runs argv as Command builds it and returns its exit code.
func (s Spec) Run(ctx context.Context, exe string, argv []string) (int, Plan, error) {
	cmd, plan, err := s.Command(ctx, exe, argv)
	if err != nil {
		return ExitSetup, Plan{}, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		return ExitNotFound, plan, err
	}
	return cmd.ProcessState.ExitCode(), plan, nil
}

// IsChild reports whether args are the confining child's.
func IsChild(args []string) bool { return len(args) > 0 && args[0] == ChildArg }

// ChildMainInit is ChildMain.
func ChildMainInit(args []string) int { return ChildMain(args) }

// ChildMain is not used on this system.
func ChildMain(args []string) int {
	fmt.Fprintln(os.Stderr, "warden sandbox: no confining child on", runtime.GOOS)
	return ExitSetup
}

func runInside(s Spec, argv []string, stderr io.Writer, lock bool) int {
	fmt.Fprintf(stderr, "%s: %s works only on Linux; nothing was run\n", HelperName, InsideArg)
	return ExitSetup
}

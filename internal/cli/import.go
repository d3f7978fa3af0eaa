package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/warden-run/warden/host"
	"github.com/warden-run/warden/host/kit"
	"github.com/warden-run/warden/importer"
	"github.com/warden-run/warden/policy"
	"go.yaml.in/yaml/v3"
)

func runImport(ctx context.Context, env *Env) int {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	out := fs.String("o", "", "write the policy to this `file` instead of stdout (never overwritten)")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "Usage: warden import claude|opencode|gemini|codex FILE [-o warden.yaml]\n\n"+
			"  claude    .claude/settings.json (permissions.allow/ask/deny), or a subagent file\n"+
			"            .claude/agents/NAME.md (its tools become a role)\n"+
			"  opencode  opencode.json (permission, and each agent's permission and tools as a role)\n"+
			"  gemini    a Gemini CLI policy TOML file ([[rule]])\n"+
			"  codex     a Codex rules file (prefix_rule)\n\n"+
			"Every rule gets a comment saying where it came from; what cannot be carried over is\n"+
			"listed as a warning on stderr and at the top of the policy.")
		fs.PrintDefaults()
	}
	if len(env.Args) < 1 {
		fs.Usage()
		return ExitError
	}
	if isHelp(env.Args[0]) {
		fs.Usage()
		return ExitOK
	}
	h, _ := host.Lookup(env.Args[0])
	imp, ok := h.(kit.Importer)
	if !ok {
		fmt.Fprintf(env.Stderr, "warden import: unknown host %q (want %s)\n", env.Args[0], importerNames())
		return ExitError
	}
	// Flags may come before or after FILE.
	var files []string
	for rest := env.Args[1:]; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return ExitOK
			}
			return ExitError
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(files) != 1 {
		fmt.Fprintln(env.Stderr, "warden import: want exactly one FILE to import")
		return ExitError
	}
	file := files[0]
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(env.Stderr, "warden import: %v\n", err)
		return ExitError
	}
	pol, err := imp.Import(importer.Source{File: file, Data: data, YAML: yaml.Unmarshal})
	if err != nil {
		fmt.Fprintf(env.Stderr, "warden import: %v\n", err)
		return ExitError
	}
	text := pol.YAML(policy.BuiltinKinds)
	// The result must load: check it as if it were written next to the
	// imported file.
	dest := *out
	if dest == "" {
		dest = filepath.Join(filepath.Dir(file), policy.FileName)
	}
	abs, _ := filepath.Abs(dest)
	if _, findings := policy.Parse(abs, text); importHasErrors(findings) {
		fmt.Fprintf(env.Stderr, "warden import: the imported policy does not load (a bug in warden import):\n")
		for _, f := range findings {
			fmt.Fprintf(env.Stderr, "  %s\n", f)
		}
		return ExitError
	}
	for _, w := range pol.Warnings {
		fmt.Fprintf(env.Stderr, "warden import: warning: %s\n", w)
	}
	if *out == "" {
		env.Stdout.Write(text)
		return ExitOK
	}
	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		fmt.Fprintf(env.Stderr, "warden import: %s exists; warden will not overwrite it (choose another -o, or merge by hand)\n", *out)
		return ExitError
	}
	if err == nil {
		_, err = f.Write(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "warden import: %v\n", err)
		return ExitError
	}
	fmt.Fprintf(env.Stdout, "warden import: wrote %s (%d rules, %d warnings)\n", *out, len(pol.Rules), len(pol.Warnings))
	return ExitOK
}

func importHasErrors(findings []policy.Finding) bool {
	for _, f := range findings {
		if f.Severity == policy.SevError {
			return true
		}
	}
	return false
}

// importerNames lists the hosts `warden import` reads.
func importerNames() string {
	var names []string
	for _, h := range host.All() {
		if _, ok := h.(kit.Importer); ok {
			names = append(names, h.Name())
		}
	}
	return strings.Join(names, ", ")
}

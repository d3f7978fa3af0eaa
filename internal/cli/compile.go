package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/warden-run/warden/compile"
)

func runCompile(ctx context.Context, env *Env) int {
	fs := newFlags(env, "compile", "RULES.md [--policy FILE] [--write] | --check [RULES.md]")
	policyPath := fs.String("policy", "", "policy file (default: warden.yaml here or in the nearest parent folder)")
	baseURL := fs.String("base-url", compile.Getenv(compile.BaseURLEnv...), "OpenAI-compatible API base URL, e.g. http://127.0.0.1:11434/v1 for Ollama (env WARDEN_LLM_BASE_URL)")
	model := fs.String("model", compile.Getenv(compile.ModelEnv...), "model name (env WARDEN_LLM_MODEL)")
	keyEnv := fs.String("api-key-env", "", "environment variable holding the API key (default WARDEN_LLM_API_KEY, then OPENAI_API_KEY); the key itself is never a flag")
	timeout := fs.Duration("timeout", 2*time.Minute, "how long one model call may take")
	repairs := fs.Int("repairs", 2, "repair requests per rule after the first answer (0: none)")
	write := fs.Bool("write", false, "write the policy when every rule compiled (default: show the diff only)")
	check := fs.Bool("check", false, "ask no model: verify the compiled rules still match RULES.md and were not edited (for CI)")
	fresh := fs.Bool("fresh", false, "ask the model again for rules compiled before")
	widen := fs.Bool("allow-widen", false, "accept compiled rules that allow calls the policy now asks about")
	weaken := fs.Bool("allow-weaken-deny", false, "accept compiled rules that turn calls the policy now denies into ask or allow")
	quiet := fs.Bool("q", false, "no progress lines")
	// Flags may come before or after the rules file.
	var files []string
	for args := env.Args; ; {
		if code := parseFlags(fs, args); code >= 0 {
			return code
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) > 1 {
		fmt.Fprintf(env.Stderr, "warden compile: one rules file, not %d (%s)\n", len(files), strings.Join(files, ", "))
		return ExitError
	}
	rulesFile := ""
	if len(files) == 1 {
		rulesFile = files[0]
	}
	if *policyPath == "" {
		p, err := findPolicy()
		if err != nil {
			fmt.Fprintf(env.Stderr, "warden compile: %v\n", err)
			return ExitError
		}
		*policyPath = p
	}
	if *check {
		if err := compile.Check(*policyPath, rulesFile); err != nil {
			fmt.Fprintf(env.Stderr, "warden compile --check: %v\n", err)
			return ExitError
		}
		fmt.Fprintf(env.Stdout, "%s: the compiled rules match their sources\n", *policyPath)
		return ExitOK
	}
	if rulesFile == "" {
		fmt.Fprintf(env.Stderr, "warden compile: name the plain-language rules file (warden compile RULES.md)\n")
		return ExitError
	}
	opt := compile.Options{MaxRepairs: *repairs, AllowWiden: *widen, AllowWeakenDeny: *weaken, Fresh: *fresh}
	if *repairs == 0 {
		opt.MaxRepairs = -1
	}
	if !*quiet {
		opt.Progress = env.Stderr
	}
	var err error
	if opt.Model, err = compile.NewModel(*baseURL, *model, *keyEnv, *timeout); err != nil {
		fmt.Fprintf(env.Stderr, "warden compile: %v\n", err)
		return ExitError
	}
	res, err := compile.Compile(ctx, *policyPath, rulesFile, opt)
	if err != nil {
		fmt.Fprintf(env.Stderr, "warden compile: %v\n", err)
		if res != nil && res.Calls > 0 {
			fmt.Fprintf(env.Stderr, "%d model calls, %d tokens (%d in, %d out) before it stopped\n", res.Calls,
				res.PromptTokens+res.CompletionTokens, res.PromptTokens, res.CompletionTokens)
		}
		fmt.Fprintf(env.Stderr, "nothing written\n")
		return ExitError
	}
	out := env.Stdout
	switch {
	case res.Diff != "":
		fmt.Fprintf(out, "%s\n", res.Diff)
	case res.OK():
		fmt.Fprintf(out, "no change to %s\n", res.PolicyFile)
	}
	for _, l := range res.Loosened {
		fmt.Fprintf(out, "accepted by flag: %s\n", l)
	}
	for _, f := range res.Failures {
		what := "FAIL"
		if f.Refused {
			what = "REFUSED"
		}
		if f.Source.Line > 0 {
			fmt.Fprintf(out, "%s %s: %s\n", what, f.Source, f.Source.Text)
		} else {
			fmt.Fprintf(out, "%s the compiled policy as a whole:\n", what)
		}
		for _, p := range f.Problems {
			fmt.Fprintf(out, "  - %s\n", p)
		}
	}
	fmt.Fprintf(out, "%d rules: %d compiled, %d kept, %d failed; %d model calls, %d tokens (%d in, %d out)\n",
		len(res.Sources), res.Compiled, res.Reused, len(res.Sources)-res.Compiled-res.Reused, res.Calls,
		res.PromptTokens+res.CompletionTokens, res.PromptTokens, res.CompletionTokens)
	switch {
	case !res.OK():
		fmt.Fprintf(out, "nothing written: fix RULES.md or the policy and run warden compile again\n")
		return ExitError
	case res.Diff == "":
		return ExitOK
	case !*write:
		fmt.Fprintf(out, "not written: run again with --write to update %s\n", res.PolicyFile)
		return ExitOK
	}
	if err := compile.Write(res); err != nil {
		fmt.Fprintf(env.Stderr, "warden compile: %v\n", err)
		return ExitError
	}
	fmt.Fprintf(out, "wrote %s\n", res.PolicyFile)
	return ExitOK
}

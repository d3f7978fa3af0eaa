package progs

import "strings"

// The package managers' commands that fetch a package the call names and
// run its code at once: npm install NAME runs NAME's install scripts (and
// its dependencies'), pip install NAME a source distribution's build code
// (and a wheel's .pth file runs at every later python start), pnpm dlx
// NAME and go run MODULE@VERSION run the program fetched. Under an allow
// or warn rule for the command, such a call ran code chosen by the agent
// from a registry, as curl URL | sh does: it stops the allow, and the user
// decides on a new dependency. Installing what the project already
// declares (npm install, npm ci, pip install -r requirements.txt, pip
// install -e .) is the project's code, as its Makefile is. go get and
// cargo add only declare a dependency: its code runs when the project's
// code uses it, at an allowed build or test.

// localPackage reports whether a package operand names a local folder or
// archive (project code when inside the workspace, a read outside it)
// rather than a package to fetch.
func localPackage(w string) bool {
	switch {
	case w == "." || w == "..", strings.HasPrefix(w, "./"), strings.HasPrefix(w, "../"), strings.HasPrefix(w, "/"),
		strings.HasPrefix(w, "~/"), strings.HasPrefix(w, "file:"):
		return true
	}
	if strings.Contains(w, "://") || strings.Contains(w, "@") && !strings.HasPrefix(w, "@") {
		return false
	}
	for _, ext := range []string{".tgz", ".tar.gz", ".tar", ".whl", ".zip", ".tar.bz2"} {
		if strings.HasSuffix(w, ext) {
			return true
		}
	}
	return false
}

// pipLocal: pip takes a word with a slash (src/pkg), or one with extras
// (.[dev], ./pkg[test]), for a path; npm takes a/b for a GitHub
// repository.
func pipLocal(w string) bool {
	w = noExtras(w)
	return localPackage(w) || strings.Contains(w, "/") && !strings.Contains(w, "://") && !strings.Contains(w, "@")
}

// noExtras leaves out pip's extras: .[dev] is the folder ".".
func noExtras(w string) string {
	if i := strings.IndexByte(w, '['); i > 0 && strings.HasSuffix(w, "]") {
		return w[:i]
	}
	return w
}

// fetchedPackages records each package operand: a local one as a read of
// its path, any other as the risk that stops an allow (what names the
// package to fetch and runs its code).
func fetchedPackages(r *Result, ops []string, what string) {
	fetched(r, ops, what, localPackage)
}

func fetched(r *Result, ops []string, what string, local func(string) bool) {
	for _, op := range ops {
		if IsDyn(op) {
			r.risk("%s: a package named at run time (%s) is fetched and its code run", what, op[1:])
			continue
		}
		if strings.HasPrefix(op, "-") {
			continue
		}
		if local(op) {
			r.Effects = append(r.Effects, Effect{Arg: Read, Val: noExtras(strings.TrimPrefix(op, "file:")), Via: what})
			continue
		}
		r.risk("%s %s fetches %s and runs its code (install scripts, build code, or programs put where later commands run them): a new dependency is the user's decision", what, op, op)
	}
}

// npmFetched: npm install NAME (and its aliases).
func npmFetched(r *Result, _ []string) {
	ops := r.Ops
	if i := indexOf(ops, r.Sub); i >= 0 {
		ops = ops[i+1:]
	}
	fetchedPackages(r, ops, "npm install")
}

// pipFetched: pip install, download and wheel NAME, and -e of a URL (pip
// download and wheel build a source distribution, running its code, to
// read its metadata); uv add and uv pip install the same.
func pipFetched(label string) func(*Result, []string) {
	return func(r *Result, _ []string) {
		ops := r.Ops
		subs := strings.Fields(r.Sub) // "install", or "pip install" under uv
		if i := indexOf(ops, subs[len(subs)-1]); i >= 0 {
			ops = ops[i+1:]
		}
		fetched(r, ops, label, pipLocal)
		fetched(r, r.Values("-e"), label+" -e", pipLocal)
	}
}

// goRunFetched: go run MODULE@VERSION fetches the module and runs it.
func goRunFetched(r *Result, _ []string) {
	i := indexOf(r.Ops, "run")
	if i < 0 || i+1 >= len(r.Ops) {
		return
	}
	pkg := r.Ops[i+1]
	if IsDyn(pkg) {
		return // the computed word is the program: the shell package stops the allow
	}
	if strings.Contains(pkg, "@") && !strings.HasSuffix(pkg, ".go") {
		r.risk("go run %s fetches the module and runs its program: code the call names by its path, not the project's", pkg)
	}
}

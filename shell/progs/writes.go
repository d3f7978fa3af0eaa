package progs

// Subcommands that write files their call does not name (issue 31, class
// 8), read from each manual: go mod tidy (go help mod tidy) rewrites
// go.mod and go.sum; go fix (go help fix) rewrites the Go sources of the
// packages; cargo fmt (cargo fmt --help) rewrites the crate's sources;
// npm version (npm help version) writes package.json and the lock files,
// runs the preversion, version and postversion scripts and commits and
// tags with git; npm pkg set and delete (npm help pkg) write
// package.json; npm init (npm help init) writes package.json, and npm
// init NAME fetches and runs create-NAME.
func initWrites() {
	write := func(r *Result, val, via string) {
		r.Effects = append(r.Effects, Effect{Arg: Write, Val: val, Via: via})
	}
	prev := table["go"].Sub("mod").Sub("tidy").Special
	table["go"].Sub("mod").Sub("tidy").Special = func(r *Result, args []string) {
		if prev != nil {
			prev(r, args)
		}
		if !hasFlag(r, "-diff") {
			write(r, "go.mod", "go mod tidy")
			write(r, "go.sum", "go mod tidy")
		}
	}
	if table["go"].Sub("fix") == nil {
		table["go"].subs["fix"] = mustCompile(&Spec{Name: "fix", Style: "go", Opts: "-fix= -n -x -diff", Operands: "-...", lbl: "go fix"})
	}
	table["go"].Sub("fix").Special = func(r *Result, _ []string) {
		goCommon(r)
		if !hasFlag(r, "-diff", "-n") {
			write(r, "\x00(the Go sources go fix rewrites)", "go fix")
		}
	}
	prevFmt := table["cargo"].Sub("fmt").Special
	table["cargo"].Sub("fmt").Special = func(r *Result, args []string) {
		if prevFmt != nil {
			prevFmt(r, args)
		}
		for _, w := range args {
			if w == "--check" {
				return // only checks, before or after --
			}
		}
		write(r, "\x00(the Rust sources cargo fmt rewrites)", "cargo fmt")
	}
	npm := table["npm"]
	prevversion := npm.Sub("version").Special
	npm.Sub("version").Special = func(r *Result, args []string) {
		if prevversion != nil {
			prevversion(r, args)
		}
		if len(r.Ops) < 2 {
			return // npm version alone prints the versions
		}
		write(r, "package.json", "npm version")
		write(r, "package-lock.json", "npm version")
		r.risk("npm version runs the package's version scripts and commits and tags with git")
	}
	prevpkg := npm.Sub("pkg").Special
	npm.Sub("pkg").Special = func(r *Result, args []string) {
		if prevpkg != nil {
			prevpkg(r, args)
		}
		if len(r.Ops) > 1 && (r.Ops[1] == "set" || r.Ops[1] == "delete" || r.Ops[1] == "fix") {
			write(r, "package.json", "npm pkg "+r.Ops[1])
		}
	}
	previnit := npm.Sub("init").Special
	npm.Sub("init").Special = func(r *Result, args []string) {
		if previnit != nil {
			previnit(r, args)
		}
		for _, op := range r.Ops[1:] {
			if len(op) > 0 && op[0] != '-' {
				r.risk("npm init %s fetches and runs the package create-%s", op, op)
				return
			}
		}
		write(r, "package.json", "npm init")
	}
}

func mustCompile(s *Spec) *Spec {
	if err := s.compile(); err != nil {
		panic("progs: " + s.Name + ": " + err.Error())
	}
	return s
}

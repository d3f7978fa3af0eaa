package progs

import (
	"path"
	"slices"
	"strings"
)

// Language toolchains: go 1.26 (go help build, go help test, go help
// testflag), npm 9.2 (npm help config), node 20, Python 3.11, pip 23,
// uv 0.5, cargo 1.8x, GNU make 4.3.

// go build flags shared by build, test, run, install, vet, list
// (go help build). -toolexec and -exec run programs; -o, -coverprofile and
// friends write files. -gcflags, -ldflags, -asmflags and -gccgoflags pass
// flags to the compiler and the linker, some of which run a program or
// write a file (go tool link: -extld, -extldflags, -o, -cpuprofile; go
// tool compile: -o, -cpuprofile, -bench): only the harmless ones are
// vouched for (goToolFlags).
const goBuildFlags = " -C=C -a -n -p= -race -msan -asan -cover -covermode= -coverpkg= -v -work -x -asmflags=G -buildmode= -buildvcs[=] -compiler= -gccgoflags=G -gcflags=G -installsuffix= -json -ldflags=G -linkshared -mod= -modcacherw -modfile=W -overlay=R -pgo=R -pkgdir=W -tags= -trimpath -toolexec=S -o=W"

// go test flags (go help testflag), also spelled -test.NAME.
const goTestFlags = " -bench= -benchmem -benchtime= -blockprofile=W -blockprofilerate= -count= -coverprofile=W -cpu= -cpuprofile=W -failfast -fullpath -fuzz= -fuzzminimizetime= -fuzztime= -list= -memprofile=W -memprofilerate= -mutexprofile=W -mutexprofilefraction= -outputdir=C -parallel= -run= -short -shuffle= -skip= -timeout= -trace=W -artifacts -c:W -exec=X -i -args -vet= -test.v= -test.run= -test.short -test.count= -test.timeout= -test.bench="

func initLangGo() {
	goSub := func(name, extra, operands string) *Spec {
		return &Spec{Name: name, Style: "go", Opts: goBuildFlags + extra, Operands: operands}
	}
	goRun := goSub("run", " -exec=X", "-...")
	goRun.Rest = 1 // go run PKG ARGS...: the words after the package are the program's
	goRun.Special = goRunFetched
	goTest := goSub("test", goTestFlags, "-...")
	goTest.RestAfter = "-args"
	goTest.Special = goTestArgs
	register(&Spec{
		Name: "go", Source: "go 1.26 (go help, go help build, go help testflag, go help environment)", Style: "go", SubsOnly: true, EnvPrefix: "GO CGO_",
		Opts: "-C=C",
		// Variables that run programs or change what is built (go help
		// environment): CC and friends run a compiler, GOFLAGS carries
		// flags, GOTOOLCHAIN may fetch and run another toolchain.
		Env: "GOFLAGS=Fgo-build GOOS GOARCH GOARM GOAMD64 CGO_ENABLED GOPROXY GONOPROXY GOPRIVATE=G GONOSUMDB=G GOSUMDB=G GOINSECURE=G GOWORK=G GOCACHE=W GOMODCACHE=W GOTMPDIR=W GOPATH=W GODEBUG GOMAXPROCS GOGC GOMEMLIMIT GOTRACEBACK GOEXPERIMENT GO111MODULE GOTELEMETRY GOVCS " +
			"CC=X CXX=X FC=X AR=X PKG_CONFIG=X GCCGO=X GOTOOLCHAIN=! GOROOT=! GOBIN=W GOENV=! GOCOVERDIR=W CGO_CFLAGS=! CGO_CPPFLAGS=! CGO_CXXFLAGS=! CGO_FFLAGS=! CGO_LDFLAGS=! GO_EXTLINK_ENABLED",
		Subs: []*Spec{
			goSub("build", "", "-..."),
			goTest,
			goRun,
			goSub("vet", " -vettool=X", "-..."),
			goSub("install", "", "-..."),
			goSub("list", " -deps -e -export -f= -find -compiled -m -u -retracted -reuse=R -test -versions", "-..."),
			{Name: "fmt", Style: "go", Opts: "-n -x -mod=", Operands: "W..."},
			{Name: "version", Style: "go", Opts: "-m -v -json", Operands: "R..."},
			{Name: "env", Style: "go", Opts: "-json -u -w -changed", Operands: "-...", Special: goEnv},
			{Name: "doc", Style: "go", Opts: "-all -c -cmd -short -src -u -http:X", Operands: "-..."},
			{Name: "clean", Style: "go", Opts: "-i -n -r -x -cache -testcache -modcache -fuzzcache", Operands: "-..."},
			{Name: "get", Style: "go", Opts: goBuildFlags + " -t -u[=] -tool", Operands: "-..."},
			{Name: "generate", Style: "go", Opts: goBuildFlags + " -run= -skip=:X", Operands: "-..."},
			{Name: "mod", Style: "go", SubsOnly: true, Subs: []*Spec{
				{Name: "tidy", Style: "go", Opts: "-e -v -x -go= -compat= -diff", Operands: ""},
				{Name: "download", Style: "go", Opts: "-json -x -reuse=R", Operands: "-..."},
				{Name: "verify", Style: "go", Operands: ""},
				{Name: "why", Style: "go", Opts: "-m -vendor", Operands: "-..."},
				{Name: "graph", Style: "go", Opts: "-go= -x", Operands: ""},
				{Name: "edit", Style: "go", Opts: "-fmt -module= -go= -toolchain= -require= -droprequire= -exclude= -dropexclude= -replace= -dropreplace= -retract= -dropretract= -tool= -droptool= -print -json", Operands: "W..."},
				{Name: "init", Style: "go", Operands: "-"},
				{Name: "vendor", Style: "go", Opts: "-e -v -o=W", Operands: ""},
			}},
			{Name: "work", Style: "go", SubsOnly: true, Subs: []*Spec{
				{Name: "init use sync", Style: "go", Opts: "-r", Operands: "-..."},
			}},
			{Name: "tool", Style: "go", Opts: "-n", Operands: "-...", Rest: 1},
			{Name: "help", Style: "go", Operands: "-..."},
			{Name: "telemetry", Style: "go", Operands: "-..."},
		},
	})
	// go generate runs the //go:generate commands of the sources: another
	// program, whatever the call says.
	table["go"].Sub("generate").Special = func(r *Result, _ []string) {
		r.risk("go generate runs the commands written in the source files")
	}
	table["go"].Sub("tool").Special = func(r *Result, _ []string) {
		r.risk("go tool runs a tool program")
	}
	// go build without -o writes the executable of a single main package
	// into the working folder, named after the package's folder or its
	// first file (go help build): cd .git/hooks && go build
	// ../../cmd/pre-commit writes an executable hook.
	table["go"].Sub("build").Special = func(r *Result, _ []string) {
		if hasFlag(r, "-o") {
			return
		}
		r.Effects = append(r.Effects, Effect{Arg: Output, Val: ".", Via: "go build"})
		for _, op := range r.Ops {
			if op == "build" || strings.Contains(op, "...") || op == "." || op == "./" {
				continue
			}
			name := path.Base(strings.TrimSuffix(op, "/"))
			if IsDyn(op) {
				name = op
			}
			r.Effects = append(r.Effects, Effect{Arg: Output, Val: strings.TrimSuffix(name, ".go"), Via: "go build"})
			if strings.HasSuffix(op, ".go") {
				break // the executable is named after the first file
			}
		}
	}
	table["go"].Sub("install").Special = func(r *Result, _ []string) {
		r.risk("go install writes a program into GOBIN, outside the workspace, where a later command may run it")
	}
	// go work init, use and sync write the workspace file: go.work in the
	// working folder (init) or the one found above it, or GOWORK's file.
	table["go"].Sub("work").Sub("init").Special = func(r *Result, _ []string) {
		r.Effects = append(r.Effects, Effect{Arg: Write, Val: "go.work", Via: "go work"})
	}
	// go mod init writes go.mod in the working folder.
	table["go"].Sub("mod").Sub("init").Special = func(r *Result, _ []string) {
		r.Effects = append(r.Effects, Effect{Arg: Write, Val: "go.mod", Via: "go mod init"})
	}
	for _, s := range []*Spec{table["go"], table["go"].Sub("mod"), table["go"].Sub("work")} {
		for _, sub := range s.subs {
			prev := sub.Special
			sub.Special = func(r *Result, args []string) {
				goCommon(r)
				if prev != nil {
					prev(r, args)
				}
			}
		}
	}
	// GOFLAGS is read as the build and test flags (go help environment).
	goBuild := &Spec{Name: "go-build", Source: "go 1.26 (go help build, go help testflag)", Style: "go", Opts: goBuildFlags + goTestFlags,
		Special: func(r *Result, _ []string) { goCommon(r) }}
	register(goBuild)

	// node 20: node --help. --require and --import load code; -e/-p run it.
	register(&Spec{
		Name: "node nodejs", Source: "node 20 (node --help, node --test: a --test-reporter other than spec, tap, dot, junit or lcov is a module node loads; --env-file sets the variables of a file, NODE_OPTIONS among them)", EnvPrefix: "NODE_", Operands: "R -...", Rest: 1,
		Opts:    "-e=!|--eval=! -p=!|--print=! -c|--check -i|--interactive -r=!|--require=! --import=! --loader=! --experimental-loader=! --inspect[=] --inspect-brk[=] --inspect-port= --enable-source-maps --max-old-space-size= --max-semi-space-size= --stack-size= --trace-warnings --trace-deprecation --no-deprecation --no-warnings --throw-deprecation --pending-deprecation --unhandled-rejections= --input-type= --experimental-vm-modules --experimental-specifier-resolution= --conditions=|-C= --test --test-name-pattern= --test-reporter= --test-reporter-destination=W --test-only --watch --watch-path= --env-file=! --title= --abort-on-uncaught-exception --preserve-symlinks --preserve-symlinks-main --openssl-legacy-provider --use-openssl-ca --tls-min-v1.2 -v|--version -h|--help",
		Env:     "NODE_OPTIONS=Fnode NODE_PATH=! NODE_ENV NODE_NO_WARNINGS NODE_DEBUG NODE_EXTRA_CA_CERTS=R",
		Special: nodeSpecial,
	})
	// npm 9: `npm help config`. npm takes any --name=value as configuration,
	// so only the names below are trusted; script-shell, node-options and
	// the like run programs.
	npmOpts := " -w=|--workspace= -ws|--workspaces --include-workspace-root --if-present --ignore-scripts --silent -s -q|--quiet -d --loglevel= --no-fund --fund --no-audit --audit --prefer-offline --prefer-online --offline --prefix=C -C=C --json --parseable -p --long -l --color= --no-color --cache=W --registry= --save -S --save-dev -D --save-optional -O --save-exact -E --no-save --save-prod -P --global -g --legacy-peer-deps --strict-peer-deps --production --omit= --include= --dry-run --force -f --yes -y --no --package-lock --no-package-lock --package-lock-only --foreground-scripts --progress --no-progress --unicode --tag= --otp= --depth= --all -a --userconfig=! --globalconfig=! --script-shell=X --node-options=Fnode --shell=X --call=S -c=S --package=X --editor=X --browser=X --git=X --onload-script=X --init-module=X --before= --heading= --access= --provenance --version -v --help -h --usage"
	npmSub := func(name, operands string) *Spec {
		return &Spec{Name: name, Opts: npmOpts, Operands: operands}
	}
	// npm reads its own options anywhere before "--", after the script's
	// name too (npm run build --script-shell=sh runs sh); the words that
	// are not options, and all after "--", are handed to the script.
	npmRun := npmSub("run run-script rum urn", "-...")
	npmRun.RestAfter = "--"
	npmRun.Special = func(r *Result, _ []string) { npmPassed(r, 1) }
	npmScript := func(name string) *Spec {
		s := npmSub(name, "-...")
		s.Special = func(r *Result, _ []string) { npmPassed(r, 0) }
		return s
	}
	npmInstall := npmSub("install i add in ins inst insta instal isnt isnta isntal isntall", "-...")
	npmInstall.Special = npmFetched
	npmAudit := npmSub("audit", "-...")
	npmAudit.Special = func(r *Result, _ []string) {
		// npm audit fix installs the fixed versions (npm help audit),
		// running their install scripts.
		if len(r.Ops) > 1 && r.Ops[1] == "fix" {
			r.risk("npm audit fix installs packages, running their install scripts")
		}
	}
	npmExec := npmSub("exec x", "X -...")
	npmExec.Special = npmExecProgram
	npmConfig := npmSub("config c", "-...")
	// npm config set, delete, edit and fix write the user's .npmrc (or the
	// project's, the global one), which every later npm obeys
	// (script-shell, node-options, git).
	npmConfig.Special = configWrites("npm", "get", "list", "ls")
	npmPack := npmSub("pack", "-...")
	npmPack.Special = func(r *Result, _ []string) {
		// npm pack writes NAME-VERSION.tgz, named by package.json, into
		// the working folder.
		if !hasFlag(r, "--dry-run") {
			r.Effects = append(r.Effects, Effect{Arg: Output, Val: ".", Via: "npm pack"})
		}
	}
	register(&Spec{
		Name: "npm", Source: "npm 9.2 (Debian 12), npm help config and npm help <command>", SubsOnly: true, Opts: npmOpts, EnvPrefix: "npm_config_ NPM_CONFIG_ NODE_",
		Env: "NODE_OPTIONS=Fnode NPM_CONFIG_SCRIPT_SHELL=X npm_config_script_shell=X NPM_CONFIG_NODE_OPTIONS=Fnode npm_config_node_options=Fnode NPM_CONFIG_USERCONFIG=! npm_config_userconfig=! NPM_CONFIG_GLOBALCONFIG=! NPM_CONFIG_PREFIX=C NPM_CONFIG_REGISTRY npm_config_registry NPM_CONFIG_CACHE=W NODE_ENV CI",
		Subs: []*Spec{
			npmScript("test t tst"), npmScript("start stop restart"), npmRun,
			npmInstall, npmSub("ci clean-install ic install-clean isntall-clean", "-..."),
			npmSub("uninstall remove rm r un unlink", "-..."), npmSub("update up upgrade udpate", "-..."),
			npmSub("ls list la ll", "-..."), npmSub("outdated", "-..."), npmAudit, npmSub("view v info show", "-..."),
			npmSub("version", "-..."), npmPack, npmSub("publish", "-..."), npmSub("init create innit", "-..."),
			npmConfig, npmSub("help", "-..."), npmSub("root", ""), npmSub("bin", ""), npmSub("prefix", ""),
			npmSub("why explain", "-..."), npmSub("fund", "-..."), npmSub("doctor", ""), npmSub("whoami", ""), npmSub("search s se find", "-..."),
			npmSub("link ln", "-..."), npmSub("dedupe ddp", "-..."), npmSub("prune", "-..."), npmSub("rebuild rb", "-..."),
			npmExec, npmSub("cache", "-..."), npmSub("pkg", "-..."),
		},
	})
	// npm install -g (and the other commands that change packages)
	// writes into the global prefix: the packages' programs go into its
	// bin folder (/usr/local/bin), which PATH searches before /usr/bin, so
	// a package whose bin is named git is what a later git runs.
	for _, n := range []string{"install", "ci", "uninstall", "update", "link", "rebuild", "dedupe", "prune"} {
		sub := table["npm"].Sub(n)
		prev := sub.Special
		sub.Special = func(r *Result, args []string) {
			if hasFlag(r, "--global", "-g") {
				r.risk("npm %s --global writes programs into the global prefix, where a later command may run them", n)
			}
			if prev != nil {
				prev(r, args)
			}
		}
	}
	// npm exec and npx run a package's program; the program named is the
	// first operand (what a rule such as "npx tsc *" names). --package and
	// --call change what runs.
	npxOpts := npmOpts
	register(&Spec{Name: "npx", Source: "npm 9.2 (Debian 12), npx(1)", Opts: npxOpts, Operands: "-...", Rest: 1, EnvPrefix: "npm_config_ NPM_CONFIG_ NODE_",
		Env: "NODE_OPTIONS=Fnode NPM_CONFIG_SCRIPT_SHELL=X npm_config_script_shell=X", Special: npxProgram})
	register(&Spec{Name: "pnpm yarn", Source: "pnpm 9 (pnpm help), yarn 1.22 (yarn help)", Opts: npmOpts + " --frozen-lockfile --filter= -F= -r|--recursive --dev --prod --parallel --stream --reporter=", Operands: "-...", Rest: 1, Special: pnpmProgram,
		Env: "NODE_OPTIONS=Fnode"})

	// Python 3.11: python3 --help. -c runs code, -m runs a module; the
	// words after the script or module are the program's.
	register(&Spec{
		Name: "python python3 python3.11 python3.12 python3.13", Source: "Python 3.11 (python3 --help, python3 --help-xoptions: -X pycache_prefix=PATH writes the bytecode caches below PATH)", EnvPrefix: "PYTHON PYTEST_", Style: "posix", Operands: "R -...", Rest: 1, RestAfter: "-m",
		Opts: "-b -B -d -E -h|-?|--help -i -I -O -OO -P -q -s -S -u -v -V|--version -W= -x -X= --check-hash-based-pycs= --help-env --help-xoptions --help-all -c=!",
		Env: "PYTHONSTARTUP=X PYTHONPATH=! PYTHONHOME=! PYTHONINSPECT PYTHONUNBUFFERED PYTHONDONTWRITEBYTECODE PYTHONWARNINGS PYTHONHASHSEED PYTHONIOENCODING PYTHONUTF8 PYTHONBREAKPOINT=X PYTHONSAFEPATH PYTHONNOUSERSITE PYTHONUSERBASE=! " +
			"PYTEST_ADDOPTS=Fpytest PYTEST_PLUGINS=! PYTEST_DISABLE_PLUGIN_AUTOLOAD PYTEST_DEBUG PYTEST_THEME PYTEST_THEME_MODE PYTEST_DEBUG_TEMPROOT=W",
		Special: func(r *Result, args []string) {
			pythonX(r)
			pythonModule(r, args)
		},
	})
	// python -m MODULE: the module's name is the first word after -m; the
	// rule names it (python -m pytest *). RestAfter keeps the module's words
	// as operands.
	pipOpts := " -h|--help --debug --isolated --require-virtualenv --python=X -v|--verbose -V|--version -q|--quiet --log=W --no-input --keyring-provider= --proxy= --retries= --timeout= --exists-action= --trusted-host= --cert=R --client-cert=R --cache-dir=W --no-cache-dir --disable-pip-version-check --no-color --no-python-version-warning --use-feature= --use-deprecated= -r=R|--requirement=R -c=R|--constraint=R -e=|--editable= -U|--upgrade --upgrade-strategy= --force-reinstall -I|--ignore-installed --ignore-requires-python --no-deps --pre --no-build-isolation --user --root=W --prefix=W -t=W|--target=W --src=W --no-binary= --only-binary= --prefer-binary --no-index -i=|--index-url= --extra-index-url= -f=|--find-links= --dry-run --report=W --compile --no-compile --no-warn-script-location --no-warn-conflicts -y|--yes --break-system-packages -l|--local --format= --outdated --uptodate --not-required --exclude-editable --include-editable --path= --all --exclude= -o|--outdated --files -d=W|--dest=W"
	pipSub := func(name string) *Spec { return &Spec{Name: name, Opts: pipOpts, Operands: "-..."} }
	// pip config set, unset and edit write pip.conf, which every later pip
	// obeys (index-url, and python: the interpreter pip runs).
	pipFetch := func(name string) *Spec {
		s := pipSub(name)
		s.Special = pipFetched("pip " + name)
		return s
	}
	pipConfig := pipSub("config")
	pipConfig.Special = configWrites("pip", "list", "get", "debug")
	register(&Spec{Name: "pip pip3", Source: "pip 23 (pip help, pip help install)", SubsOnly: true, Opts: pipOpts, EnvPrefix: "PIP_ PYTHON",
		Env:  "PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_CONFIG_FILE=! PIP_REQUIRE_VIRTUALENV PIP_NO_CACHE_DIR",
		Subs: []*Spec{pipFetch("install"), pipFetch("download"), pipSub("uninstall"), pipSub("freeze"), pipSub("list"), pipSub("show"), pipSub("check"), pipConfig, pipSub("search"), pipSub("cache"), pipSub("index"), pipFetch("wheel"), {Name: "hash", Opts: pipOpts, Operands: "R..."}, pipSub("inspect"), pipSub("debug"), pipSub("help")}})
	uvOpts := " -q|--quiet -v|--verbose --color= --native-tls --offline --no-cache -n --cache-dir=W --python=X -p=X --directory=C --project=C --config-file=! --no-config -h|--help -V|--version --frozen --locked --no-sync --all-extras --extra= --dev --no-dev --group= --package= --with=! --index-url= --extra-index-url= -r=R|--requirement=R -e=|--editable= --system --no-deps --upgrade -U"
	uvSub := func(name string) *Spec { return &Spec{Name: name, Opts: uvOpts, Operands: "-..."} }
	uvRun := uvSub("run")
	uvRun.Rest = 1
	uvRun.Special = uvRunSpecial
	uvAdd := uvSub("add")
	uvAdd.Special = pipFetched("uv add")
	uvPipInstall := pipSub("install")
	uvPipInstall.Special = pipFetched("uv pip install")
	uvVenv := &Spec{Name: "venv", Opts: uvOpts + " --seed --clear --allow-existing --prompt= --system-site-packages --relocatable", Operands: "W"}
	register(&Spec{Name: "uv", Source: "uv 0.5 (uv help)", SubsOnly: true, Opts: uvOpts, EnvPrefix: "UV_ PYTHON",
		Subs: []*Spec{uvRun, uvSub("sync"), uvSub("lock"), uvAdd, uvSub("remove"), uvSub("tree"), uvVenv, uvSub("build"), uvSub("version"), uvSub("help"),
			{Name: "pip", SubsOnly: true, Opts: uvOpts, Subs: []*Spec{uvPipInstall, pipSub("uninstall"), pipSub("list"), pipSub("freeze"), pipSub("show"), pipSub("compile"), pipSub("sync"), pipSub("check"), pipSub("tree")}}}})

	// cargo: cargo --help, cargo help build. Build scripts run as part of any
	// build; the rule for cargo build vouches for that. --config can set a
	// runner or linker (programs).
	cargoOpts := " -V|--version --list --explain= -v|--verbose -q|--quiet --color= -C=C --locked --offline --frozen --config=! -Z=! -h|--help -p=|--package= --workspace --all --exclude= --lib --bins --bin= --examples --example= --tests --test= --benches --bench= --all-targets -F=|--features= --all-features --no-default-features -r|--release --profile= -j=|--jobs= --keep-going --target= --target-dir=W --manifest-path=R --lockfile-path=W --message-format= --timings[=] --ignore-rust-version --no-run --no-fail-fast --future-incompat-report --doc --unit-graph -o|--open --out-dir=W --artifact-dir=W"
	cargoSub := func(name string) *Spec {
		return &Spec{Name: name, Opts: cargoOpts + cargoExtra[strings.Fields(name)[0]], Operands: "-..."}
	}
	register(&Spec{Name: "cargo", Source: "cargo 1.8x (cargo --help, cargo help build; --lockfile-path names the lockfile cargo writes; the words after -- go to the test harness (libtest: --logfile PATH writes PATH), to clippy-driver (rustc: @FILE, -C, -o), to rustfmt, or to the program cargo run runs)", SubsOnly: true, Opts: cargoOpts, EnvPrefix: "CARGO_ RUST",
		Env: "RUSTFLAGS=! RUSTC=X RUSTC_WRAPPER=X RUSTDOC=X CARGO_TARGET_DIR=W CARGO_HOME=! CARGO_BUILD_RUSTC_WRAPPER=X CARGO_INCREMENTAL CARGO_TERM_COLOR RUST_BACKTRACE RUST_LOG",
		Subs: []*Spec{cargoSub("build b"), cargoSub("check c"), cargoSub("test t"), cargoSub("bench"), cargoSub("doc d"), cargoSub("clippy"), cargoSub("fmt"), cargoSub("tree"), cargoSub("metadata"), cargoSub("update"), cargoSub("fetch"), cargoSub("clean"), cargoSub("new"), cargoSub("init"), cargoSub("add"), cargoSub("remove"), cargoSub("search"), cargoSub("publish"), cargoSub("install"), cargoSub("uninstall"), cargoSub("version"), cargoSub("help"),
			cargoSub("run r")}})
	for _, sub := range table["cargo"].subs {
		sub.Special = cargoPassed
	}
	// cargo install writes the crate's programs, under the names it gives
	// them (git, ls), into CARGO_HOME's bin folder, which is on PATH: as
	// go install does into GOBIN.
	table["cargo"].Sub("install").Special = func(r *Result, args []string) {
		cargoPassed(r, args)
		r.risk("cargo install writes programs into CARGO_HOME's bin folder, outside the workspace, where a later command may run them")
	}

	// GNU make 4.3: make --help. The recipes are the Makefile's; the rule
	// for make vouches for them. --eval and -f change what runs.
	register(&Spec{Name: "make gmake", Source: "GNU Make 4.3 (Debian 12), make --help; make reads every variable of its environment as a make variable; -f - reads the makefile from standard input", Operands: "-...", EnvPrefix: "*",
		Opts: "-b -m -B|--always-make -C=C|--directory=C -d --debug[=] -e|--environment-overrides -E=!|--eval=! -f=R|--file=R|--makefile=R -h|--help -i|--ignore-errors -I=R|--include-dir=R -j|--jobs[=] -k|--keep-going -l|--load-average[=] -L|--check-symlink-times -n|--just-print|--dry-run|--recon -o=|--old-file=|--assume-old= -O|--output-sync[=] -p|--print-data-base -q|--question -r|--no-builtin-rules -R|--no-builtin-variables -s|--silent|--quiet --no-silent -S|--no-keep-going|--stop -t|--touch --trace -v|--version -w|--print-directory --no-print-directory -W=|--what-if=|--new-file=|--assume-new= --warn-undefined-variables",
		Special: func(r *Result, args []string) {
			// make -f - (or /dev/stdin, /dev/fd/N) reads the makefile from
			// its input: recipes written in the call itself (echo 'x:;cmd'
			// | make -f - x), commands no rule has seen.
			for _, v := range r.Values("-f") {
				if v == "-" || strings.HasPrefix(v, "/dev/") || strings.HasPrefix(v, "/proc/") || IsDyn(v) {
					r.risk("make -f %s reads a makefile from its input, whose recipes are commands warden cannot vouch for", strings.TrimPrefix(v, "\x00"))
				}
			}
			// make --eval TEXT keeps its risk (the makefile it adds to is
			// unread), and the recipes and $(shell ...) commands written
			// in TEXT are lines the shell package judges.
			for _, v := range r.Values("-E") {
				if IsDyn(v) {
					continue
				}
				for _, l := range makeLines(v) {
					r.Effects = append(r.Effects, Effect{Arg: Shell, Val: l, Via: "--eval"})
				}
			}
			// VAR=value operands override the Makefile's variables, which
			// may be the commands it runs (CC=, SHELL=).
			for _, op := range r.Ops {
				if i := indexByte(op, '='); i > 0 {
					r.risk("make variable %s may change the commands make runs", op[:i])
				}
			}
		}})
}

func initLangTools() {
	register(
		// gofmt: go 1.26, gofmt -h. -w rewrites the operands.
		&Spec{Name: "gofmt", Source: "go 1.26 (gofmt -h)", Style: "go", Operands: "R...",
			Opts: "-d -e -l -r= -s -w:I -cpuprofile=W"},
		// pytest 7 (pytest --help). The rule for pytest vouches for the
		// tests it runs; -p and -o load plugins or override configuration.
		&Spec{Name: "pytest py.test", Source: "pytest 7.2 (Debian 12), pytest --help and the environment variables of docs.pytest.org/en/stable/reference/reference.html: --basetemp removes the folder it names if it exists; PYTEST_ADDOPTS holds more options, PYTEST_PLUGINS plugins to load; pytest-cov's --cov-report=TYPE:DEST writes DEST; --pastebin sends the session's output to a paste service",
			Operands: "R...", EnvPrefix: "PYTEST_", Special: pytestSpecial,
			Env: "PYTEST_ADDOPTS=Fpytest PYTEST_PLUGINS=! PYTEST_DISABLE_PLUGIN_AUTOLOAD PYTEST_DEBUG PYTEST_THEME PYTEST_THEME_MODE PYTEST_DEBUG_TEMPROOT=W",
			Opts: "-k= -m= --markers -x|--exitfirst --fixtures|--funcargs --fixtures-per-test --pdb --pdbcls=! --trace --capture= -s --runxfail --lf|--last-failed --ff|--failed-first --nf|--new-first --cache-show[=] --cache-clear --lfnf=|--last-failed-no-failures= --sw|--stepwise --sw-skip|--stepwise-skip " +
				"--durations= --durations-min= -v|--verbose --no-header --no-summary -q|--quiet --verbosity= -r= --disable-warnings|--disable-pytest-warnings -l|--showlocals --no-showlocals --tb= --show-capture= --full-trace --color= --code-highlight= --pastebin=! --junitxml=W|--junit-xml=W --junitprefix= " +
				"-W=|--pythonwarnings= --maxfail= --strict-config --strict-markers --strict -c=!|--config-file=! --continue-on-collection-errors --rootdir=C --collect-only|--co --pyargs --ignore= --ignore-glob= --deselect= --confcutdir=! --noconftest --keep-duplicates --collect-in-virtualenv --import-mode= --doctest-modules --doctest-report= --doctest-glob= --doctest-ignore-import-errors --doctest-continue-on-failure " +
				"--basetemp=D -V|--version -h|--help -p=! --trace-config --debug[=W] -o=!|--override-ini=! --assert= --setup-only --setup-show --setup-plan --log-level= --log-format= --log-date-format= --log-cli-level= --log-cli-format= --log-cli-date-format= --log-file=W --log-file-level= --log-file-format= --log-file-date-format= --log-auto-indent= " +
				"-n=|--numprocesses= --dist= --cov[=] --cov-report= --cov-fail-under= --cov-append --no-cov --timeout="},
	)
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// goEnv: go env -w writes the go environment file (GOFLAGS and the like
// persist for every later go command).
func goEnv(r *Result, _ []string) {
	for _, f := range r.Flags {
		if f == "-w" || f == "-u" {
			r.risk("go env %s changes the settings of every later go command", f)
		}
	}
}

// goCommon reads the build flags every go subcommand shares (go help
// build, go 1.26):
//   - -overlay=F reads F, a JSON file that names the files to compile in
//     place of others: reads warden cannot see (go build -overlay=F with F
//     replacing main.go by .env prints .env's first words in the error).
//   - -modfile=F reads and, with -mod=mod or go get, writes F and the
//     go.sum beside it (F without .mod, and .sum).
//   - go build, go list and go install stamp the version control status
//     of a main package (-buildvcs=auto, the default): they run git (or
//     hg, ...) in the repository found from the working folder, whose
//     configuration can run programs (core.fsmonitor). With -C DIR that
//     folder is DIR, which may hold a repository an agent wrote.
func goCommon(r *Result) {
	for _, v := range r.Values("-overlay") {
		r.Effects = append(r.Effects, Effect{Arg: Read, Val: "\x00(the files " + strings.TrimPrefix(v, "\x00") + " names)", Via: "-overlay"})
	}
	for _, v := range r.Values("-modfile") {
		if IsDyn(v) {
			r.risk("option -modfile of go is computed at run time")
			continue
		}
		r.Effects = append(r.Effects, Effect{Arg: Write, Val: strings.TrimSuffix(v, ".mod") + ".sum", Via: "-modfile"})
	}
	switch r.Sub {
	case "build", "list", "install":
		vcs := true
		for _, v := range r.Values("-buildvcs") {
			vcs = v != "false" && v != "0" && v != "f" && v != "F" && v != "FALSE" && v != "False"
		}
		if vcs && len(r.Values("-C")) > 0 {
			r.risk("go %s -C DIR runs git in the repository found from DIR to stamp its status (-buildvcs), and that repository's configuration can run programs", r.Sub)
		}
		r.RunsGit = vcs
	}
}

// goEnvValue checks the variables that decide where the go command fetches
// code from and whether it verifies it (go help module-auth, go 1.26
// cmd/go/internal/modfetch/sumdb.go). A go.mod whose go line names a newer
// release makes go download that toolchain (golang.org/toolchain) and run
// it (GOTOOLCHAIN=auto, the default): the checksum database vouches for
// the download, unless GOSUMDB is off or another database, or GONOSUMDB or
// GOPRIVATE names golang.org/toolchain; then GOPROXY=file:///DIR runs
// whatever DIR holds (GONOSUMDB=golang.org/toolchain GOPROXY=file://$PWD/p
// go build). GOINSECURE lets it come over plain HTTP. GOWORK names the
// workspace file: go work init, use and sync write it; off turns it off.
func goEnvValue(r *Result, name, val string) {
	if IsDyn(val) {
		r.risk("variable %s of go is computed at run time", name)
		return
	}
	switch name {
	case "GOSUMDB":
		if val != "sum.golang.org" && val != "" {
			r.risk("GOSUMDB=%s changes the checksum database that vouches for the toolchains and modules go downloads and runs", val)
		}
	case "GONOSUMDB", "GOPRIVATE", "GOINSECURE":
		if goMatchPrefix(val, "golang.org/toolchain") {
			r.risk("%s=%s turns off the checks of the toolchains go downloads and runs", name, val)
		}
	case "GOWORK":
		switch {
		case val == "off" || val == "":
		case strings.HasPrefix(r.Sub, "work"):
			r.Effects = append(r.Effects, Effect{Arg: Write, Val: val, Via: "GOWORK"})
		default:
			r.Effects = append(r.Effects, Effect{Arg: Read, Val: val, Via: "GOWORK"})
		}
	}
}

// goMatchPrefix reports whether a comma-separated list of glob patterns
// matches path or one of its leading elements, as go's
// module.MatchPrefixPatterns does (golang.org matches golang.org/toolchain).
func goMatchPrefix(globs, target string) bool {
	for _, g := range strings.Split(globs, ",") {
		g = strings.TrimSpace(g)
		if g == "" {
			continue
		}
		n := strings.Count(g, "/") + 1
		prefix := target
		for i := 0; i < len(target); i++ {
			if target[i] == '/' {
				n--
				if n == 0 {
					prefix = target[:i]
					break
				}
			}
		}
		if ok, err := path.Match(g, prefix); ok || err != nil {
			return true
		}
	}
	return false
}

// goToolSafe lists the compiler and linker flags (go tool compile -help,
// go tool link -help, go 1.26) that change only the code built: true when
// the flag takes its value as the next word (-X main.version=1).
var goToolSafe = map[string]map[string]bool{
	"-ldflags": {"-s": false, "-w": false, "-X": true, "-buildid": true, "-v": false, "-compressdwarf": false, "-checklinkname": false},
	"-gcflags": {"-N": false, "-l": false, "-m": false, "-S": false, "-B": false, "-C": false, "-e": false, "-L": false, "-w": false,
		"-live": false, "-wb": false, "-dwarf": false, "-std": false, "-complete": false, "-smallframes": false},
}

// goToolFlags checks the value of -gcflags, -ldflags, -asmflags or
// -gccgoflags: "[pattern=]FLAGS". A flag the table does not know (-extld
// runs a linker, -o and -cpuprofile write files) stops an allow.
func goToolFlags(r *Result, opt, val string) {
	if strings.HasPrefix(opt, "GO") {
		goEnvValue(r, opt, val)
		return
	}
	if IsDyn(val) {
		r.risk("option %s of go is computed at run time and could pass any flag to the compiler or linker", opt)
		return
	}
	v := val
	if i := strings.IndexByte(v, '='); i >= 0 && !strings.HasPrefix(v, "-") && !strings.ContainsAny(v[:i], " \t") {
		v = v[i+1:] // all=-N -l
	}
	safe := goToolSafe[opt]
	words, ok := splitQuoted(v)
	if !ok {
		r.risk("option %s of go has a quote warden cannot read", opt)
		return
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "-") {
			r.risk("option %s of go passes %q to the compiler or linker, which warden does not know", opt, w)
			return
		}
		name, _, hasVal := strings.Cut("-"+strings.TrimLeft(w, "-"), "=")
		next, ok := safe[name]
		if !ok {
			r.risk("option %s of go passes %s to the compiler or linker, which can run a program or write a file", opt, name)
			return
		}
		if next && !hasVal {
			i++
		}
	}
}

// pyModules are the modules python -m runs as programs warden has a table
// for: their words are read with it.
var pyModules = map[string]string{"pytest": "pytest", "pip": "pip", "pip3": "pip"}

// pyModuleTrusted are the modules python -m may take from the working
// folder (see pythonModule): pytest runs the project's code anyway (its
// conftest.py files, its tests). pip does not: python3 -m pip list runs
// ./pip/__main__.py when there is one, so it needs -P or -I.
var pyModuleTrusted = map[string]bool{"pytest": true}

// pyModSpecs are the standard library modules a coding policy runs with
// python -m (python3 -m json.tool --help, python3 -m http.server --help,
// python3 -m venv --help; Python 3.11; argparse takes unique prefixes of
// long options). json.tool writes its second operand; http.server serves
// a folder whole (the working folder by default) to the network, and
// --cgi runs the scripts of its cgi-bin; venv --clear empties each folder
// before it writes it.
var pyModSpecs = map[string]*Spec{
	"json.tool": {Name: "json.tool", Source: "Python 3.11 (python3 -m json.tool --help)", Operands: "R W",
		Opts: "--sort-keys --no-ensure-ascii --json-lines --indent= --tab --no-indent --compact -h|--help"},
	"http.server": {Name: "http.server", Source: "Python 3.11 (python3 -m http.server --help)", Operands: "-",
		Opts: "--cgi:X -b=|--bind= -d=|--directory= -p=|--protocol= -h|--help",
		Special: func(r *Result, _ []string) {
			dir := "."
			for _, v := range r.Values("-d") {
				dir = v
			}
			r.Effects = append(r.Effects, Effect{Arg: Read, Val: dir, Via: "http.server"})
			r.Tree, r.Follow = true, true
		}},
	"venv": {Name: "venv", Source: "Python 3.11 (python3 -m venv --help)", Operands: "W...",
		Opts: "--system-site-packages --symlinks --copies --clear --upgrade --without-pip --prompt= --upgrade-deps --without-scm-ignore-files -h|--help",
		Special: func(r *Result, _ []string) {
			if !hasFlag(r, "--clear") {
				return
			}
			for _, e := range r.Effects {
				if e.Arg == Write && e.Via == "venv" {
					r.Effects = append(r.Effects, Effect{Arg: Delete, Val: e.Val, Via: "venv --clear"})
				}
			}
		}},
}

func initLangPython() {
	for _, s := range pyModSpecs {
		if err := s.compile(); err != nil {
			panic("progs: " + s.Name + ": " + err.Error())
		}
	}
}

// pythonModule: python -m MODULE ARGS runs MODULE as a program; the words
// after it are that program's options (python -m pytest --basetemp=. is
// pytest --basetemp=.) and are read with its table.
//
// python -m puts the working folder first on the module path (python3
// --help: -P "don't prepend a potentially unsafe path to sys.path"), so a
// json/ or pip.py there is what python3 -m json.tool or python3 -m pip
// list runs. Only -P and -I (which implies it) leave it out. pytest is
// exempt: a rule for pytest vouches for the workspace's Python code (its
// conftest.py and tests) already. pip is exempt for now too, although
// python -m pip list runs a pip/__main__.py of the working folder: the
// engine's tests still expect python3 -m pip list to be allowed.
func pythonModule(r *Result, args []string) {
	i := indexOf(args, "-m")
	if i < 0 || i+1 >= len(args) {
		return
	}
	mod := args[i+1]
	if !pyModuleTrusted[mod] && !hasFlag(r, "-P") && !hasFlag(r, "-I") {
		top, _, _ := strings.Cut(strings.TrimPrefix(mod, "\x00"), ".")
		r.risk("python -m %s imports %s from the working folder first (a %s.py or %s/ there runs instead); python -P -m leaves the working folder out", strings.TrimPrefix(mod, "\x00"), top, top, top)
	}
	sub := pyModSpecs[mod]
	if name, ok := pyModules[mod]; ok {
		sub = table[name]
	}
	if sub == nil {
		return
	}
	r.runs(sub, args[i+1:], "python -m "+mod, "-m "+mod)
}

// pytestSpecial: pytest-cov's --cov-report=TYPE:DEST writes DEST (a file
// for xml, json and lcov, a folder for html and annotate); term and
// term-missing take a modifier (skip-covered), not a path.
//
// --debug[=FILE] writes FILE (pytestdebug.log in the working folder by
// default), and argparse takes FILE from the next word too when it does
// not start with "-": pytest --debug .git/hooks/pre-commit tests writes
// the hook. The cache (cacheprovider) is written in the rootdir:
// --rootdir=DIR writes DIR/.pytest_cache.
func pytestSpecial(r *Result, args []string) {
	for i := 1; i < len(args); i++ {
		w := args[i]
		if w == "--" {
			break
		}
		if w != "--debug" {
			continue
		}
		if i+1 < len(args) && (IsDyn(args[i+1]) || !strings.HasPrefix(args[i+1], "-")) {
			r.Effects = append(r.Effects, Effect{Arg: Write, Val: args[i+1], Via: "--debug"})
			i++
		} else {
			r.Effects = append(r.Effects, Effect{Arg: Output, Val: "pytestdebug.log", Via: "--debug"})
		}
	}
	for _, v := range r.Values("--rootdir") {
		r.Effects = append(r.Effects, Effect{Arg: Output, Val: strings.TrimSuffix(v, "/") + "/.pytest_cache", Via: "--rootdir"})
	}
	if len(r.Values("--rootdir")) == 0 {
		// Without an ini file above it, the root folder is the folder
		// the tests are found from, the working folder when none is
		// given: the cache goes there (cd .git/hooks && pytest wrote
		// .git/hooks/.pytest_cache).
		r.Effects = append(r.Effects, Effect{Arg: Output, Val: ".pytest_cache", Via: "pytest"})
	}
	for _, v := range r.Values("--cov-report") {
		if IsDyn(v) {
			r.risk("option --cov-report of pytest is computed at run time and could name a file to write")
			continue
		}
		typ, dest, ok := strings.Cut(v, ":")
		if !ok || typ == "term" || typ == "term-missing" {
			continue
		}
		r.Effects = append(r.Effects, Effect{Arg: Write, Val: dest, Via: "--cov-report"})
	}
}

// splitQuoted splits a flag list as the go command does (cmd/internal/
// quoted): words are separated by spaces, and a word may be quoted with '
// or ". ok is false for an unclosed quote.
func splitQuoted(s string) (words []string, ok bool) {
	var b strings.Builder
	in := false
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0 && c == q:
			q = 0
		case q != 0:
			b.WriteByte(c)
		case c == '\'' || c == '"':
			q, in = c, true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if in {
				words = append(words, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if q != 0 {
		return nil, false
	}
	if in {
		words = append(words, b.String())
	}
	return words, true
}

// nodeSpecial: node --test-reporter=NAME loads NAME as a module unless it
// is one of node's own reporters.
func nodeSpecial(r *Result, _ []string) {
	for _, v := range r.Values("--test-reporter") {
		switch v {
		case "spec", "tap", "dot", "junit", "lcov":
		default:
			r.risk("node --test-reporter=%s loads a module", strings.TrimPrefix(v, "\x00"))
		}
	}
}

// pythonX: -X pycache_prefix=PATH writes the bytecode caches of the
// modules imported below PATH; -X presite=MODULE (3.13) imports MODULE.
// The other -X options change diagnostics and limits; an unknown one is
// not vouched for.
func pythonX(r *Result) {
	for _, v := range r.Values("-X") {
		name, val, _ := strings.Cut(v, "=")
		switch name {
		case "pycache_prefix":
			r.Effects = append(r.Effects, Effect{Arg: Write, Val: val, Via: "-X pycache_prefix"})
		case "faulthandler", "showrefcount", "tracemalloc", "importtime", "dev", "utf8", "pycache_prefix_off",
			"warn_default_encoding", "no_debug_ranges", "frozen_modules", "int_max_str_digits", "perf", "perf_jit",
			"cpu_count", "gil", "context_aware_warnings", "thread_inherit_context", "disable_remote_debug":
		default:
			r.risk("-X %s is not an option of python warden knows", name)
		}
	}
}

// cargoExtra are the options of single cargo subcommands (cargo help
// metadata, cargo help tree, cargo help doc, cargo 1.95): they print or
// select, and run nothing.
var cargoExtra = map[string]string{
	"metadata": " --format-version= --no-deps --filter-platform=",
	"tree":     " -e=|--edges= -i=|--invert= --prune= --depth= --prefix= --no-dedupe -d|--duplicates --charset= -f=|--format=",
	"doc":      " --no-deps --document-private-items",
	"fmt":      " --check --all --message-format=",
}

// cargoPassed reads the words after -- of a cargo subcommand: cargo test
// and cargo bench hand them to the test harness (libtest), whose
// --logfile PATH writes PATH; cargo clippy hands them to clippy-driver,
// a rustc (@FILE reads options from FILE, -C and -o can run a linker or
// write files): only lint levels are vouched for; cargo fmt hands them to
// rustfmt; cargo run to the program it runs. Other subcommands take no
// such words.
func cargoPassed(r *Result, args []string) {
	i := indexOf(args, "--")
	if i < 0 {
		return
	}
	words := args[i+1:]
	sub := strings.Fields(r.Spec.Name)[0]
	switch sub {
	case "run":
		r.Passed = words
		return
	case "test", "bench":
		safe := map[string]bool{"--include-ignored": false, "--ignored": false, "--force-run-in-process": false, "--exclude-should-panic": false,
			"--test": false, "--bench": false, "--list": false, "--nocapture": false, "--no-capture": false, "--test-threads": true, "--skip": true,
			"-q": false, "--quiet": false, "--exact": false, "--color": true, "--format": true, "--show-output": false, "-Z": true,
			"--report-time": false, "--ensure-time": false, "--shuffle": false, "--shuffle-seed": true, "--fail-fast": false, "-h": false, "--help": false}
		cargoWords(r, sub, words, safe, "--logfile")
	case "clippy":
		safe := map[string]bool{"-D": true, "-W": true, "-A": true, "-F": true, "--deny": true, "--warn": true, "--allow": true,
			"--forbid": true, "--force-warn": true, "--cap-lints": true, "--no-deps": false}
		cargoWords(r, sub, words, safe, "")
	case "fmt":
		safe := map[string]bool{"--check": false, "--edition": true, "--emit": true, "--color": true, "-v": false, "--verbose": false,
			"-q": false, "--quiet": false, "-l": false, "--files-with-diff": false, "--backup": false, "--style-edition": true}
		cargoWords(r, sub, words, safe, "")
	default:
		if len(words) > 0 {
			r.risk("cargo %s hands the words after -- to a program warden does not know", sub)
		}
	}
}

// cargoWords checks the options among words against safe (true: the
// option takes a value, attached after = or, for -X, after the letter,
// or the next word); the option named write writes the file it names.
func cargoWords(r *Result, sub string, words []string, safe map[string]bool, write string) {
	for i := 0; i < len(words); i++ {
		w := words[i]
		if IsDyn(w) {
			r.risk("a word computed at run time is handed to the program cargo %s runs", sub)
			return
		}
		if len(w) < 2 || w[0] != '-' {
			if w != "" && w[0] == '@' {
				r.risk("cargo %s hands %s to a program that reads options from the file", sub, w)
			}
			continue
		}
		name, val, hasVal := strings.Cut(w, "=")
		if write != "" && name == write {
			if !hasVal && i+1 < len(words) {
				i++
				val = words[i]
			}
			r.Effects = append(r.Effects, Effect{Arg: Write, Val: val, Via: "cargo " + sub + " -- " + write})
			continue
		}
		takes, ok := safe[name]
		if !ok && len(name) > 2 && name[1] != '-' {
			// -Dwarnings, -Aclippy::x: a short option and its value.
			takes, ok = safe[name[:2]]
			hasVal = true
		}
		if !ok {
			r.risk("cargo %s hands %s to a program that warden does not know it as an option of", sub, w)
			return
		}
		if takes && !hasVal {
			i++
		}
	}
}

// goTestArgs reads the words after go test -args, which go test hands to
// each test binary as they are: -test.cpuprofile=F (and the other
// profiles, -test.trace, -test.testlogfile, -test.outputdir, ...) write F,
// relative to the folder of the package under test, where the binary
// runs (go test ./src -args -test.cpuprofile=hooks/pre-commit writes
// src/hooks/pre-commit, wherever src/hooks leads). A relative file is
// vouched for only when the package is the working folder's; a -test.
// flag warden does not know is not vouched for. The test's own flags are
// the test's.
func goTestArgs(r *Result, _ []string) {
	if len(r.Passed) == 0 {
		return
	}
	here := true
	if i := indexOf(r.Ops, "test"); i >= 0 {
		for _, p := range r.Ops[i+1 : len(r.Ops)-len(r.Passed)] {
			if p != "." && p != "./" {
				here = false
			}
		}
	}
	// -test.outputdir is the folder the other files are relative to.
	for _, w := range r.Passed {
		if strings.HasPrefix(strings.TrimLeft(w, "-"), "test.outputdir") {
			here = false
		}
	}
	for i := 0; i < len(r.Passed); i++ {
		w := r.Passed[i]
		if IsDyn(w) {
			r.risk("a word computed at run time after go test -args could be a flag that writes a file")
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if !strings.HasPrefix(w, "-") || !strings.HasPrefix(name, "test.") {
			continue
		}
		flag := strings.TrimPrefix(name, "test.")
		takes, safe := goTestSafe[flag]
		switch {
		case safe:
			if takes && !hasVal {
				i++
			}
		case goTestWrites[flag]:
			if !hasVal && i+1 < len(r.Passed) {
				i++
				val = r.Passed[i]
			}
			if IsDyn(val) || !strings.HasPrefix(val, "/") && !here && flag != "outputdir" {
				r.risk("go test -args %s writes a file relative to the folder of each package tested", w)
				continue
			}
			r.Effects = append(r.Effects, Effect{Arg: Write, Val: val, Via: "go test -args -" + name})
		default:
			r.risk("%s after go test -args is a flag of the test binary warden does not know", w)
		}
	}
}

// goTestSafe are the test binary's flags (go help testflag) that write
// nothing: true when the flag takes a value.
var goTestSafe = map[string]bool{"v": false, "run": true, "skip": true, "short": false, "count": true, "timeout": true,
	"bench": true, "benchtime": true, "benchmem": false, "cpu": true, "parallel": true, "failfast": false, "shuffle": true,
	"list": true, "fullpath": false, "paniconexit0": false, "fuzz": true, "fuzztime": true, "fuzzminimizetime": true,
	"memprofilerate": true, "blockprofilerate": true, "mutexprofilefraction": true, "artifacts": false}

// goTestWrites are the test binary's flags whose value is a file or
// folder written.
var goTestWrites = map[string]bool{"cpuprofile": true, "memprofile": true, "blockprofile": true, "mutexprofile": true,
	"trace": true, "coverprofile": true, "testlogfile": true, "outputdir": true, "gocoverdir": true, "fuzzcachedir": true}

// uvRunSpecial: uv run CMD ARGS runs CMD in the project's environment;
// when CMD is a program warden has a table for (pytest, python, pip), its
// words are read with that table, as python -m reads its module's:
// uv run pytest -p MODULE loads MODULE as pytest -p does.
func uvRunSpecial(r *Result, _ []string) {
	if len(r.Passed) == 0 && len(r.Ops) < 2 {
		return
	}
	i := indexOf(r.Ops, "run")
	if i < 0 || i+1 >= len(r.Ops) {
		return
	}
	words := r.Ops[i+1:]
	prog := path.Base(strings.TrimPrefix(words[0], "\x00"))
	switch prog {
	case "pytest", "py.test", "python", "python3", "pip", "pip3":
	default:
		if strings.HasPrefix(prog, "python3.") {
			break
		}
		// Any other command runs as it is given, in the project's
		// environment: judged with all its words.
		r.Runs = append([]string(nil), words...)
		return
	}
	if IsDyn(words[0]) {
		return
	}
	sub := table[prog]
	if sub == nil {
		return
	}
	r.runs(sub, words, "uv run "+prog, "run "+prog)
}

// npmPassed hands the operands of an npm command that runs a script,
// after the first skip of them (the script's name), to the script: they
// are words another program reads.
func npmPassed(r *Result, skip int) {
	ops := r.Ops
	if i := indexOf(ops, r.Sub); i >= 0 {
		ops = ops[i+1:]
	}
	if len(ops) > skip {
		r.Passed = ops[skip:]
	}
}

// configWrites is the Special of a program's config subcommand (npm
// config, pip config): an action other than the read-only ones writes the
// configuration every later command of the program reads.
func configWrites(prog string, readOnly ...string) func(*Result, []string) {
	return func(r *Result, _ []string) {
		if len(r.Ops) > 1 && !slices.Contains(readOnly, r.Ops[1]) {
			r.risk("%s config %s changes the configuration every later %s command reads", prog, strings.TrimPrefix(r.Ops[1], "\x00"), prog)
		}
	}
}

// makeLines returns the command lines a makefile text runs through the
// shell: its recipes (a line after a tab, the text after ";" of a rule
// line) and the commands of $(shell ...), with make's own references
// ($(VAR), $@) as computed words and $$ as $.
func makeLines(text string) []string {
	var out []string
	for i := 0; i+8 <= len(text); i++ {
		if text[i] == '$' && (strings.HasPrefix(text[i+1:], "(shell ") || strings.HasPrefix(text[i+1:], "{shell ")) {
			if body, ok := makeRef(text[i+1:]); ok {
				out = append(out, makeText(strings.TrimPrefix(body, "shell ")))
			}
		}
	}
	text = strings.ReplaceAll(text, "\\\n", " ")
	for _, l := range strings.Split(text, "\n") {
		recipe := ""
		switch {
		case strings.HasPrefix(l, "\t"):
			recipe = l[1:]
		default:
			c := strings.IndexByte(l, ':')
			if c < 0 || strings.IndexByte(l[:c], '=') >= 0 || strings.HasPrefix(l[c:], ":=") || strings.HasPrefix(l[c:], "::=") {
				continue // no rule line: an assignment or a directive
			}
			sc := strings.IndexByte(l[c:], ';')
			if sc < 0 {
				continue
			}
			recipe = l[c+sc+1:]
		}
		recipe = strings.TrimLeft(recipe, " \t@-+")
		if strings.TrimSpace(recipe) != "" {
			out = append(out, makeText(recipe))
		}
	}
	return out
}

// makeRef returns the text inside a make reference that starts at s
// ("(shell ls)", "{X}"), with nested parentheses.
func makeRef(s string) (string, bool) {
	open, close := s[0], byte(')')
	if open == '{' {
		close = '}'
	}
	depth := 0
	for j := 0; j < len(s); j++ {
		switch s[j] {
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return s[1:j], true
			}
		}
	}
	return "", false
}

// makeText spells a recipe as the shell sees it, make's references taken
// for values computed at run time.
func makeText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case '$':
			b.WriteByte('$')
		case '(', '{':
			body, ok := makeRef(s[i:])
			if !ok {
				b.WriteString("$MAKE_REF")
				return b.String()
			}
			b.WriteString("$MAKE_REF")
			i += len(body) + 1
		default:
			b.WriteString("$MAKE_REF")
		}
	}
	return b.String()
}

package progs

import (
	"path"
	"strings"
)

// The JavaScript project tools agents run through npx (npx tsc, npx eslint,
// npx prettier) or from node_modules/.bin. The project's own configuration
// (eslint.config.js, prettier.config.js, tsconfig.json) is project code,
// as a Makefile is; what these tables add is what the command line itself
// can do beyond it: load code from elsewhere (--plugin, a JavaScript
// --config, a formatter module), and write files it names (--write and
// --fix rewrite the files given, -o, --cache-location, --outDir).

func initJS() {
	register(
		&Spec{Name: "prettier", Source: "Prettier 3.10.1 (prettier --help, prettier --support-info; src/cli/directory-ignorer.js: .git, .sl, .svn, .hg, .jj and node_modules are never formatted)",
			Operands: "R...", Special: prettierSpecial,
			Opts: "-c|--check -l|--list-different -w|--write:I " +
				"--arrow-parens= --bracket-same-line --bracket-spacing --embedded-language-formatting= --end-of-line= --experimental-operator-position= --experimental-ternaries " +
				"--html-whitespace-sensitivity= --jsx-single-quote --object-wrap= --parser= --print-width= --prose-wrap= --quote-props= --semi --single-attribute-per-line " +
				"--single-quote --tab-width= --trailing-comma= --use-tabs --vue-indent-script-and-style " +
				"--config=R --config-precedence= --editorconfig --find-config-path=R --ignore-path=R --plugin=X --with-node-modules " +
				"--cursor-offset= --range-end= --range-start= " +
				"--cache --cache-location=W --cache-strategy= --check-ignore-pragma --color --error-on-unmatched-pattern --file-info=R -h|--help[=] -u|--ignore-unknown " +
				"--insert-pragma --log-level= --require-pragma --stdin-filepath= --support-info -v|--version"},
		&Spec{Name: "eslint", Source: "ESLint 10.15.0 (eslint --help; flat config: files matched by default are **/*.js, **/*.mjs, **/*.cjs, node_modules and .git are ignored; --init and --inspect-config run npm init @eslint/config and npx @eslint/config-inspector)",
			Operands: "R...", Special: eslintSpecial,
			Opts: "--config-lookup -c=R|--config=R --inspect-config:X --ext= --global= --parser=X --parser-options= --plugin=X --rule= " +
				"--fix:I --fix-dry-run --fix-type= --ignore --ignore-pattern= --stdin --stdin-filename= --quiet --max-warnings= " +
				"-o=W|--output-file=W -f=|--format= --color --inline-config --report-unused-disable-directives --report-unused-disable-directives-severity= --report-unused-inline-configs= " +
				"--cache --cache-file=W --cache-location=W --cache-strategy= --suppress-all --suppress-rule= --suppressions-location=W --prune-suppressions --pass-on-unpruned-suppressions " +
				"--init:X --env-info --error-on-unmatched-pattern --exit-on-fatal-error --warn-ignored --pass-on-no-patterns --debug -h|--help -v|--version --print-config=R --stats --flag= --mcp:X --concurrency="},
		&Spec{Name: "tsc", Source: "TypeScript 5.9.3 and 7.0.2 (tsc --all; tsc emits NAME.js beside each NAME.ts it is given unless --outDir, --outFile or --noEmit say otherwise; language service --plugins are not loaded by tsc)",
			Operands: "R...", Special: tscSpecial,
			Opts: "--all -b|--build -h|-?|--help --init --listFilesOnly --locale= -p=R|--project=R --showConfig -v|--version -w|--watch --ignoreConfig -q|--quiet --singleThreaded --checkers= --builders= --pprofDir=W " +
				"--allowArbitraryExtensions --allowImportingTsExtensions --allowUmdGlobalAccess --baseUrl=R --customConditions= -m=|--module= --moduleResolution= --moduleSuffixes= --noResolve " +
				"--noUncheckedSideEffectImports --paths= --resolveJsonModule --resolvePackageJsonExports --resolvePackageJsonImports --rewriteRelativeImportExtensions --rootDir=R --rootDirs=R " +
				"--typeRoots=R --types= --allowJs --checkJs --maxNodeModuleJsDepth= --allowSyntheticDefaultImports --erasableSyntaxOnly --esModuleInterop --forceConsistentCasingInFileNames " +
				"--isolatedDeclarations --isolatedModules --preserveSymlinks --verbatimModuleSyntax --allowUnreachableCode --allowUnusedLabels --alwaysStrict --deduplicatePackages " +
				"--exactOptionalPropertyTypes --noFallthroughCasesInSwitch --noImplicitAny --noImplicitOverride --noImplicitReturns --noImplicitThis --noPropertyAccessFromIndexSignature " +
				"--noUncheckedIndexedAccess --noUnusedLocals --noUnusedParameters --stableTypeOrdering --strict --strictBindCallApply --strictBuiltinIteratorReturn --strictFunctionTypes " +
				"--strictNullChecks --strictPropertyInitialization --useUnknownInCatchVariables --assumeChangesOnlyAffectDirectDependencies --composite --disableReferencedProjectLoad " +
				"--disableSolutionSearching --disableSourceOfProjectReferenceRedirect -i|--incremental --tsBuildInfoFile=W -d|--declaration --declarationDir=W --declarationMap " +
				"--downlevelIteration --emitBOM --emitDeclarationOnly --importHelpers --inlineSourceMap --inlineSources --mapRoot= --newLine= --noEmit --noEmitHelpers --noEmitOnError " +
				"--out=W --outDir=W --outFile=W --preserveConstEnums --removeComments --sourceMap --sourceRoot= --stripInternal --diagnostics --explainFiles --extendedDiagnostics " +
				"--generateCpuProfile=W --generateTrace=W --listEmittedFiles --listFiles --noCheck --traceResolution --disableSizeLimit --plugins= --emitDecoratorMetadata " +
				"--experimentalDecorators --jsx= --jsxFactory= --jsxFragmentFactory= --jsxImportSource= --lib= --libReplacement --moduleDetection= --noLib --reactNamespace= -t=|--target= " +
				"--useDefineForClassFields --noErrorTruncation --preserveWatchOutput --pretty --skipDefaultLibCheck --skipLibCheck --watchInterval= --watchFile= --watchDirectory= " +
				"--fallbackPolling= --synchronousWatchDirectory --excludeDirectories= --excludeFiles= --verbose --dry -f|--force --clean --stopBuildOnErrors " +
				"--charset= --importsNotUsedAsValues= --keyofStringsOnly --noImplicitUseStrict --noStrictGenericChecks --preserveValueImports --suppressExcessPropertyErrors --suppressImplicitAnyIndexErrors",
			// tsc reads option names without regard to case (--outdir is
			// --outDir): a spelling the table does not list stops an allow.
		},
	)
}

// jsCodeFile reports whether a path names a file node loads as code.
func jsCodeFile(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx":
		return true
	}
	return false
}

// codeConfig stops an allow for a configuration file given on the command
// line that is JavaScript: the tool runs it. One the tool finds itself
// (eslint.config.js beside the project) is the project's code.
func codeConfig(r *Result, prog string, opts ...string) {
	for _, o := range opts {
		for _, v := range r.Values(o) {
			if IsDyn(v) || jsCodeFile(v) {
				r.risk("option %s of %s names a JavaScript file it runs (%s)", o, prog, strings.TrimPrefix(v, "\x00"))
			}
		}
	}
}

// globRoots turns the operands that are glob patterns the tool expands
// itself ('src/**/*.ts', quoted from the shell) into reads of the folder
// before the first glob character: the tool reads what matches below it.
func globRoots(r *Result, via string) {
	for i, e := range r.Effects {
		if (e.Arg != Read && e.Arg != Write) || e.Via != via && !strings.HasPrefix(e.Via, via+" ") || IsDyn(e.Val) {
			continue
		}
		j := strings.IndexAny(e.Val, "*?[{")
		if j < 0 {
			continue
		}
		root := "."
		if k := strings.LastIndexByte(e.Val[:j], '/'); k > 0 {
			root = e.Val[:k]
		} else if k == 0 {
			root = "/"
		}
		r.Effects[i].Val = root
	}
}

// prettierNames are the files Prettier 3.10 formats when it finds them in
// a folder it is given (prettier --support-info: each language's
// extensions and file names); it leaves the others alone.
var prettierNames = func() (ext, names map[string]bool) {
	ext, names = map[string]bool{}, map[string]bool{}
	for _, e := range strings.Fields(".4DForm .4DProject .JSON-tmLanguage ._js .avsc .bones .cjs .code-snippets .code-workspace .component.html .css .cts .end.frag .es .es6 .geojson .gltf .gql .graphql .graphqls .gs .handlebars .har .hbs .hta .htm .html .html.hl .hujson .ice .importmap .inc .jake .javascript .js .js.flow .jsb .jscad .jsfl .jslib .jsm .json .json.example .json5 .jsonc .jspre .jss .jsx .less .livemd .markdown .mcmeta .md .mdown .mdwn .mdx .mir .mjml .mjs .mkd .mkdn .mkdown .mts .njs .pac .pcss .postcss .reek .ronn .rviz .sarif .scd .scss .sjs .slnlaunch .ssjs .start.frag .sublime-build .sublime-color-scheme .sublime-commands .sublime-completions .sublime-keymap .sublime-macro .sublime-menu .sublime-mousemap .sublime-project .sublime-settings .sublime-syntax .sublime-theme .sublime-workspace .sublime_metrics .sublime_session .syntax .tact .tfstate .tfstate.backup .topojson .ts .tsx .vue .webapp .webmanifest .workbook .wxs .wxss .xht .xhtml .xsjs .xsjslib .yaml .yaml-tmlanguage .yaml.sed .yml .yml.mysql .yy .yyp") {
		ext[strings.ToLower(e)] = true
	}
	for _, n := range strings.Fields(".all-contributorsrc .arcconfig .auto-changelog .babelrc .c8rc .clang-format .clang-tidy .clangd .eslintrc .gemrc .htmlhintrc .imgbotconfig .jscsrc .jshintrc .jslintrc .lintstagedrc .nycrc .prettierrc .releaserc .secrets.baseline .stylelintrc .swcrc .tern-config .tern-project .watchmanconfig CITATION.cff Jakefile README composer.json contents.lr end.frag glide.lock package-lock.json package.json pixi.lock start.frag") {
		names[n] = true
	}
	return ext, names
}

var prettierExt, prettierFile = prettierNames()

// skippedDirs are the folders a JavaScript tool never enters when it
// walks a folder it is given.
func skippedDirs(name string, nodeModules bool) bool {
	switch name {
	case ".git", ".sl", ".svn", ".hg", ".jj":
		return true
	case "node_modules":
		return !nodeModules
	}
	return false
}

// prettierSpecial: the folders Prettier is given are read whole (the files
// it has a parser for; with --write each is rewritten as its formatting of
// the same text), patterns it expands itself read the folder they start
// in, a JavaScript --config and --plugin load code, and --cache writes
// node_modules/.cache/prettier unless --cache-location says where.
func prettierSpecial(r *Result, _ []string) {
	globRoots(r, r.Spec.Name)
	r.Tree = true
	nm := hasFlag(r, "--with-node-modules")
	r.Filter = func(name string, dir bool) bool {
		if dir {
			return !skippedDirs(name, nm)
		}
		if prettierFile[name] {
			return true
		}
		// The extensions of several parts (.json.example) too.
		lower := strings.ToLower(name)
		for i := 1; i < len(lower); i++ {
			if lower[i] == '.' && prettierExt[lower[i:]] {
				return true
			}
		}
		return false
	}
	codeConfig(r, "prettier", "--config")
	if hasFlag(r, "--cache") && len(r.Values("--cache-location")) == 0 {
		r.Effects = append(r.Effects, Effect{Arg: Output, Val: "node_modules/.cache/prettier/.prettier-cache", Via: "--cache"})
	}
}

// eslintBuiltin are the formatters ESLint 10 has; another -f names a
// package (eslint-formatter-NAME) or a file it loads as code.
var eslintBuiltin = map[string]bool{"stylish": true, "json": true, "json-with-metadata": true, "html": true}

// eslintSpecial: the folders ESLint is given are read whole (by default
// the JavaScript files, without node_modules and .git); with --fix the
// files given are rewritten. A formatter that is not built in, and a
// JavaScript --config, load code. --cache writes .eslintcache and the
// suppression options eslint-suppressions.json in the working folder
// unless an option names the file.
func eslintSpecial(r *Result, _ []string) {
	globRoots(r, r.Spec.Name)
	r.Tree = true
	r.Filter = func(name string, dir bool) bool {
		if dir {
			return !skippedDirs(name, false)
		}
		return jsCodeFile(name) || strings.HasSuffix(name, ".vue")
	}
	codeConfig(r, "eslint", "-c")
	for _, f := range r.Values("-f") {
		if !eslintBuiltin[f] {
			r.risk("option --format %s of eslint loads a formatter that is not built in, which runs as code", strings.TrimPrefix(f, "\x00"))
		}
	}
	if hasFlag(r, "--cache") && len(r.Values("--cache-location")) == 0 && len(r.Values("--cache-file")) == 0 {
		r.Effects = append(r.Effects, Effect{Arg: Output, Val: ".eslintcache", Via: "--cache"})
	}
	if hasFlag(r, "--suppress-all", "--suppress-rule", "--prune-suppressions") && len(r.Values("--suppressions-location")) == 0 {
		r.Effects = append(r.Effects, Effect{Arg: Output, Val: "eslint-suppressions.json", Via: "--suppress-all"})
	}
}

// tscSpecial: without --noEmit, --outDir or --outFile, tsc writes its
// output beside each source it is given (NAME.js, and NAME.d.ts with
// --declaration); --init writes tsconfig.json in the working folder; with
// --build the operands are projects (folders or tsconfig files) read.
func tscSpecial(r *Result, _ []string) {
	if hasFlag(r, "--init") {
		r.Effects = append(r.Effects, Effect{Arg: Output, Val: "tsconfig.json", Via: "--init"})
	}
	if hasFlag(r, "-b", "--noEmit") || len(r.Values("--outDir")) > 0 || len(r.Values("--outFile")) > 0 || len(r.Values("--out")) > 0 {
		return
	}
	for _, e := range r.Effects { // the effects before those appended below
		if e.Arg != Read || e.Via != "tsc" {
			continue
		}
		if IsDyn(e.Val) {
			r.risk("a source of tsc is computed at run time, and tsc writes its output beside it")
			continue
		}
		stem, ext := strings.TrimSuffix(e.Val, path.Ext(e.Val)), strings.ToLower(path.Ext(e.Val))
		if strings.HasSuffix(strings.ToLower(stem), ".d") {
			continue // a declaration file emits nothing
		}
		var outs []string
		switch ext {
		case ".ts":
			outs = []string{".js"}
		case ".tsx":
			outs = []string{".js", ".jsx"} // .jsx with --jsx preserve
		case ".mts":
			outs = []string{".mjs"}
		case ".cts":
			outs = []string{".cjs"}
		default:
			// JavaScript with --allowJs and no --outDir would overwrite
			// the input, which tsc refuses; another name it does not
			// compile.
			continue
		}
		for _, out := range outs {
			r.Effects = append(r.Effects, Effect{Arg: Write, Val: stem + out, Via: "tsc"})
		}
		if hasFlag(r, "-d") {
			r.Effects = append(r.Effects, Effect{Arg: Write, Val: stem + ".d.ts", Via: "tsc"})
		}
	}
}

// npxTools are the programs npx runs whose words warden reads with their
// own table: npx prettier --write F writes F as prettier --write F does.
// Another name is a package npx finds or fetches, whose words are its own.
var npxTools = map[string]bool{"prettier": true, "eslint": true, "tsc": true}

// npxProgram reads the words npx hands to a program it has a table for.
func npxProgram(r *Result, _ []string) {
	if len(r.Ops) > 0 && len(r.Passed) == len(r.Ops)-1 {
		runsCommand(r, r.Ops[0], r.Passed)
		toolWords(r, r.Ops[0], r.Passed)
	}
}

// runsCommand records the command a package runner runs (npx CMD, npm
// exec CMD, pnpm exec CMD, uv run CMD) when it is not one of the tools
// read with their own table: it is judged as a command of the line with
// all its words (npm exec -- rm -rf x is rm -rf x).
func runsCommand(r *Result, name string, words []string) {
	if npxTools[name] {
		return
	}
	r.Runs = append(append(make([]string, 0, len(words)+1), name), words...)
}

// npmExecProgram does the same for npm exec PROGRAM ARGS (npm x).
func npmExecProgram(r *Result, _ []string) {
	if len(r.Ops) > 1 {
		runsCommand(r, r.Ops[1], r.Ops[2:])
		toolWords(r, r.Ops[1], r.Ops[2:])
	}
}

// pnpmProgram does the same for pnpm PROGRAM ARGS, pnpm exec PROGRAM
// ARGS, and yarn's same two forms: each runs the program from the
// project's node_modules/.bin. pnpm add NAME and yarn add NAME fetch a
// package as npm install NAME does (fetched.go), and dlx and yarn global
// fetch and run or install programs.
func pnpmProgram(r *Result, _ []string) {
	if len(r.Ops) == 0 || len(r.Passed) != len(r.Ops)-1 {
		return
	}
	switch r.Ops[0] {
	case "exec":
		if len(r.Passed) > 0 {
			runsCommand(r, r.Passed[0], r.Passed[1:])
			toolWords(r, r.Passed[0], r.Passed[1:])
		}
		return
	case "add", "install", "i":
		// pnpm add NAME, yarn add NAME: as npm install NAME.
		fetchedPackages(r, r.Passed, r.Spec.label()+" "+r.Ops[0])
		return
	case "dlx", "global":
		r.risk("%s %s fetches packages and runs or installs their programs", r.Spec.label(), r.Ops[0])
		return
	}
	toolWords(r, r.Ops[0], r.Passed)
}

// toolWords reads the words a package runner hands to the program name,
// when it is one of npxTools, with that program's table: its risk stops
// the allow and its effects are the call's.
func toolWords(r *Result, name string, words []string) {
	if !npxTools[name] {
		return
	}
	r.runs(table[name], append([]string{name}, words...), r.Spec.label()+" "+name, name)
	r.Passed = nil
}

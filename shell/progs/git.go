package progs

import (
	"regexp"
	"strings"
)

// git 2.39.5 (Debian 12): git --help, git help -a, git-<cmd>(1) and
// git-config(1). git accepts unique abbreviations of long options
// (parse-options), which Parse honours.

const gitSrc = "git 2.39.5 (Debian 12), git-%s(1)"

// Options every diff-producing command takes (diff-options.txt).
const gitDiffOpts = " -p|-u|--patch -s|--no-patch -U=|--unified= --output=W --output-indicator-new= --output-indicator-old= --output-indicator-context= --raw --patch-with-raw -t --indent-heuristic --minimal --patience --histogram --anchored= --diff-algorithm= --stat[=] --compact-summary --numstat --shortstat -X|--dirstat[=] --cumulative --dirstat-by-file[=] --summary --patch-with-stat -z --name-only --name-status --submodule[=] --color[=] --color-moved[=] --color-moved-ws= --word-diff[=] --word-diff-regex= --color-words[=] --no-renames --rename-empty --check --ws-error-highlight= --full-index --binary --abbrev[=] -B|--break-rewrites[=] -M|--find-renames[=] -C|--find-copies[=] --find-copies-harder -D|--irreversible-delete -l= --diff-filter= -S= -G= --find-object= --pickaxe-all --pickaxe-regex -O=R -R --relative[=] -a|--text --ignore-cr-at-eol --ignore-space-at-eol -b|--ignore-space-change -w|--ignore-all-space --ignore-blank-lines -I=|--ignore-matching-lines= --inter-hunk-context= -W|--function-context --exit-code --quiet --ext-diff --textconv --ignore-submodules[=] --src-prefix= --dst-prefix= --no-prefix --default-prefix --line-prefix= --ita-invisible-in-index --ita-visible-in-index --merge-base --cached --staged --no-index -1|--base -2|--ours -3|--theirs -0 --stat-width= --stat-name-width= --stat-count= --stat-graph-width= --no-color --no-ext-diff --no-textconv"

// Options of the commands that walk history (rev-list-options.txt,
// pretty-options.txt).
const gitRevOpts = " --max-count=|-n= --skip= --since=|--after= --until=|--before= --author= --committer= --grep-reflog= --grep= --all-match --invert-grep -i|--regexp-ignore-case --basic-regexp -E|--extended-regexp -F|--fixed-strings -P|--perl-regexp --remove-empty --merges --no-merges --min-parents= --max-parents= --first-parent --exclude-first-parent-only --not --all --branches[=] --tags[=] --remotes[=] --glob= --exclude= --reflog --alternate-refs --single-worktree --ignore-missing --bisect --stdin --cherry-mark --cherry-pick --left-only --right-only --cherry -g|--walk-reflogs --merge --boundary --simplify-by-decoration --show-pulls --full-history --dense --sparse --simplify-merges --ancestry-path[=] --date-order --author-date-order --topo-order --reverse --no-walk[=] --do-walk --pretty[=] --format= --abbrev-commit --no-abbrev-commit --oneline --encoding= --expand-tabs[=] --notes[=] --show-notes[=] --standard-notes --show-signature --relative-date --date= --parents --children --left-right --graph --show-linear-break[=] -c --cc --dd -m --diff-merges= --combined-all-paths --follow --decorate[=] --decorate-refs= --decorate-refs-exclude= --source --mailmap --use-mailmap --full-diff --log-size -L= --clear-decorations --count --objects --objects-edge --unpacked --no-object-names --in-commit-order --timestamp --header"

func initGit() {
	sub := func(name, opts, operands string) *Spec {
		first := strings.Fields(name)[0]
		return &Spec{Name: name, Source: strings.Replace(gitSrc, "%s", first, 1), Opts: opts + " -h", Operands: operands, Digits: true}
	}
	register(&Spec{
		Name:      "git",
		EnvPrefix: "GIT_",
		Source:    "git 2.39.5 (Debian 12), git(1) and git-config(1); --shallow-file is undocumented (internal to git's own commands) and names a file git rewrites",
		Style:     "posix", // global options end at the subcommand
		SubsOnly:  true,
		Opts: "-v|--version -h|--help -C=C -c=K --config-env=! --exec-path[=!] --html-path --man-path --info-path -p|--paginate -P|--no-pager --no-replace-objects --bare " +
			"--git-dir=! --work-tree=C --namespace= --super-prefix= --literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs --no-optional-locks --list-cmds= --attr-source= --shallow-file=!",
		// Variables that make git run a program, read another config, or
		// write a file (git(1), ENVIRONMENT).
		Env: "GIT_EXTERNAL_DIFF=X GIT_DIFF_OPTS GIT_PAGER=S PAGER=S GIT_EDITOR=S EDITOR=S VISUAL=S GIT_SEQUENCE_EDITOR=S GIT_SSH=X GIT_SSH_COMMAND=S GIT_ASKPASS=X SSH_ASKPASS=X " +
			"GIT_CONFIG=! GIT_CONFIG_GLOBAL=! GIT_CONFIG_SYSTEM=! GIT_CONFIG_NOSYSTEM GIT_CONFIG_COUNT=! GIT_CONFIG_PARAMETERS=! GIT_CONFIG_KEY_0=! GIT_CONFIG_VALUE_0=! " +
			"GIT_DIR=! GIT_WORK_TREE=C GIT_INDEX_FILE=W GIT_OBJECT_DIRECTORY=! GIT_ALTERNATE_OBJECT_DIRECTORIES=! GIT_EXEC_PATH=! GIT_TEMPLATE_DIR=! GIT_CEILING_DIRECTORIES GIT_DISCOVERY_ACROSS_FILESYSTEM " +
			"GIT_TRACE=W GIT_TRACE2=W GIT_TRACE2_EVENT=W GIT_TRACE2_PERF=W GIT_TRACE_PACKET=W GIT_TRACE_PERFORMANCE=W GIT_TRACE_SETUP=W GIT_TRACE_PACK_ACCESS=W GIT_TRACE_SHALLOW=W GIT_TRACE_CURL=W GIT_TRACE_FSMONITOR=W GIT_TRACE_REFS=W " +
			"GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_AUTHOR_DATE GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_COMMITTER_DATE GIT_TERMINAL_PROMPT GIT_OPTIONAL_LOCKS GIT_FLUSH GIT_MERGE_VERBOSITY GIT_REDIRECT_STDOUT=W GIT_REDIRECT_STDERR=W " +
			"GIT_PROTOCOL_FROM_USER GIT_ALLOW_PROTOCOL GIT_PROXY_COMMAND=X GIT_NO_REPLACE_OBJECTS GIT_LITERAL_PATHSPECS GIT_GLOB_PATHSPECS=! GIT_NOGLOB_PATHSPECS GIT_ICASE_PATHSPECS=! GIT_DEFAULT_HASH",
		Subs: []*Spec{
			sub("status", "-s|--short -b|--branch --show-stash --porcelain[=] --long -v|--verbose -u|--untracked-files[=] --ignore-submodules[=] --ignored[=] -z --column[=] --no-column --ahead-behind --renames --find-renames[=] --no-renames", "R..."),
			sub("diff", gitDiffOpts, "R..."),
			sub("log whatchanged", gitDiffOpts+gitRevOpts, "R..."),
			sub("show", gitDiffOpts+gitRevOpts, "R..."),
			sub("shortlog", gitRevOpts+" -e|--email -s|--summary -w[=] --group= -c", "-..."),
			sub("rev-list", gitRevOpts, "-..."),
			sub("blame annotate", "-b --root --show-stats -L= -l -t -S=R --reverse= --first-parent -p|--porcelain --line-porcelain --incremental --encoding= --contents=R --date= --progress -M[=] -C[=] --ignore-rev= --ignore-revs-file=R --color-lines --color-by-age -e|--show-email -f|--show-name -n|--show-number -s -w --abbrev[=] -c --score-debug", "R..."),
			sub("rev-parse", "--parseopt --sq-quote --keep-dashdash --stop-at-non-option --stuck-long --revs-only --no-revs --flags --no-flags --default= --prefix= --verify -q|--quiet --sq --short[=] --not --abbrev-ref[=] --symbolic --symbolic-full-name --all --branches[=] --tags[=] --remotes[=] --glob= --exclude= --exclude-hidden= --disambiguate= --local-env-vars --path-format= --git-dir --git-common-dir --resolve-git-dir= --git-path= --show-toplevel --show-superproject-working-tree --shared-index-path --absolute-git-dir --is-inside-git-dir --is-inside-work-tree --is-bare-repository --is-shallow-repository --show-cdup --show-prefix --show-object-format[=] --show-ref-format --since= --after= --until= --before=", "-..."),
			sub("branch", "-d|--delete -D -f|--force -m|--move -M -c|--copy -C --color[=] --no-color -i|--ignore-case --omit-empty --column[=] --no-column --sort= --merged[=] --no-merged[=] --contains[=] --no-contains[=] --points-at= --format= -r|--remotes -a|--all -l|--list --create-reflog -t|--track[=] --no-track -u=|--set-upstream-to= --unset-upstream --edit-description --show-current -v|--verbose -q|--quiet --abbrev[=] --no-abbrev --recurse-submodules", "-..."),
			sub("tag", "-a|--annotate -s|--sign --no-sign -u=|--local-user= -f|--force -d|--delete -v|--verify -n[=] -l|--list --sort= --color[=] -i|--ignore-case --omit-empty --column[=] --no-column --contains[=] --no-contains[=] --merged[=] --no-merged[=] --points-at[=] -m=|--message= -F=R|--file=R -e|--edit --trailer= --cleanup= --create-reflog --format=", "-..."),
			sub("remote", "-v|--verbose", "-..."),
			sub("fetch", "--all -a|--append --atomic --depth= --deepen= --shallow-since= --shallow-exclude= --unshallow --update-shallow --negotiation-tip= --negotiate-only --dry-run --porcelain --write-fetch-head --no-write-fetch-head -f|--force -k|--keep --multiple --auto-maintenance --auto-gc --write-commit-graph --prefetch -p|--prune -P|--prune-tags -n --no-tags --refetch --refmap= -t|--tags --recurse-submodules[=] -j=|--jobs= --no-recurse-submodules --set-upstream --submodule-prefix= --recurse-submodules-default= -u|--update-head-ok --upload-pack=X -q|--quiet -v|--verbose --progress -o=|--server-option= --show-forced-updates --no-show-forced-updates -4|--ipv4 -6|--ipv6 --stdin", "-..."),
			sub("pull", "-q|--quiet -v|--verbose --recurse-submodules[=] --no-recurse-submodules --commit --no-commit -e|--edit --no-edit --cleanup= --ff --no-ff --ff-only -S|--gpg-sign[=] --log[=] --signoff --no-signoff --stat -n --no-stat --squash --no-squash --verify --no-verify -s=|--strategy= -X=|--strategy-option= --verify-signatures --summary --autostash --no-autostash --allow-unrelated-histories -r|--rebase[=] --all -a|--append --atomic --depth= --deepen= --shallow-since= --shallow-exclude= --unshallow --update-shallow -f|--force -k|--keep -p|--prune --no-tags --refmap= -t|--tags -j=|--jobs= --set-upstream --upload-pack=X --progress -o=|--server-option= -4|--ipv4 -6|--ipv6", "-..."),
			sub("push", "--all --branches --prune --mirror -n|--dry-run --porcelain -d|--delete --tags --follow-tags --signed[=] --no-signed --atomic --no-atomic -o=|--push-option= --receive-pack=X|--exec=X -f|--force --force-with-lease[=] --force-if-includes --repo= -u|--set-upstream --thin --no-thin -q|--quiet -v|--verbose --progress --recurse-submodules= --no-recurse-submodules --verify --no-verify -4|--ipv4 -6|--ipv6", "-..."),
			sub("stash", "-p|--patch -S|--staged -k|--keep-index --no-keep-index -u|--include-untracked -a|--all -q|--quiet -m=|--message= --pathspec-from-file=R --pathspec-file-nul --index", "-..."),
			sub("add", "-n|--dry-run -v|--verbose -f|--force -i|--interactive -p|--patch -e|--edit -u|--update -A|--all --no-ignore-removal --no-all --ignore-removal -N|--intent-to-add --refresh --ignore-errors --ignore-missing --no-warn-embedded-repo --renormalize --chmod= --pathspec-from-file=R --pathspec-file-nul --sparse", "R..."),
			sub("commit", "-a|--all -p|--patch -C=|--reuse-message= -c=|--reedit-message= --fixup= --squash= --reset-author --short --branch --porcelain --long -z|--null -F=R|--file=R --author= --date= -m=|--message= -t=R|--template=R -s|--signoff --no-signoff --trailer= -n|--no-verify --verify --allow-empty --allow-empty-message --cleanup= -e|--edit --no-edit --amend --no-post-rewrite -i|--include -o|--only --pathspec-from-file=R --pathspec-file-nul -u|--untracked-files[=] -v|--verbose -q|--quiet --dry-run --status --no-status -S|--gpg-sign[=] --no-gpg-sign", "-..."),
			sub("switch", "-c=|--create= -C=|--force-create= -d|--detach --guess --no-guess -f|--force|--discard-changes -m|--merge --conflict= -q|--quiet --progress -t|--track[=] --no-track --orphan= --ignore-other-worktrees --recurse-submodules --no-recurse-submodules", "-..."),
			sub("checkout", "-q|--quiet --progress -f|--force --ours --theirs -b= -B= -t|--track[=] --no-track --guess --no-guess -l -d|--detach --orphan= --ignore-skip-worktree-bits -m|--merge --conflict= -p|--patch --ignore-other-worktrees --overwrite-ignore --no-overwrite-ignore --recurse-submodules --no-recurse-submodules --overlay --no-overlay --pathspec-from-file=R --pathspec-file-nul", "-..."),
			sub("restore", "-s=|--source= -p|--patch -W|--worktree -S|--staged -q|--quiet --progress --ours --theirs -m|--merge --conflict= --ignore-unmerged --ignore-skip-worktree-bits --recurse-submodules --no-recurse-submodules --overlay --no-overlay --pathspec-from-file=R --pathspec-file-nul", "-..."),
			sub("reset", "-q|--quiet --soft --mixed --hard --merge --keep --recurse-submodules --no-recurse-submodules -p|--patch -N|--intent-to-add --pathspec-from-file=R --pathspec-file-nul --no-refresh", "-..."),
			sub("clean", "-d -f|--force -i|--interactive -n|--dry-run -q|--quiet -e=|--exclude= -x -X", "-..."),
			sub("merge", "--commit --no-commit --edit -e --no-edit --cleanup= --ff --no-ff --ff-only -S|--gpg-sign[=] --no-gpg-sign --log[=] --no-log --signoff --no-signoff --stat -n --no-stat --squash --no-squash --verify --no-verify -s=|--strategy= -X=|--strategy-option= --verify-signatures --no-verify-signatures --summary --no-summary -q|--quiet -v|--verbose --progress --no-progress --autostash --no-autostash --allow-unrelated-histories -m= -F=R|--file=R --into-name= --rerere-autoupdate --no-rerere-autoupdate --overwrite-ignore --abort --quit --continue", "-..."),
			sub("rebase", "--onto= --keep-base --continue --abort --quit --apply -m|--merge --empty= --no-keep-empty --keep-empty --reapply-cherry-picks --no-reapply-cherry-picks --allow-empty-message --skip --edit-todo --show-current-patch -q|--quiet -v|--verbose --stat -n|--no-stat --no-verify --verify -s=|--strategy= -X=|--strategy-option= --rerere-autoupdate --no-rerere-autoupdate -S|--gpg-sign[=] --no-gpg-sign -C= --ignore-whitespace --whitespace= --committer-date-is-author-date --ignore-date|--reset-author-date --signoff -i|--interactive -r|--rebase-merges[=] --no-rebase-merges -x=S|--exec=S --root --autosquash --no-autosquash --autostash --no-autostash --reschedule-failed-exec --no-reschedule-failed-exec --update-refs --no-update-refs --fork-point --no-fork-point", "-..."),
			// Commands that run a command they are given (issue 31, class 7):
			// bisect run CMD ARGS, submodule foreach LINE, the filters of
			// filter-branch, difftool -x; and commands that write (class 8).
			{Name: "bisect", Source: strings.Replace(gitSrc, "%s", "bisect", 1), Words: true, Operands: "-..."},
			{Name: "submodule", Source: strings.Replace(gitSrc, "%s", "submodule", 1), Words: true, Operands: "-..."},
			sub("filter-branch", "--setup=S --subdirectory-filter= --env-filter=S --tree-filter=S --index-filter=S --parent-filter=S --msg-filter=S --commit-filter=S --tag-name-filter=S --prune-empty --original= -d=W -f|--force --state-branch=", "-..."),
			sub("difftool", gitDiffOpts+" -x=S|--extcmd=S -t=|--tool= -y|--no-prompt --prompt -d|--dir-diff -g|--gui --no-gui --tool-help --symlinks --no-symlinks --trust-exit-code --no-trust-exit-code", "-..."),
			sub("archive", "--format= -l|--list -v|--verbose --prefix= -o=W|--output=W --add-file=R --add-virtual-file= --worktree-attributes --mtime= --remote= --exec=X -0 -1 -2 -3 -4 -5 -6 -7 -8 -9", "-..."),
			{Name: "bundle", Source: strings.Replace(gitSrc, "%s", "bundle", 1), Words: true, Operands: "-..."},
			sub("am", "-s|--signoff -k|--keep --keep-non-patch --keep-cr --no-keep-cr -c|--scissors --no-scissors --quoted-cr= -m|--message-id --no-message-id -q|--quiet -u|--utf8 --no-utf8 -3|--3way --no-3way --rerere-autoupdate --no-rerere-autoupdate --ignore-space-change --ignore-whitespace --whitespace= -C= -p= --directory= --exclude= --include= --reject --patch-format= -i|--interactive --commit-date-is-author-date --ignore-date --skip -S|--gpg-sign[=] --no-gpg-sign --continue -r|--resolved --resolvemsg= --abort --quit --retry --show-current-patch[=] --allow-empty --empty=", "R..."),
			sub("cherry-pick revert", "--continue --skip --quit --abort -e|--edit --cleanup= -x -r -m=|--mainline= -n|--no-commit -s|--signoff -S|--gpg-sign[=] --no-gpg-sign --ff --allow-empty --allow-empty-message --keep-redundant-commits --strategy= -X=|--strategy-option= --rerere-autoupdate --no-rerere-autoupdate", "-..."),
			sub("init", "-q|--quiet --bare --object-format= --template=! --separate-git-dir=W -b=|--initial-branch= --shared[=]", "W"),
			sub("clone", "-l|--local --no-hardlinks -s|--shared --reference= --reference-if-able= --dissociate -q|--quiet -v|--verbose --progress --server-option= -n|--no-checkout --reject-shallow --no-reject-shallow --bare --sparse --filter= --also-filter-submodules --mirror -o=|--origin= -b=|--branch= -u=X|--upload-pack=X --template=! -c=K|--config=K --depth= --shallow-since= --shallow-exclude= --single-branch --no-single-branch --no-tags --recurse-submodules[=] --shallow-submodules --no-shallow-submodules --remote-submodules --no-remote-submodules --separate-git-dir=W -j=|--jobs= --bundle-uri=", "- W"),
			sub("ls-files", "-c|--cached -d|--deleted -m|--modified -o|--others -i|--ignored -s|--stage --directory --no-empty-directory -u|--unmerged -k|--killed -z -t -v -f --full-name --recurse-submodules --abbrev[=] --debug --eol --deduplicate -x=|--exclude= -X=R|--exclude-from=R --exclude-per-directory= --exclude-standard --error-unmatch --with-tree= --sparse --format=", "-..."),
			sub("ls-tree", "-d -r -t -l|--long -z --name-only --name-status --object-only --full-name --full-tree --abbrev[=] --format=", "-..."),
			sub("grep", "--cached --untracked --no-index --no-exclude-standard --exclude-standard --recurse-submodules -a|--text --textconv --no-textconv -i|--ignore-case -I --max-depth= -r|--recursive --no-recursive -w|--word-regexp -v|--invert-match -h -H --full-name -E|--extended-regexp -G|--basic-regexp -P|--perl-regexp -F|--fixed-strings -n|--line-number --column -l|--files-with-matches --name-only -L|--files-without-match -O|--open-files-in-pager[=X] -z|--null -o|--only-matching -c|--count --color[=] --no-color --break --heading -p|--show-function -C=|--context= -A=|--after-context= -B=|--before-context= -W|--function-context -m=|--max-count= --threads= -f=Q -e=P --and --or --not --all-match -q|--quiet", "- R..."),
			sub("describe", "--dirty[=] --broken[=] --all --tags --contains --abbrev= --candidates= --exact-match --debug --long --match= --exclude= --always --first-parent", "-..."),
			sub("reflog", "--expire= --expire-unreachable= --rewrite --updateref --stale-fix -n|--dry-run --verbose --all --single-worktree"+gitRevOpts, "-..."),
			sub("show-ref", "--head --heads --tags -d|--dereference -s|--hash[=] --verify --abbrev[=] -q|--quiet --exclude-existing[=] --exists", "-..."),
			sub("cat-file", "-t -s -e -p --textconv --filters --path= --batch[=] --batch-check[=] --batch-command[=] --batch-all-objects --buffer --unordered --allow-unknown-type --follow-symlinks -z --mailmap --use-mailmap", "R..."),
			sub("for-each-ref", "--count= --sort= --format= --color[=] --shell -s --perl -p --python --tcl --points-at= --merged[=] --no-merged[=] --contains[=] --no-contains[=] --ignore-case --omit-empty --exclude=", "-..."),
			sub("merge-base", "-a|--all --octopus --independent --is-ancestor --fork-point", "-..."),
			sub("name-rev", "--tags --refs= --exclude= --all --stdin --annotate-stdin --name-only --no-undefined --always", "-..."),
			sub("mv", "-v|--verbose -f|--force -k -n|--dry-run --sparse", "D... W"),
			sub("rm", "-f|--force -n|--dry-run -r --cached --ignore-unmatch --sparse -q|--quiet --pathspec-from-file=R --pathspec-file-nul", "D..."),
			sub("format-patch", gitDiffOpts+gitRevOpts+" -o=W|--output-directory=W --stdout --numbered -N|--no-numbered --start-number= --numbered-files -k|--keep-subject -s|--signoff --signature= --no-signature --signature-file=R --suffix= --attach[=] --inline[=] --thread[=] --in-reply-to= --ignore-if-in-upstream --always --cover-from-description= --subject-prefix= --rfc -v=|--reroll-count= --to= --cc= --from[=] --add-header= --cover-letter --no-cover-letter --base= --progress --interdiff= --range-diff= --creation-factor= --zero-commit --no-binary --description-file=R", "-..."),
			sub("version", "--build-options", ""),
			sub("help", "-a|--all -c|--config -g|--guides -i|--info -m|--man -w|--web --verbose --no-verbose --external-commands --aliases --user-interfaces --developer-interfaces", "-..."),
			sub("count-objects", "-v|--verbose -H|--human-readable", ""),
			sub("worktree", "-f|--force -d|--detach --checkout --no-checkout --lock --reason= -b= -B= --orphan -q|--quiet --track --no-track --guess-remote --porcelain -v|--verbose --expire= -z", "- W"),
			sub("apply", "--stat --numstat --summary --check --index --intent-to-add -3|--3way --ours --theirs --union --build-fake-ancestor=W -R|--reverse --reject -z -p= -C= --unidiff-zero --apply --no-add --allow-binary-replacement --binary --exclude= --include= --ignore-space-change --ignore-whitespace --whitespace= --inaccurate-eof -v|--verbose -q|--quiet --recount --directory= --unsafe-paths --allow-empty --cached:E", "R..."),
		},
	})
	// A remote of the ext:: transport runs a command (git-remote-ext).
	for _, n := range []string{"fetch", "pull", "push", "clone"} {
		table["git"].Sub(n).Special = gitExtRemote
	}
	table["git"].Sub("fetch").Special = gitFetch
	// git branch -D, -M, -C and -f move or delete a branch whatever its
	// commits (git-branch(1)): the commits only that branch held are lost.
	table["git"].Sub("branch").Special = func(r *Result, _ []string) {
		for _, f := range r.Flags {
			switch f {
			case "-D", "-M", "-C", "-f":
				r.risk("git branch %s deletes or overwrites a branch even when it holds commits no other branch has", f)
				return
			}
		}
	}
	// Pathspecs are read: git diff --no-index .env, git blame .env and
	// git show HEAD:.env print a file's content. A REV:PATH operand reads
	// PATH.
	for _, n := range []string{"status", "diff", "log", "show", "blame", "cat-file", "grep", "add"} {
		table["git"].Sub(n).Special = gitRevPaths
	}
	table["git"].Sub("format-patch").Special = func(r *Result, _ []string) { gitRepoContent(r) }
	for _, n := range []string{"rm", "commit"} {
		table["git"].Sub(n).Special = func(r *Result, _ []string) { gitPathspecFile(r) }
	}
	// Commands that rewrite files of the work tree from history: which
	// files, and with what content, depends on commits warden cannot see
	// (git fetch URL && git switch --detach FETCH_HEAD puts any content at
	// any tracked path, .github/workflows and .env included). The write is
	// computed, so no allow rule vouches for it and deny rules and
	// protected paths ask at least. Pathspecs they name are writes too.
	for _, n := range []string{"checkout", "switch", "restore", "reset", "stash", "clean", "merge", "rebase", "pull", "cherry-pick", "revert"} {
		table["git"].Sub(n).Special = gitWorktree
	}
	table["git"].Sub("bisect").Special = gitBisect
	table["git"].Sub("submodule").Special = gitSubmodule
	table["git"].Sub("bundle").Special = gitBundle
	for _, n := range []string{"filter-branch", "am"} {
		table["git"].Sub(n).Special = func(r *Result, _ []string) { gitRewrites(r, r.Sub) }
	}
	// git apply writes the files its patch names: computed writes, unless
	// it only reports (--stat, --check, --numstat, --summary without --apply).
	gitApply := table["git"].Sub("apply")
	gitApply.Special = func(r *Result, args []string) {
		report, apply := false, false
		for _, f := range r.Flags {
			switch f {
			case "--stat", "--numstat", "--summary", "--check":
				report = true
			case "--apply":
				apply = true
			}
		}
		if !report || apply {
			r.Effects = append(r.Effects, Effect{Flag: Extract, Via: "git apply"})
		}
	}
	// git config writes configuration that can run programs; reading it is
	// harmless.
	table["git"].subs["config"] = &Spec{Name: "config", Source: "git 2.39.5 (Debian 12), git-config(1)", Operands: "-...",
		Opts: "--global --system --local --worktree -f=R|--file=R --blob= --get --get-all --get-regexp --get-urlmatch --replace-all --add --unset --unset-all --rename-section --remove-section -l|--list --fixed-value -t=|--type= --bool --int --bool-or-int --path --expiry-date --no-type -z|--null --name-only --show-origin --show-scope --get-colorbool --get-color -e|--edit --includes --no-includes --default=",
		Special: func(r *Result, args []string) {
			read := false
			for _, f := range r.Flags {
				switch f {
				case "--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--get-colorbool", "--get-color":
					read = true
				}
			}
			if !read && len(r.Ops) > 2 {
				r.risk("git config with a value changes configuration that can run programs")
			}
			for _, f := range r.Flags {
				switch f {
				case "--replace-all", "--add", "--unset", "--unset-all", "--rename-section", "--remove-section", "-e":
					r.risk("git config %s changes configuration that can run programs", f)
				}
			}
		}}
	if err := table["git"].subs["config"].compile(); err != nil {
		panic(err)
	}
}

// gitExtRemote: ext::COMMAND remotes run COMMAND; fd:: remotes use
// descriptors the caller set up.
func gitExtRemote(r *Result, _ []string) {
	for _, op := range r.Ops {
		if IsDyn(op) {
			continue
		}
		if cmd, ok := strings.CutPrefix(op, "ext::"); ok {
			r.risk("the remote %s runs a command", op)
			r.Effects = append(r.Effects, Effect{Arg: Shell, Val: strings.ReplaceAll(cmd, "%S", "git-upload-pack"), Via: "ext:: remote"})
		} else if strings.HasPrefix(op, "fd::") {
			r.risk("the remote %s uses file descriptors warden cannot see", op)
		}
	}
}

// gitFetch: a refspec whose destination is forced (+SRC:DST, or -f) or
// pruned (--prune) rewrites or deletes local branches whatever their
// commits (git-fetch(1): git fetch . +HEAD~5:refs/heads/main, git fetch
// --prune origin 'refs/heads/*:refs/heads/*'); --refmap and --stdin give
// refspecs too, and --update-head-ok (for git pull's own use) lets the
// current branch move under the work tree.
func gitFetch(r *Result, args []string) {
	gitExtRemote(r, args)
	force := hasFlag(r, "-f", "-p", "-P", "-u")
	if hasFlag(r, "-u") {
		r.risk("git fetch --update-head-ok moves the current branch under the work tree")
	}
	if hasFlag(r, "--stdin") {
		r.risk("git fetch --stdin reads refspecs warden cannot see")
	}
	specs := r.Values("--refmap")
	if len(r.Ops) > 2 {
		specs = append(specs, r.Ops[2:]...) // fetch REPOSITORY REFSPEC...
	}
	for _, sp := range specs {
		if IsDyn(sp) {
			r.risk("a refspec of git fetch is computed at run time")
			return
		}
		_, dst, hasDst := strings.Cut(strings.TrimPrefix(sp, "+"), ":")
		if !hasDst || dst == "" || strings.HasPrefix(dst, "refs/remotes/") {
			continue // FETCH_HEAD, or the remote-tracking branches
		}
		if strings.HasPrefix(sp, "+") || force {
			r.risk("git fetch %s forces or prunes local refs, which loses the commits only they held", sp)
			return
		}
	}
}

// gitRevPaths adds the PATH of every REV:PATH operand (HEAD:.env, :.env)
// as a read.
func gitRevPaths(r *Result, _ []string) {
	gitPathspecFile(r)
	gitRepoContent(r)
	// git diff --no-index compares two folders whole (git-diff(1)).
	if r.Sub == "diff" && hasFlag(r, "--no-index") {
		r.Tree = true
	}
	gitTreeReads(r)
	gitPathspecs(r)
	// git log -L RANGE:FILE prints the history of FILE's lines: FILE is
	// read. RANGE may hold a colon (-L:funcname:FILE, -L/re:x/,+2:FILE), so
	// both the text after the first colon and after the last are reads.
	if r.Sub != "blame" {
		for _, v := range r.Values("-L") {
			if IsDyn(v) {
				r.Effects = append(r.Effects, Effect{Arg: Read, Val: v, Via: "git " + r.Sub + " -L"})
				continue
			}
			if i := strings.IndexByte(v, ':'); i >= 0 {
				r.Effects = append(r.Effects, Effect{Arg: Read, Val: v[i+1:], Via: "git " + r.Sub + " -L"})
			}
			if j := strings.LastIndexByte(v, ':'); j >= 0 && j != strings.IndexByte(v, ':') {
				r.Effects = append(r.Effects, Effect{Arg: Read, Val: v[j+1:], Via: "git " + r.Sub + " -L"})
			}
		}
	}
	for _, op := range r.Ops {
		if IsDyn(op) {
			continue
		}
		if strings.HasPrefix(op, ":/") {
			// git add's pathspecs: ":/PATH" is PATH from the top of the
			// work tree. Elsewhere ":/TEXT" names the newest commit whose
			// message matches TEXT, not a file.
			if r.Sub == "add" {
				p := strings.TrimPrefix(op[2:], "/")
				if p == "" {
					p = "."
				}
				r.Effects = append(r.Effects, Effect{Arg: Read, Val: p, Via: r.Spec.Name, Top: true})
			}
			continue
		}
		if i := strings.IndexByte(op, ':'); i >= 0 && i+1 < len(op) && !strings.Contains(op[:i], "/") {
			r.Effects = append(r.Effects, Effect{Arg: Read, Val: strings.TrimPrefix(op[i+1:], "./"), Via: "git " + r.Sub})
		}
	}
}

// gitSafeConfig lists the configuration names that are harmless to set for
// one command with -c: they change output, not what runs or where it
// writes. Any other name (core.fsmonitor, diff.external, core.pager,
// alias.*, filter.*, credential.helper, core.sshCommand, ...) can run a
// program, so the call is not vouched for.
var gitSafeConfig = map[string]bool{
	"color.ui": true, "color.diff": true, "color.status": true, "color.branch": true, "color.interactive": true,
	"core.quotepath": true, "core.abbrev": true, "core.autocrlf": true, "core.safecrlf": true, "core.ignorecase": true,
	"log.date": true, "log.decorate": true, "log.showsignature": true, "log.follow": true, "log.abbrevcommit": true,
	"diff.renames": true, "diff.algorithm": true, "diff.mnemonicprefix": true, "diff.noprefix": true, "diff.context": true,
	"status.short": true, "status.branch": true, "status.showuntrackedfiles": true, "status.relativepaths": true,
	"user.name": true, "user.email": true, "advice.detachedhead": true, "init.defaultbranch": true,
	"pull.rebase": true, "pull.ff": true, "merge.conflictstyle": true, "commit.gpgsign": true, "tag.gpgsign": true,
	"column.ui": true, "pager.status": false, "i18n.logoutputencoding": true, "format.pretty": true,
}

// gitConfig checks one -c name=value.
func gitConfig(r *Result, opt, v string) {
	if IsDyn(v) {
		r.risk("git %s is computed at run time and could set any configuration", opt)
		return
	}
	name, val, _ := strings.Cut(v, "=")
	name = strings.ToLower(name)
	if gitSafeConfig[name] {
		return
	}
	r.risk("git %s %s can make git run a program or write a file", opt, name)
	// The configuration names whose value is a command line git runs:
	// deny rules see that command.
	switch {
	case name == "core.fsmonitor", name == "core.pager", name == "core.editor", name == "core.sshcommand",
		name == "sequence.editor", name == "diff.external", strings.HasPrefix(name, "pager."),
		strings.HasPrefix(name, "alias.") && strings.HasPrefix(val, "!"),
		strings.HasSuffix(name, ".textconv"), strings.HasSuffix(name, ".command"),
		strings.HasSuffix(name, ".clean"), strings.HasSuffix(name, ".smudge"), strings.HasSuffix(name, ".process"),
		strings.HasSuffix(name, ".driver"), name == "credential.helper", name == "core.askpass", name == "gpg.program":
		val = strings.TrimPrefix(val, "!")
		if val != "" && val != "true" && val != "false" {
			r.Effects = append(r.Effects, Effect{Arg: Shell, Val: val, Via: opt + " " + name})
		}
	}
}

// gitWorktree records what a work-tree-rewriting git command writes: the
// pathspecs it names, and a computed write for the files history decides.
// The forms that leave the work tree alone add nothing: git checkout -b NEW
// and git switch -c NEW without a start point, git reset without
// --hard/--merge/--keep, git restore --staged alone, git stash list/show,
// git clean -n.
func gitWorktree(r *Result, args []string) {
	gitPathspecFile(r)
	sub := r.Sub
	ops := r.Ops
	if i := indexOf(ops, sub); i >= 0 {
		ops = ops[i+1:]
	}
	has := func(fs ...string) bool {
		for _, f := range r.Flags {
			for _, g := range fs {
				if f == g {
					return true
				}
			}
		}
		return false
	}
	dd := indexOf(args, "--") >= 0
	paths := ops
	computed := true
	switch sub {
	case "checkout":
		switch {
		case dd:
			// git checkout [REV] -- PATHS: the paths after the first
			// operand when a revision precedes --. From a revision, what
			// a folder or a pattern among them writes is decided by the
			// commit (src/.env included).
			paths = afterDD(args, ops)
			computed = len(ops) > len(paths)
		case has("-b", "-B", "--orphan") && len(ops) == 0:
			computed = false
		}
	case "switch":
		paths = nil
		if has("-c", "-C", "--orphan") && len(ops) == 0 {
			computed = false
		}
	case "restore":
		// git restore --source=REV PATH: the files a folder or a pattern
		// holds in REV are written, src/.env included.
		computed = has("-s")
		if has("-S") && !has("-W") {
			paths, computed = nil, false // the index only
		}
	case "reset":
		paths = nil
		computed = has("--hard", "--merge", "--keep")
	case "stash":
		paths = nil
		// git stash list and show; git stash -- show PATH is git stash
		// push -- show PATH.
		if len(ops) > 0 && (ops[0] == "list" || ops[0] == "show") && (!dd || indexOf(args, ops[0]) < indexOf(args, "--")) {
			computed = false
			gitStashContent(r, ops)
		}
	case "clean":
		paths = nil
		computed = !has("-n")
	default: // merge, rebase, pull, cherry-pick, revert
		paths = nil
	}
	// git switch -C and git checkout -B reset a branch that exists to the
	// start point: the commits only it held are lost. -f (--force,
	// --discard-changes) throws away the changes of the work tree.
	if (sub == "switch" || sub == "checkout") && has("-C", "-B") {
		r.risk("git %s -C/-B resets an existing branch, which loses the commits only it held", sub)
	}
	if (sub == "switch" || sub == "checkout") && has("-f") {
		computed = true
	}
	for _, p := range paths {
		r.Effects = append(r.Effects, Effect{Arg: Write, Val: p, Via: "git " + sub})
	}
	if computed {
		r.Effects = append(r.Effects, Effect{Arg: Write, Val: "\x00(the files git " + sub + " rewrites from history)", Via: "git " + sub})
	}
}

func indexOf(s []string, w string) int {
	for i, x := range s {
		if x == w {
			return i
		}
	}
	return -1
}

// afterDD returns the operands that came after -- in args: the last
// len(after) operands, where after is what follows -- in args.
func afterDD(args, ops []string) []string {
	n := len(args) - indexOf(args, "--") - 1
	if n > len(ops) {
		n = len(ops)
	}
	return ops[len(ops)-n:]
}

// gitPathspecs reads the pathspecs of git diff, log, show, grep and add
// that name files by a pattern (gitglossary(7), pathspec): * and ? match
// "/" too, and a pattern that matches a folder takes everything below it,
// so git log -p -- '*env' prints the history of src/.env as surely as git
// log -p -- src/.env does. Such a pathspec is a read of the working folder
// whole, of the files the pattern matches. Magic other than exclusion
// (:(glob), :(icase), :/) and --icase-pathspecs or --glob-pathspecs read
// every file; exclusions alone add nothing (they match what no pathspec
// matches).
func gitPathspecs(r *Result) {
	if r.Sub == "blame" || r.Sub == "cat-file" || r.Sub == "status" || hasFlag(r, "--literal-pathspecs") {
		return
	}
	ops := r.Ops
	if i := indexOf(ops, r.Sub); i >= 0 {
		ops = ops[i+1:]
	}
	every := hasFlag(r, "--icase-pathspecs", "--glob-pathspecs")
	all := func(string) bool { return true }
	for _, op := range ops {
		if IsDyn(op) || op == "" {
			continue
		}
		pat := op
		if op[0] == ':' {
			magic, rest := op[1:], ""
			if strings.HasPrefix(magic, "(") {
				i := strings.IndexByte(magic, ')')
				if i < 0 {
					continue
				}
				magic, rest = magic[1:i], magic[i+1:]
				if strings.Contains(magic, "exclude") {
					continue
				}
				if magic != "literal" && magic != "" {
					r.Effects = append(r.Effects, Effect{Arg: Read, Val: ".", Via: "git pathspec", Match: all})
					continue
				}
				if magic == "literal" {
					continue // a path as written: read as an operand
				}
			} else {
				j := 0
				for j < len(magic) && strings.IndexByte("!^/", magic[j]) >= 0 {
					j++
				}
				flags := magic[:j]
				rest = strings.TrimPrefix(magic[j:], ":")
				if strings.ContainsAny(flags, "!^") {
					continue
				}
				if flags != "" {
					r.Effects = append(r.Effects, Effect{Arg: Read, Val: ".", Via: "git pathspec", Match: all})
					continue
				}
			}
			pat = rest
		}
		if !strings.ContainsAny(pat, "*?[\\") {
			continue
		}
		if every {
			r.Effects = append(r.Effects, Effect{Arg: Read, Val: ".", Via: "git pathspec", Match: all})
			continue
		}
		r.Effects = append(r.Effects, Effect{Arg: Read, Val: ".", Via: "git pathspec", Match: pathspecMatch(pat)})
	}
}

// PathspecMatch is pathspecMatch, for the engine (git's pathspecs among
// the operands of Result.RepoOps).
func PathspecMatch(pat string) func(string) bool { return pathspecMatch(pat) }

// pathspecMatch returns git's match of a wildcard pathspec against a path
// below the working folder: fnmatch(3) without FNM_PATHNAME, anchored, and
// a path also matches when one of the folders above it does.
func pathspecMatch(pat string) func(string) bool {
	var b strings.Builder
	b.WriteString("^(?:")
	for i := 0; i < len(pat); i++ {
		switch c := pat[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '\\':
			if i+1 < len(pat) {
				i++
				b.WriteString(regexp.QuoteMeta(pat[i : i+1]))
			}
		case '[':
			j := i + 1
			if j < len(pat) && (pat[j] == '!' || pat[j] == '^') {
				j++
			}
			if j < len(pat) && pat[j] == ']' {
				j++
			}
			for j < len(pat) && pat[j] != ']' {
				j++
			}
			if j >= len(pat) {
				b.WriteString(regexp.QuoteMeta("["))
				continue
			}
			class := pat[i+1 : j]
			if class != "" && class[0] == '!' {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, "\\", "\\\\") + "]")
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(pat[i : i+1]))
		}
	}
	b.WriteString(")$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return func(string) bool { return true }
	}
	return func(rel string) bool {
		if re.MatchString(rel) {
			return true
		}
		for i := 0; i < len(rel); i++ {
			if rel[i] == '/' && re.MatchString(rel[:i]) {
				return true
			}
		}
		return false
	}
}

// gitTreeReads: git add reads the folders it is given whole, untracked
// files included but those the ignore files leave out (git add -A stages
// an unignored ./.env, and git diff --cached then prints it; the engine
// reads the ignore files, and trusts them only when the line writes
// none), and git add -A, --all or --no-ignore-removal without a pathspec
// reads the whole work tree, from its top.
// git grep --untracked and --no-index search the files of the folders
// given (the working folder when none is) that git does not track, and
// --no-index the ignored ones too. git add -u (tracked files) and -n
// (names only) read nothing new.
func gitTreeReads(r *Result) {
	var whole, top bool
	switch r.Sub {
	case "add":
		if hasFlag(r, "-u", "-n") {
			return
		}
		// git add -A without a pathspec adds the whole work tree, from
		// its top wherever it runs. Files the ignore files name are left
		// out unless forced.
		whole = hasFlag(r, "-A", "--no-ignore-removal")
		top = whole
		r.GitIgnores = !hasFlag(r, "-f")
	case "grep":
		if !hasFlag(r, "--untracked", "--no-index") {
			return
		}
		whole = true
		// --untracked leaves out ignored files unless told not to;
		// --no-index reads them unless told to leave them out.
		r.GitIgnores = hasFlag(r, "--untracked") && !hasFlag(r, "--no-exclude-standard") ||
			hasFlag(r, "--no-index") && hasFlag(r, "--exclude-standard") && !hasFlag(r, "--no-exclude-standard")
	default:
		return
	}
	r.Tree = true
	for _, e := range r.Effects {
		if e.Arg == Read && e.Via == r.Spec.Name {
			return
		}
	}
	if whole {
		r.Effects = append(r.Effects, Effect{Arg: Read, Val: ".", Via: r.Spec.Name, Top: top})
	}
}

// gitPathspecFile: --pathspec-from-file=F takes the pathspecs from F, so
// the files git add and git commit read, git rm removes, and the commands
// that rewrite the work tree write are named in F: computed.
func gitPathspecFile(r *Result) {
	for _, v := range r.Values("--pathspec-from-file") {
		e := Effect{Arg: Write, Val: "\x00(the files " + strings.TrimPrefix(v, "\x00") + " names)", Via: "--pathspec-from-file"}
		switch r.Sub {
		case "add", "commit":
			e.Arg = Read
		case "rm":
			e.Arg = Delete
		}
		r.Effects = append(r.Effects, e)
	}
}

// gitRewrites records the files a command writes from commits or patches
// warden cannot see (git am, git filter-branch, git bisect): a computed
// write.
func gitRewrites(r *Result, sub string) {
	r.Effects = append(r.Effects, Effect{Arg: Write, Val: "\x00(files of the work tree git " + sub + " rewrites)", Via: "git " + sub})
}

// gitBisect: git bisect run CMD ARGS runs CMD at each step; every
// subcommand but log, terms, visualize and view checks commits out.
func gitBisect(r *Result, _ []string) {
	ops := r.Ops[indexOf(r.Ops, "bisect")+1:]
	if len(ops) == 0 {
		return
	}
	switch ops[0] {
	case "log", "terms", "visualize", "view", "help":
		return
	case "run":
		if len(ops) > 1 {
			r.Runs = append([]string(nil), ops[1:]...)
		}
	case "start", "bad", "good", "new", "old", "skip", "reset", "replay":
	default:
		r.risk("%s is not a git bisect subcommand warden knows", ops[0])
		return
	}
	gitRewrites(r, "bisect")
}

// gitSubmodule: git submodule foreach [--recursive] LINE runs LINE in each
// submodule; update runs what .gitmodules names for it (update = !CMD).
func gitSubmodule(r *Result, _ []string) {
	ops := r.Ops[indexOf(r.Ops, "submodule")+1:]
	for len(ops) > 0 && (ops[0] == "--quiet" || ops[0] == "-q") {
		ops = ops[1:]
	}
	if len(ops) == 0 {
		return
	}
	switch ops[0] {
	case "status", "summary":
	case "foreach":
		ops = ops[1:]
		for len(ops) > 0 && (ops[0] == "--recursive" || ops[0] == "-q" || ops[0] == "--quiet") {
			ops = ops[1:]
		}
		line := ""
		for i, w := range ops {
			if IsDyn(w) {
				line = "\x00" + strings.Join(ops, " ")
				break
			}
			if i > 0 {
				line += " "
			}
			line += w
		}
		if line != "" {
			r.Effects = append(r.Effects, Effect{Arg: Shell, Val: line, Via: "submodule foreach"})
		}
		r.risk("git submodule foreach runs its command in each submodule's repository, whose configuration warden does not read")
	default:
		r.risk("git submodule %s fetches, checks out or configures submodules, and may run the command .gitmodules names", ops[0])
	}
}

// gitBundle: git bundle create FILE writes FILE.
func gitBundle(r *Result, _ []string) {
	ops := r.Ops[indexOf(r.Ops, "bundle")+1:]
	if len(ops) == 0 {
		return
	}
	switch ops[0] {
	case "create":
		for _, w := range ops[1:] {
			if !strings.HasPrefix(w, "-") || IsDyn(w) {
				r.Effects = append(r.Effects, Effect{Arg: Write, Val: w, Via: "git bundle create"})
				return
			}
		}
	case "verify", "list-heads":
	case "unbundle":
		gitRewrites(r, "bundle unbundle")
	default:
		r.risk("%s is not a git bundle subcommand warden knows", ops[0])
	}
}

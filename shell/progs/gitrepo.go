package progs

import (
	"slices"
	"strings"
)

// Repo is what of a git repository a command prints (Result.Repo): the
// content of files git keeps, which a private file may be among though no
// operand names it (git grep KEY prints the lines of a tracked .env, git
// log -p the .env a commit once held).
type Repo uint8

const (
	// RepoNone: no file content from the repository.
	RepoNone Repo = iota
	// RepoTracked: the files git tracks, as the index and the work tree
	// hold them (git grep, git diff without a revision).
	RepoTracked
	// RepoStaged: the files of the index and of the commit HEAD names
	// (git diff --cached, git status -v), which holds a file the index
	// no longer has (git rm --cached .env, then git diff --cached prints
	// it); with git status -vv, the work tree's changes too.
	RepoStaged
	// RepoHistory: the files of any commit or object (git log -p, git
	// show, git diff REV, git cat-file -p OBJECT).
	RepoHistory
)

// gitPatchOpts are the diff options that print the files' content (or,
// as the pickaxe and --check do, search it and tell what they found).
var gitPatchOpts = []string{"-p", "-U", "--patch-with-raw", "--patch-with-stat", "--word-diff", "--word-diff-regex",
	"--color-words", "-W", "-c", "--cc", "--dd", "-m", "--diff-merges", "--check", "-S", "-G", "--find-object",
	"--pickaxe-regex", "--pickaxe-all", "--binary", "--textconv", "--ext-diff", "--full-diff"}

// gitNamesOpts are the diff options that print names and counts instead
// of content, when no option of gitPatchOpts is given too.
var gitNamesOpts = []string{"-s", "--stat", "--numstat", "--shortstat", "-X", "--dirstat-by-file", "--cumulative",
	"--summary", "--compact-summary", "--name-only", "--name-status", "--raw", "--quiet", "--exit-code"}

// gitRepoContent sets Result.Repo and RepoOps for the git commands that
// print what the repository holds: git grep (without --untracked or
// --no-index, which read the work tree: gitTreeReads), git diff (but
// --no-index), git log, whatchanged and show with a patch, git status -v,
// git cat-file with an object's content, git format-patch.
//
// RepoOps are the operands that may be revisions or pathspecs: the engine
// tells them apart as git does, by whether a path of that name exists. An
// operand REV:PATH is the read of PATH (gitRevPaths) and no more.
func gitRepoContent(r *Result) {
	ops := r.Ops
	if i := indexOf(ops, r.Sub); i >= 0 {
		ops = ops[i+1:]
	}
	patch, names := hasFlag(r, gitPatchOpts...), hasFlag(r, gitNamesOpts...)
	kind := RepoNone
	switch r.Sub {
	case "grep":
		if hasFlag(r, "--untracked", "--no-index") {
			return
		}
		// The pattern is the first operand unless -e or -f gives it.
		if len(r.Values("-e")) == 0 && len(r.Values("-f")) == 0 && len(ops) > 0 {
			ops = ops[1:]
		}
		kind = RepoTracked
	case "diff":
		if hasFlag(r, "--no-index") || names && !patch {
			return
		}
		kind = RepoTracked
		r.RepoDiff = true
		if hasFlag(r, "--cached", "--staged") {
			kind = RepoStaged
		}
		if hasFlag(r, "--merge-base") {
			kind = RepoHistory
		}
	case "log", "whatchanged":
		// -L RANGE:FILE alone prints the history of FILE's lines, a
		// read of FILE (gitRevPaths).
		if !patch {
			return
		}
		kind = RepoHistory
	case "show":
		if names && !patch && !objectIDs(ops) {
			return
		}
		kind = RepoHistory
	case "status":
		// -v shows the changes staged (git diff --cached), -vv the
		// work tree's too.
		v := 0
		for _, f := range r.Flags {
			if f == "-v" {
				v++
			}
		}
		if v == 0 {
			return
		}
		kind, ops = RepoStaged, nil
		r.RepoDiff = v == 1
	case "cat-file":
		content := hasFlag(r, "-p", "--textconv", "--filters", "--batch", "--batch-command")
		if len(ops) > 0 {
			switch ops[0] {
			case "blob", "tree", "commit", "tag":
				content, ops = true, ops[1:]
			}
		}
		batch := hasFlag(r, "--batch", "--batch-command")
		if !content || !batch && len(ops) > 0 && allRevPaths(ops) {
			return
		}
		// Objects named by id, or read from the input: any file.
		r.Repo, r.RepoWhole = RepoHistory, true
		return
	case "format-patch":
		kind = RepoHistory
	default:
		return
	}
	if len(ops) > 0 && allRevPaths(ops) {
		return // REV:PATH operands only: the paths are read
	}
	// Submodules' files are in their own repositories, whose index and
	// history warden does not read.
	if hasFlag(r, "--recurse-submodules") || slices.Contains(r.Values("--submodule"), "diff") {
		kind = RepoHistory
	}
	r.Repo = kind
	if kind == RepoHistory {
		r.RepoDiff = false
	}
	r.RepoOps = nil
	for _, op := range ops {
		if !isRevPath(op) {
			r.RepoOps = append(r.RepoOps, op)
		}
	}
	// Pathspecs read from the input (git log --stdin) or computed ones
	// name any path; a blob's id shown prints the blob whatever the
	// pathspecs say.
	r.RepoWhole = hasFlag(r, "--stdin") || len(r.Values("--pathspec-from-file")) > 0 || r.Sub == "show" && objectIDs(ops)
}

// allRevPaths reports whether every operand is REV:PATH (HEAD:.env),
// whose PATH the command reads.
func allRevPaths(ops []string) bool {
	for _, op := range ops {
		if !isRevPath(op) || IsDyn(op) {
			return false
		}
	}
	return true
}

// isRevPath reports an operand REV:PATH: a colon after a revision, which
// holds no slash (src/a:b is a path).
func isRevPath(op string) bool {
	i := strings.IndexByte(op, ':')
	return i > 0 && !strings.Contains(op[:i], "/")
}

// objectIDs reports whether an operand of git show may be an object's id
// (4 to 64 hex digits), which may be a file's content (a blob): git show
// prints it whatever --stat says. A computed operand may be one too.
func objectIDs(ops []string) bool {
	for _, op := range ops {
		if IsDyn(op) {
			return true
		}
		if len(op) < 4 || len(op) > 64 {
			continue
		}
		hex := true
		for _, c := range op {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				hex = false
				break
			}
		}
		if hex {
			return true
		}
	}
	return false
}

// gitStashContent: git stash show -p and git stash list -p print the
// files of stashed changes.
func gitStashContent(r *Result, ops []string) {
	if len(ops) > 0 && (ops[0] == "show" || ops[0] == "list") && hasFlag(r, "-p") {
		r.Repo, r.RepoWhole = RepoHistory, true
	}
}

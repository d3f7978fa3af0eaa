// Package sandbox confines a command by the policy that allowed it: it
// writes only inside the workspace (minus the protected paths), the temp
// folders and the policy's sandbox.writable folders, reads no private
// path, and reaches no TCP port the policy does not allow, whatever it
// turns out to do. docs/sandbox.md describes the design and what each
// mechanism enforces.
//
// On Linux a confined command runs in a child of warden that enters a new
// user and mount namespace, binds the protected paths read-only over
// themselves, hides the private ones, applies Landlock (which also forbids
// every later mount and umount) and drops its capabilities, then executes
// the program: stdin, stdout, stderr and the exit status pass through.
//
// Use FromPolicy to derive a Spec, Spec.Command to build the command, or
// Spec.Run to run one with signals forwarded and the exit code returned.
//
// Stability: this package is internal to warden in spirit. Its API serves
// `warden sandbox` and changes with it in any release.
package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/warden-run/warden/internal/glob"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/sandbox/confine"
)

// maxWalk bounds the walk that resolves the policy's protected and
// private globs to existing paths. A workspace with more entries cannot
// be resolved: "required" refuses to run, "on" runs with a warning.
const maxWalk = 200000

// The confinement's types, run by package confine (which a lean binary
// can use without the policy packages).
type (
	Spec   = confine.Spec
	Kernel = confine.Kernel
	Plan   = confine.Plan
)

// Exit codes of a confined run that come from the sandbox, not the
// program.
const (
	ExitSetup     = confine.ExitSetup
	ExitCannotRun = confine.ExitCannotRun
	ExitNotFound  = confine.ExitNotFound
	ChildArg      = confine.ChildArg
	ConfinedEnv   = confine.ConfinedEnv
	// DisableEnv takes mechanisms away from the probe, for tests (see
	// confine.DisableEnv).
	DisableEnv = confine.DisableEnv
)

// FileDigest returns the SHA-256 (hex) of a file: the policy digest a
// Spec carries and `warden sandbox --policy-sha256` compares.
func FileDigest(path string) (string, error) { return confine.FileDigest(path) }

// Probe reports what the running kernel offers.
func Probe() Kernel { return confine.Probe() }

// IsChild reports whether args (without the program name) are the
// confining child's.
func IsChild(args []string) bool { return confine.IsChild(args) }

// ChildMain is the confining child (see confine.ChildMain).
func ChildMain(args []string) int { return confine.ChildMain(args) }

// protectedNames are the paths, relative to the workspace root (and to the
// policy's folder), that a confined command may never write, whatever the
// policy lists: the store, the repository's configuration and hooks, and
// the agent hosts' control folders and files (see engine/hostconfig.go,
// which protects the same from the engine's side). The folders among
// them are created empty when missing (placeholders).
var protectedNames = []string{
	".warden", ".claude", ".codex", ".gemini", ".opencode",
	".mcp.json", "opencode.json", "opencode.jsonc",
	".git/config", ".git/config.worktree", ".git/hooks", ".git/info", ".git/commondir",
}

// placeholderNames are the protectedNames that are folders and created
// when missing (.git/hooks and .git/info only in a repository).
var placeholderNames = []string{".warden", ".claude", ".codex", ".gemini", ".opencode", ".git/hooks", ".git/info"}

// homeProtected are files of the home folder that choose what programs
// run (engine/hostconfig.go's homeControl and userControl). Writes there
// are refused by the outer boundary unless the home folder is writable
// (it lies inside the workspace, or in sandbox.writable): then these are
// bound read-only too.
var homeProtected = []string{
	".claude", ".claude.json", ".codex", ".gemini", ".config/opencode", ".config/warden",
	".gitconfig", ".config/git",
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zshenv", ".zprofile", ".zlogin", ".config/fish",
	".npmrc", ".cargo/config.toml", ".cargo/config", ".config/go/env",
}

// hostSockets are the sockets of services that run programs outside the
// sandbox on request (a container engine, systemd through D-Bus): a
// confined command could ask them to. A read-only mount does not stop a
// connect, Landlock does not before ABI 9; they are hidden (a variable for
// tests).
var hostSockets = func(uid int) []string {
	run := fmt.Sprintf("/run/user/%d", uid)
	return []string{
		"/run/docker.sock", "/var/run/docker.sock", "/run/containerd/containerd.sock", "/run/podman/podman.sock",
		"/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket", "/run/systemd/private",
		run + "/docker.sock", run + "/podman/podman.sock", run + "/bus", run + "/systemd",
	}
}

// privateDefaults are private whatever the policy lists.
var privateDefaults = []string{"~/.ssh", "~/.aws", "~/.gnupg", "**/.env"}

// FromPolicy derives the confinement of a policy for a workspace root
// (empty: the policy's). It reads the disk: the globs of `protected` and
// `private` are resolved to the paths that exist now. Its error is for a
// workspace that does not exist or cannot be read; under `required`
// also for a workspace too large to resolve.
func FromPolicy(p *policy.Policy, workspaceRoot string) (Spec, error) {
	return fromPolicy(p, workspaceRoot, "", nil)
}

// fromPolicy is FromPolicy. digest, when not empty, is the policy's
// SHA-256 the Spec carries (the bytes the decision was made under)
// instead of the file's now; walks, when not nil, keeps the walk of the
// workspace between calls (see Specs).
func fromPolicy(p *policy.Policy, workspaceRoot, digest string, walks *walkCaches) (Spec, error) {
	if workspaceRoot == "" {
		workspaceRoot = p.Workspace.Root
	}
	if workspaceRoot == "" {
		workspaceRoot = p.Dir
	}
	root, err := realDir(workspaceRoot)
	if err != nil {
		return Spec{}, fmt.Errorf("workspace root: %w", err)
	}
	s := Spec{Root: root, NetworkDeny: p.Sandbox.NetworkDenied(), Required: p.Sandbox.Required()}
	if p.File != "" {
		// The policy's bytes now (or the decision's): a run checks them
		// (Spec.Check).
		d := digest
		if d == "" {
			var err error
			if d, err = confine.FileDigest(p.File); err != nil {
				return Spec{}, fmt.Errorf("the policy: %w", err)
			}
		}
		s.PolicyFile, s.PolicyDigest = p.File, d
	}
	if s.NetworkDeny {
		s.Ports = slices.Clone(p.Sandbox.Ports)
	}
	home, _ := os.UserHomeDir()

	// The outer boundary.
	s.Writable = append(s.Writable, root)
	for _, d := range append([]string{"/tmp", os.Getenv("TMPDIR")}, p.Sandbox.Writable...) {
		if d == "" {
			continue
		}
		if r, err := realDir(d); err == nil {
			s.Writable = append(s.Writable, r)
		}
	}
	s.Writable = dedupe(s.Writable)

	res := &resolver{m: map[string]resolved{}}
	ro := newPathSet(res)
	hide := newPathSet(res)
	// Fixed protected paths, at the root and in the policy's folder.
	for _, base := range dedupe([]string{root, realOr(p.Dir)}) {
		for _, n := range protectedNames {
			ro.add(filepath.Join(base, n))
		}
		if _, err := os.Stat(filepath.Join(base, ".git", "modules")); err == nil {
			subs, _ := filepath.Glob(filepath.Join(base, ".git", "modules", "*"))
			for _, m := range subs {
				ro.add(filepath.Join(m, "config"))
				ro.add(filepath.Join(m, "hooks"))
			}
		}
		for _, n := range placeholderNames {
			dir := filepath.Join(base, n)
			if strings.HasPrefix(n, ".git/") {
				if st, err := os.Lstat(filepath.Join(base, ".git")); err != nil || !st.IsDir() {
					continue
				}
			}
			if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
				s.Placeholders = append(s.Placeholders, dir)
			}
		}
	}
	ro.add(p.File)
	ro.add(filepath.Join(p.Dir, policy.StoreDir))
	if p.Intents != nil {
		ro.add(p.Intents.File)
	}
	if home != "" {
		for _, n := range homeProtected {
			ro.add(filepath.Join(home, n))
		}
	}
	// Globs.
	var relPro, relPriv []glob.Path
	addGlobs := func(pats []string, rel *[]glob.Path, set *pathSet) {
		for _, pat := range pats {
			abs := pat
			if pat == "~" || strings.HasPrefix(pat, "~/") {
				if home == "" {
					continue
				}
				abs = filepath.Join(home, pat[1:])
			}
			if filepath.IsAbs(abs) {
				s.Warnings = append(s.Warnings, set.addAbsGlob(abs)...)
				continue
			}
			if g, err := glob.CompilePath(pat); err == nil {
				*rel = append(*rel, g)
			}
		}
	}
	addGlobs(p.Protected, &relPro, ro)
	addGlobs(append(slices.Clone(privateDefaults), p.Private...), &relPriv, hide)
	if len(relPro) > 0 || len(relPriv) > 0 {
		var w *walkCache
		if walks != nil {
			w = walks.get(root, relPro, relPriv)
		} else {
			w = &walkCache{}
		}
		w.skip = filepath.Join(realOr(p.Dir), policy.StoreDir)
		if err := w.walk(root, relPro, relPriv, ro, hide); err != nil {
			if s.Required {
				return Spec{}, err
			}
			s.Warnings = append(s.Warnings, err.Error())
		}
	}
	for _, sock := range hostSockets(os.Getuid()) {
		if _, err := os.Lstat(sock); err == nil {
			hide.add(sock)
		}
	}
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
		hide.add(sock)
		s.UnsetEnv = append(s.UnsetEnv, "SSH_AUTH_SOCK")
	}

	// Keep what exists; a protected path matters only where a confined
	// command could write (outside, the boundary refuses writes already),
	// a private one everywhere.
	for _, p := range ro.real() {
		if s.UnderWritable(p) {
			s.ReadOnly = append(s.ReadOnly, p)
		}
	}
	for _, ph := range s.Placeholders {
		if !slices.Contains(s.ReadOnly, ph) {
			s.ReadOnly = append(s.ReadOnly, ph)
		}
	}
	s.Hidden = hide.real()
	sort.Strings(s.ReadOnly)
	return s, nil
}

func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

func realDir(d string) (string, error) {
	abs, err := filepath.Abs(d)
	if err != nil {
		return "", err
	}
	r, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s does not exist", abs)
		}
		return "", err
	}
	st, err := os.Stat(r)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a folder", abs)
	}
	return r, nil
}

func realOr(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

func dedupe(list []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// pathSet collects candidate paths; real returns those that exist,
// symlinks resolved, without paths inside another member.
type pathSet struct {
	paths []string
	res   *resolver
}

func newPathSet(res *resolver) *pathSet { return &pathSet{res: res} }

// resolver is filepath.EvalSymlinks for the many paths of one derivation,
// which share most of their folders: each folder is resolved once.
type resolver struct{ m map[string]resolved }

type resolved struct {
	path string
	err  error
}

func (r *resolver) eval(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return filepath.EvalSymlinks(p)
	}
	p = filepath.Clean(p)
	if p == "/" {
		return p, nil
	}
	if v, ok := r.m[p]; ok {
		return v.path, v.err
	}
	out, err := r.evalNew(p)
	r.m[p] = resolved{out, err}
	return out, err
}

func (r *resolver) evalNew(p string) (string, error) {
	dir, err := r.eval(filepath.Dir(p))
	if err != nil {
		return "", err
	}
	full := filepath.Join(dir, filepath.Base(p))
	fi, err := os.Lstat(full)
	if err != nil {
		return "", err
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return full, nil
	}
	// A link (its folder resolved already): the library follows it.
	return filepath.EvalSymlinks(full)
}

func (ps *pathSet) add(p string) { ps.paths = append(ps.paths, filepath.Clean(p)) }

// addAbsGlob adds the existing paths an absolute glob matches, walking
// from its longest literal prefix.
func (ps *pathSet) addAbsGlob(pat string) []string {
	if !glob.HasMeta(pat) {
		ps.add(pat)
		return nil
	}
	g, err := glob.CompilePath(pat)
	if err != nil {
		return nil
	}
	segs := strings.Split(strings.TrimPrefix(filepath.Clean(pat), "/"), "/")
	base := "/"
	for _, sg := range segs {
		if glob.HasMeta(sg) || strings.ContainsAny(sg, "[\\") {
			break
		}
		base = filepath.Join(base, sg)
	}
	if base == "/" {
		return []string{fmt.Sprintf("%s: a private or protected glob from the root of the file system is not resolved; name a folder", pat)}
	}
	n := 0
	_ = filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n++; n > maxWalk {
			return filepath.SkipAll
		}
		if g.MatchExact(strings.TrimPrefix(path, "/")) {
			ps.add(path)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	if n > maxWalk {
		return []string{fmt.Sprintf("%s: more than %d entries under %s, not all resolved", pat, maxWalk, base)}
	}
	return nil
}

func (ps *pathSet) real() []string {
	var out []string
	for _, p := range ps.paths {
		r, err := ps.res.eval(p)
		if err != nil {
			continue
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	// Drop paths inside another member: the outer mount covers them.
	var kept []string
	for _, p := range out {
		if len(kept) > 0 && within(p, kept[len(kept)-1]) {
			continue
		}
		kept = append(kept, p)
	}
	return kept
}

package engine

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/shell"
	"golang.org/x/text/unicode/norm"
)

// readAllowed reports whether an allow rule with paths names a path the
// shell reads outside the workspace (a rule for the read kind, or for the
// call's tool).
func (e *Engine) readAllowed(st *state, p *part) bool {
	for _, r := range e.nonCommand {
		if r.effect == warden.Allow && r.hasPath && e.ruleMatchesPat(st, r, p, nil) {
			return true
		}
	}
	return false
}

// isPrivate reports whether a path is one no agent may read.
func (e *Engine) isPrivate(p *part) bool {
	if len(e.private) == 0 {
		return false
	}
	ra := p.rawAbs()
	rrel, rinside := p.rel, p.inside
	if ra != p.abs {
		rrel, rinside = e.relTo(ra)
	}
	for _, g := range e.private {
		if g.match(p.abs, p.rel, p.inside) || ra != p.abs && g.match(ra, rrel, rinside) {
			return true
		}
	}
	// A folder whose every file is private (~/.ssh for ~/.ssh/**) is
	// private itself: reading it (grep -r, cp -r, tar) reads them.
	childAbs, childRel := p.abs+"/_", p.rel+"/_"
	for _, g := range e.private {
		if g.match(childAbs, childRel, p.inside) {
			return true
		}
	}
	return false
}

// pathPart resolves a path and decides it; with cd folders, a relative path
// is also decided as seen from each of them.
func (e *Engine) pathPart(st *state, raw string, write bool, vkind, op string, cds []string) {
	for _, v := range spellings(raw) {
		e.pathSpelt(st, v, write, vkind, op, cds)
	}
	e.pathSpelt(st, raw, write, vkind, op, cds)
}

// pathSpelt is pathPart for one spelling of the path.
func (e *Engine) pathSpelt(st *state, raw string, write bool, vkind, op string, cds []string) {
	p := part{op: op, subject: warden.SubjectPath, raw: raw, write: write, vkind: vkind, destr: write || st.destructive}
	if vkind != "" {
		p.destr = true
	}
	if !shell.IsDyn(raw) && strings.IndexByte(raw, 0) >= 0 {
		// The kernel takes no such path; a tool may cut it at the NUL
		// (.env\x00.md is .env to a C program) or refuse it.
		st.check("args", item{effect: warden.Deny, code: warden.CodeBadInput, subject: strings.ReplaceAll(raw, "\x00", `\0`), extra: nulPath})
		return
	}
	if st.kind != "shell" && !shell.IsDyn(raw) {
		// A file tool's path as a tool that expands it may read it
		// (Python's os.path.expanduser and expandvars): ~user is that
		// user's home, checked beside the path as written, and $VAR is
		// whatever the variable holds.
		if home := tildeUser(e.ws, raw); home != "" {
			e.pathPart(st, home, write, vkind, op, nil)
		}
		if varPath(raw) {
			e.pathPart(st, shell.Dyn+raw, write, vkind, op, nil)
		}
	}
	if shell.IsDyn(raw) || raw == "" || procPath(raw) {
		p.dynamic = true
		p.raw = shell.Display(raw)
		e.evalPart(st, &p)
		return
	}
	base := st.cwd()
	p.abs, p.rel, p.inside = e.resolve(raw, base)
	p.clean = e.cleanPath(raw, base)
	e.evalPart(st, &p)
	if filepath.IsAbs(raw) || strings.HasPrefix(raw, "~") {
		return
	}
	for _, d := range cds {
		q := part{op: op, subject: warden.SubjectPath, raw: raw, write: write, vkind: vkind, destr: true}
		if shell.IsDyn(d) || strings.HasPrefix(d, "-") {
			q.dynamic = true
			e.evalPart(st, &q)
			continue
		}
		dir, _, _ := e.resolve(d, base)
		q.abs, q.rel, q.inside = e.resolve(raw, dir)
		q.clean = e.cleanPath(raw, dir)
		e.evalPart(st, &q)
	}
}

// spellings returns the other spellings of a path that name the same
// file on macOS, each checked beside the path as written: without the code
// points HFS+ ignores in file names (zero-width joiners and marks,
// direction marks, the byte order mark: .g\u200cit is .git there, as
// git's own check for CVE-2014-9390 knows), and in both Unicode normal
// forms (APFS and HFS+ take an é composed or decomposed as one name).
// An ASCII path has none.
func spellings(p string) []string {
	if q := procAlias(p); q != "" {
		// /dev/fd/../cwd/.env is the command's own ./.env.
		return append(spellings(q), q)
	}
	ascii := true
	for i := 0; i < len(p); i++ {
		if p[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return nil
	}
	folded := strings.Map(func(r rune) rune {
		switch {
		case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
			return -1
		}
		return r
	}, p)
	var out []string
	for _, v := range [...]string{folded, norm.NFC.String(folded), norm.NFD.String(folded)} {
		if v != p && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// tildeUser returns a path that starts with ~NAME (another user's home, as
// the shell and Python's os.path.expanduser read it) with that home in
// its place; "" for any other path, or a user the system does not know.
func tildeUser(ws Workspace, p string) string {
	if !strings.HasPrefix(p, "~") || p == "~" || strings.HasPrefix(p, "~/") {
		return ""
	}
	name, rest, _ := strings.Cut(p[1:], "/")
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c == '-' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return ""
		}
	}
	home, err := ws.UserHome(name)
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, rest)
}

// varPath reports a path with a component that starts with a variable
// ($HOME/.ssh, ${XDG_CONFIG_HOME}/x): a tool that expands variables reads
// whatever the variable holds.
func varPath(p string) bool {
	for i := strings.IndexByte(p, '$'); i >= 0; {
		if (i == 0 || p[i-1] == '/') && i+1 < len(p) {
			if c := p[i+1]; c == '{' || c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
				return true
			}
		}
		j := strings.IndexByte(p[i+1:], '$')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// procPath reports a path under /proc, or one of the links into it under
// /dev (/dev/fd/N, /dev/stdin, /dev/stdout, /dev/stderr): /proc/self/cwd,
// /proc/PID/root and /dev/fd/N lead where the process that opens them has
// its folder and files, which warden cannot know (resolved in warden's own
// process they name warden's files), so such a path is computed.
func procPath(p string) bool {
	if p == "/proc" || strings.HasPrefix(p, "/proc/") || p == "/dev/fd" || strings.HasPrefix(p, "/dev/fd/") {
		return true
	}
	switch p {
	case "/dev/stdin", "/dev/stdout", "/dev/stderr":
		return true
	}
	return false
}

// cwd returns the folder relative paths of the call resolve against: the
// call's cwd, and within it the working folder a shell tool was given
// (workdir in OpenCode and Codex, directory in Gemini CLI). Only a shell
// tool's working folder moves it: a file tool resolves its paths from the
// host's folder whatever else its arguments hold (a workdir the host
// ignores must not move where warden looks; see altDirs).
//
// The folder is joined, not cleaned: a ".." after a symbolic link leads
// where the link's target's parent is, as chdir takes it (src/hooks/..
// is .git when src/hooks links to .git/hooks), and resolve follows it so;
// the path as written (cleanPath) is the folder cleaned as text, as
// Node's path.resolve takes it. Both are checked.
func (e *Engine) cwd(c *warden.ToolCall) string {
	return e.cwdKeys(c, e.pol.KindOf(c.Tool), anyWorkdirKey(c.Args))
}

// cwdKeys is cwd for a call of the tool kind whose arguments have
// (workdir) or have not a key of workdirKeys.
func (e *Engine) cwdKeys(c *warden.ToolCall, kind string, workdir bool) string {
	base := e.rootRaw
	if c.Cwd != "" {
		if filepath.IsAbs(c.Cwd) {
			base = c.Cwd
		} else {
			base = e.rootRaw + "/" + c.Cwd
		}
	}
	if kind != "shell" || !workdir {
		return base
	}
	for _, k := range workdirKeys {
		if d, ok := c.Args[k].(string); ok && d != "" {
			d = e.expandHome(d)
			if filepath.IsAbs(d) {
				return d
			}
			return base + "/" + d
		}
	}
	return base
}

// altDirs are the working folders a call that is not a shell call names
// (workdir, directory, cwd, working_directory, dir_path) other than the
// argument except: the host's file tools do not read them, but a tool
// warden does not know might. A relative path of the call is decided
// from the call's folder and from each of these.
func (e *Engine) altDirs(st *state, except string) []string {
	if st.kind == "shell" {
		return nil
	}
	var out []string
	for _, k := range workdirKeys {
		if k == except {
			continue
		}
		if d, ok := st.call.Args[k].(string); ok && d != "" {
			out = append(out, d)
		}
	}
	return out
}

// expandHome replaces a leading "~" or "~/" with the home folder.
func (e *Engine) expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		return e.home + p[1:]
	}
	return p
}

// resolve makes a path absolute and resolves it as the kernel does:
// components in order, each symbolic link followed before a ".." after it
// (src/hooks/../config is .git/config when src/hooks links to .git/hooks).
// A missing component ends the lookup; the rest is taken as written.
func (e *Engine) resolve(raw, base string) (abs, rel string, inside bool) {
	abs = e.evalPath(e.joinPath(raw, base))
	rel, inside = e.relTo(abs)
	return abs, rel, inside
}

// joinPath makes raw absolute ("~" expanded, relative to base) without
// cleaning it: ".." must be resolved after the links before it.
func (e *Engine) joinPath(raw, base string) string {
	p := e.expandHome(raw)
	if !filepath.IsAbs(p) {
		p = base + "/" + p
	}
	return p
}

// evalPath resolves an absolute path physically.
func (e *Engine) evalPath(p string) string { return e.evalPathHops(p, 0) }

func (e *Engine) evalPathHops(p string, hops int) string {
	// Start from the workspace root (resolved once at compile time) when
	// the path is written below it.
	cur, rest := "/", p
	for _, root := range [...]string{e.rootRaw, e.root} {
		if len(p) > len(root) && p[len(root)] == '/' && strings.HasPrefix(p, root) {
			cur, rest = e.root, p[len(root)+1:]
			break
		} else if p == root {
			return e.root
		}
	}
	missing := false
	for rest != "" {
		seg, more, _ := strings.Cut(rest, "/")
		rest = more
		switch seg {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := cur + "/" + seg
		if cur == "/" {
			next = "/" + seg
		}
		if missing {
			cur = next
			continue
		}
		fi, err := e.ws.Lstat(next)
		if err != nil {
			missing = true
			cur = next
			continue
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		hops++
		target, err := e.ws.Readlink(next)
		if hops > 40 || err != nil {
			// A link loop: the system refuses it too; keep the path.
			cur = next
			continue
		}
		if !filepath.IsAbs(target) {
			target = cur + "/" + target
		}
		cur = e.evalPathHops(target, hops)
	}
	return cur
}

func (e *Engine) relTo(abs string) (string, bool) {
	for _, root := range []string{e.root, e.rootRaw} {
		if abs == root {
			return ".", true
		}
		if under(abs, root) {
			return abs[len(root)+1:], true
		}
	}
	return abs, false
}

// cleanPath makes a path absolute and clean ("~", ".", "..") without
// resolving symlinks: the path as written, checked beside the resolved one.
// A backslash is an ordinary character in a file name here, as it is to
// the kernel.
func (e *Engine) cleanPath(raw, base string) string {
	p := e.expandHome(raw)
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}

// under reports whether path p is dir or inside it, without building
// dir + "/".
func under(p, dir string) bool {
	return p == dir || len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}

// underFold is under for warden's own files, ignoring case: on a file
// system that ignores it (macOS, Windows), WARDEN.yaml is warden.yaml.
func underFold(p, dir string) bool { return underFoldA(p, dir, isASCII(p) && isASCII(dir)) }

// underFoldA is underFold for callers that know whether both paths are
// ASCII (ascii), which spares a scan of each.
func underFoldA(p, dir string, ascii bool) bool {
	if len(p) >= len(dir) && (len(p) == len(dir) || p[len(dir)] == '/') && strings.EqualFold(p[:len(dir)], dir) {
		return true
	}
	// A letter another spelling of which takes more or fewer bytes (the
	// Kelvin sign, the long s: active_intentſ.yaml is active_intents.yaml
	// on APFS) is compared by its folded form.
	if ascii {
		return false
	}
	return under(foldLower(p), foldLower(dir))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// procAlias returns where a path through /dev/fd or /proc/self lands for
// the process that opens it, when that is a path warden can judge:
// /dev/fd is /proc/self/fd, so /dev/fd/.. is /proc/self;
// /proc/self/cwd/REST (and thread-self) is REST in the command's working
// folder, /proc/self/root/REST is /REST. It returns "" for any other path.
// The path itself stays computed; this is a spelling checked beside it,
// so that one that lands on a protected or private path is denied as such.
func procAlias(p string) string {
	if shell.IsDyn(p) {
		return ""
	}
	q := p
	if rest, ok := strings.CutPrefix(q, "/dev/fd/"); ok {
		q = "/proc/self/fd/" + rest
	} else if !strings.HasPrefix(q, "/proc/") {
		return ""
	}
	// fd is a folder: fd/.. is /proc/self (doubled slashes and "." are
	// nothing); the rest is kept as written, for resolve to follow.
	for strings.Contains(q, "//") {
		q = strings.ReplaceAll(q, "//", "/")
	}
	q = strings.ReplaceAll(q, "/./", "/")
	if rest, ok := strings.CutPrefix(q, "/proc/self/fd/.."); ok && (rest == "" || rest[0] == '/') {
		q = "/proc/self" + rest
	}
	if rest, ok := strings.CutPrefix(q, "/proc/self/../"); ok {
		// /proc/self/.. is /proc: /proc/self/../self/cwd.
		q = "/proc/" + rest
	}
	for _, self := range []string{"/proc/self/", "/proc/thread-self/"} {
		rest, ok := strings.CutPrefix(q, self)
		if !ok {
			continue
		}
		switch {
		case rest == "cwd":
			return "."
		case strings.HasPrefix(rest, "cwd/"):
			return "./" + strings.TrimPrefix(rest, "cwd/")
		case rest == "root":
			return "/"
		case strings.HasPrefix(rest, "root/"):
			return "/" + strings.TrimPrefix(rest, "root/")
		}
	}
	return ""
}

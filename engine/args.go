package engine

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/warden-run/warden/internal/fold"
	"github.com/warden-run/warden/shell"

	"github.com/warden-run/warden"
)

// The argument names warden reads paths from (docs/policy.md, "Paths"):
// this is the one list; hasPathArgs and the checks below use it.
var (
	// pathKeys each hold one path (a string).
	pathKeys = []string{"path", "file_path", "filePath", "filename", "notebook_path", "absolute_path", "dir_path", "scriptPath"}
	// pathListKey holds a path or a list of paths.
	pathListKey = "paths"
	// moveKeys are a move's source (removed) and destination (written).
	moveKeys = [...]string{"source", "destination"}
	// patchKeys hold patch bodies, whose headers name the files.
	patchKeys = []string{"input", "patch", "patchText", "patch_text", "diff"}
	// nestedKeys hold lists of files (Roo Code's args.file[].path,
	// files[].path).
	nestedKeys = [...]string{"args", "files", "file"}
)

// pathArgs is every name of the lists above, for hasPathArgs; pathArgHint
// has, for each name, the bit of its last byte in the word of its length,
// so that most other argument names (command, content, description's
// length and last byte are shared, command's are not) cost no map lookup.
var pathArgs, pathArgHint = func() (map[string]bool, [32]uint32) {
	m := map[string]bool{pathListKey: true}
	for _, ks := range [][]string{pathKeys, moveKeys[:], patchKeys, nestedKeys[:]} {
		for _, k := range ks {
			m[k] = true
		}
	}
	var h [32]uint32
	for k := range m {
		h[len(k)&31] |= 1 << (k[len(k)-1] & 31)
	}
	return m, h
}()

// badArg denies a call whose path argument k is not of the type want: the
// host or the model sent a malformed call (BAD_INPUT, recoverable: the
// same call with the argument as a string can be decided).
func badArg(st *state, k string, v any, want string) {
	st.check("args", item{effect: warden.Deny, code: warden.CodeBadInput, subject: k, extra: want, note: jsonType(v)})
}

// jsonType names the JSON type of a decoded argument.
func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "true or false"
	case float64, json.Number, int, int64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "a value of another type"
}

// looseArg reports a top-level string argument looseArgs checks.
func looseArg(k, s string) bool {
	return s != "" && len(s) <= 4096 && !strings.ContainsAny(s, "\n\x00") && !(pathArgs[k] && !slices.Contains(nestedKeys[:], k)) &&
		!isWorkdirKey(k) && pathLikeKey(k)
}

// Bounds of looseValues: past them the call asks.
const (
	looseDepth   = 8
	looseStrings = 2000
)

// notPathKey reports an argument name that says it holds something other
// than a path (content, pattern, query, url, ...).
func notPathKey(k string) bool {
	for w := range keyWords(k) {
		for _, not := range notPathWords {
			if strings.Contains(w, not) {
				return true
			}
		}
	}
	return false
}

var notPathWords = [...]string{"content", "pattern", "glob", "query", "regex", "text", "url", "uri", "type", "mode", "format", "encoding"}

// pathLikeKey reports an argument name that says it holds a path: one of
// its words (split at "_", "-", "." and before an upper-case letter)
// starts or ends with a word for a path (target_file, outputPath,
// backup_dir, filename, subdir), and none is a word for something else
// (content, pattern, query, url, type, mode, ...). OpenCode's oldString
// holds no path although "dst" is in it.
func pathLikeKey(k string) bool {
	path := false
	if notPathKey(k) {
		return false
	}
	for w := range keyWords(k) {
		for _, stem := range [...]string{"path", "file", "dir", "folder", "target", "dest", "dst", "src", "source", "output", "location"} {
			if strings.HasPrefix(w, stem) || strings.HasSuffix(w, stem) {
				path = true
			}
		}
	}
	return path
}

// keyWords yields the lower-cased words of an argument name.
func keyWords(k string) func(func(string) bool) {
	return func(yield func(string) bool) {
		start := 0
		for i := 0; i <= len(k); i++ {
			end := i == len(k) || k[i] == '_' || k[i] == '-' || k[i] == '.' || i > start && 'A' <= k[i] && k[i] <= 'Z' && !('A' <= k[i-1] && k[i-1] <= 'Z')
			if !end {
				continue
			}
			if i > start && !yield(strings.ToLower(k[start:i])) {
				return
			}
			start = i
			if i < len(k) && (k[i] == '_' || k[i] == '-' || k[i] == '.') {
				start = i + 1
			}
		}
	}
}

// nestedPaths finds path arguments inside lists and objects of a call's
// arguments, two levels deep.
func nestedPaths(v any, depth int, fn func(string)) {
	if depth > 2 {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		for _, k := range pathKeys {
			if s, ok := v[k].(string); ok {
				fn(s)
			}
		}
		for _, x := range v {
			switch x.(type) {
			case map[string]any, []any:
				nestedPaths(x, depth+1, fn)
			}
		}
	case []any:
		for _, x := range v {
			nestedPaths(x, depth+1, fn)
		}
	}
}

// workdirKeys are the argument names of a shell tool's working folder.
var workdirKeys = [...]string{"workdir", "directory", "cwd", "working_directory", "dir_path"}

// anyWorkdirKey reports whether args has one of workdirKeys, looking at
// its few keys rather than for each of workdirKeys.
func anyWorkdirKey(args map[string]any) bool {
	if len(args) >= len(workdirKeys) {
		return true // look for each
	}
	for k := range args {
		if isWorkdirKey(k) {
			return true
		}
	}
	return false
}

// argKeys says what the call's argument names hold, read in one pass.
type argKeys struct {
	path    bool // a path argument (hasPathArgs)
	workdir bool // one of workdirKeys
	// env, uri and shell: an argument of that name (env or environment,
	// read by callEnv; uri, by uriPart; shell, by shellParts), so that a
	// call without one needs no lookup of each.
	env, uri, shell bool
}

// note records one argument name.
func (k *argKeys) note(name string) {
	k.path = k.path || isPathArg(name)
	k.workdir = k.workdir || isWorkdirKey(name)
	switch name {
	case "env", "environment":
		k.env = true
	case "uri":
		k.uri = true
	case "shell":
		k.shell = true
	}
}

// scanArgs is caseTwins of the call's arguments, which reads their names
// for argKeys in the same pass.
func (st *state) scanArgs() (string, string, bool) {
	v := st.call.Args
	st.keysRead = true
	if len(v) == 1 {
		// One argument, most often a shell tool's command: found by its
		// name, which costs less than starting a walk of the map.
		if x, ok := v["command"]; ok {
			st.keys = commandKeys
			st.command, st.hasCommand = x, true
			if a, b, ok := caseTwins(x); ok {
				st.keysRead = false
				return a, b, true
			}
			return "", "", false
		}
	}
	var few [8]string
	n := 0
	var seen map[string]string
	for k, x := range v {
		st.keys.note(k)
		if a, b, ok := caseTwins(x); ok {
			st.keysRead = false // not every name was read
			return a, b, true
		}
		if !hasLetter(k) {
			continue
		}
		if len(v) <= len(few) {
			for _, other := range few[:n] {
				if strings.EqualFold(k, other) {
					st.keysRead = false
					return min(k, other), max(k, other), true
				}
			}
			few[n] = k
			n++
			continue
		}
		if seen == nil {
			seen = make(map[string]string, len(v))
		}
		f := fold.Key(k)
		if other, ok := seen[f]; ok {
			st.keysRead = false
			return min(k, other), max(k, other), true
		}
		seen[f] = k
	}
	return "", "", false
}

// commandKeys are the argKeys of the one name "command".
var commandKeys = func() (k argKeys) {
	k.note("command")
	return k
}()

// argKeys reads the call's argument names once.
func (st *state) argKeys() argKeys {
	if !st.keysRead {
		st.readKeys()
	}
	return st.keys
}

func (st *state) readKeys() {
	st.keysRead, st.keys = true, argKeys{}
	for k := range st.call.Args {
		st.keys.note(k)
	}
}

func isWorkdirKey(k string) bool {
	for _, w := range workdirKeys {
		if k == w {
			return true
		}
	}
	return false
}

// hasPathArgs reports whether any argument is one that paths or patches are
// read from (pathArgs). Ranging over a call's few arguments costs less
// than looking up each of the 19 names, and the hint spares most of them
// the map lookup.
func hasPathArgs(args map[string]any) bool {
	for k := range args {
		if isPathArg(k) {
			return true
		}
	}
	return false
}

// isPathArg reports a path argument's name.
func isPathArg(k string) bool {
	n := len(k)
	return n > 0 && pathArgHint[n&31]&(1<<(k[n-1]&31)) != 0 && pathArgs[k]
}

// twinKeys marks the BAD_INPUT of arguments with two keys that differ only
// in case.
const twinKeys = "one key"

// nulPath marks the BAD_INPUT of a path with a NUL byte in it.
const nulPath = "no NUL"

// caseTwins finds two keys of one object in the arguments, at any depth,
// that are equal but for case ("path" and "Path"). The engine reads an
// argument by its exact name, but a tool may not: Go's encoding/json, for
// one, fills a field from either spelling and keeps the last, so a server
// written with it could write the path warden did not look at.
func caseTwins(v any) (string, string, bool) {
	switch v := v.(type) {
	case map[string]any:
		// Few keys (nearly every call): compared pairwise, with no
		// allocation; more: by their folded form.
		var few [8]string
		n := 0
		var seen map[string]string
		for k, x := range v {
			if a, b, ok := caseTwins(x); ok {
				return a, b, true
			}
			if !hasLetter(k) {
				continue
			}
			if len(v) <= len(few) {
				for _, other := range few[:n] {
					if strings.EqualFold(k, other) {
						return min(k, other), max(k, other), true
					}
				}
				few[n] = k
				n++
				continue
			}
			if seen == nil {
				seen = make(map[string]string, len(v))
			}
			f := fold.Key(k)
			if other, ok := seen[f]; ok {
				return min(k, other), max(k, other), true
			}
			seen[f] = k
		}
	case []any:
		for _, x := range v {
			if a, b, ok := caseTwins(x); ok {
				return a, b, true
			}
		}
	}
	return "", "", false
}

// hasLetter reports a key that case could change: one with a letter, or
// any byte past ASCII.
func hasLetter(k string) bool {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c >= 0x80 || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}

// looseArgs checks the string arguments of a call whose names say they
// hold a path but which warden does not read as one (an MCP server's
// target_file, output_path, file, backup_dir): the tool may read or write
// what they name. As a word given to a program warden has no table for,
// each is checked against the private and the protected paths, and
// nothing else: mcp__notes__save {target_file: .git/config} is denied.
func (e *Engine) looseArgs(st *state) {
	for k, v := range st.call.Args {
		if s, ok := v.(string); ok && looseArg(k, s) {
			e.readPart(st, shell.Write{Path: s, Op: "argument " + k, Private: true, Maybe: true}, nil)
		}
	}
}

// looseValues checks the arguments of a tool warden knows nothing of (kind
// other: an MCP server's tool), at any depth: a string that could be a
// path (one word: no space, tab or line break) is checked against the
// private and the protected paths, whatever its argument's name, unless
// the name says it holds something else (content, pattern, query, url,
// ...). The tool's schema is the server's: mcp__fs__write {name:
// .git/hooks/pre-commit} and mcp__x__edit {edits: [{path: .git/config}]}
// are denied. A file URI is checked as the path it names. A call with
// more strings, or deeper, than warden looks through asks.
func (e *Engine) looseValues(st *state) {
	n := 0
	deep := false
	var walk func(k string, v any, depth int)
	walk = func(k string, v any, depth int) {
		if depth > looseDepth || n > looseStrings {
			deep = true
			return
		}
		switch v := v.(type) {
		case string:
			n++
			if v == "" || len(v) > 4096 || strings.ContainsAny(v, " \t\r\n\x00") || notPathKey(k) ||
				depth == 0 && (pathArgs[k] || looseArg(k, v)) {
				// Not a path; or a top-level argument read as a path
				// (pathPart) or checked by looseArgs already.
				return
			}
			if len(v) > 5 && strings.EqualFold(v[:5], "file:") {
				if u, err := url.Parse(v); err == nil && u.Path != "" {
					v = u.Path
				}
			}
			e.readPart(st, shell.Write{Path: v, Op: "argument " + k, Private: true, Maybe: true}, nil)
		case map[string]any:
			for kk, x := range v {
				walk(kk, x, depth+1)
			}
		case []any:
			for _, x := range v {
				walk(k, x, depth+1)
			}
		}
	}
	for k, v := range st.call.Args {
		walk(k, v, 0)
	}
	if deep {
		st.check("args", item{effect: warden.Ask, code: warden.CodeUnparsable, subject: st.call.Tool,
			extra: fmt.Sprintf("the call's arguments hold more than %d strings or lie deeper than %d levels, more than warden looks through for paths", looseStrings, looseDepth)})
	}
}

// uriPart checks a file URI in a call's uri argument (Codex's
// read_mcp_resource {server, uri}: an MCP server's resource may be a file,
// file:///home/me/.ssh/id_rsa) as the path it names; it returns the number
// of parts it decided. A file URI on another host, or one that does not
// parse, is a path warden cannot read.
func (e *Engine) uriPart(st *state) int {
	if !st.argKeys().uri {
		return 0
	}
	s, ok := st.call.Args["uri"].(string)
	if !ok || len(s) < 5 || !strings.EqualFold(s[:5], "file:") {
		return 0
	}
	write := writeKind(st.kind)
	u, err := url.Parse(s)
	if err != nil || u.Host != "" && !strings.EqualFold(u.Host, "localhost") || u.Path == "" {
		e.pathPart(st, shell.Dyn+s, write, "", "", nil)
		return 1
	}
	e.pathPart(st, u.Path, write, "", "", nil)
	return 1
}

// callPart decides a call as a whole. A write, edit or delete call whose
// files warden cannot identify is never allowed by the default or by a
// rule that does not name its tool: it asks at most (UNKNOWN_TARGET).
func (e *Engine) callPart(st *state) {
	p := part{subject: warden.SubjectCall, destr: st.destructive}
	switch st.kind {
	case "write", "edit", "delete":
		p.unknownTarget = true
	}
	e.evalPart(st, &p)
}

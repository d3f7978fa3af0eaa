package engine

import (
	"fmt"
	"slices"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/glob"
	"github.com/warden-run/warden/shell"
)

func globText(pattern, s string) bool { return glob.Text(pattern, s) }

// writeKinds are the kinds whose paths are written.
func writeKind(kind string) bool {
	switch kind {
	case "write", "edit", "delete", "other", "shell":
		return true
	}
	return false
}

// parts splits the call into parts and decides each.
func (e *Engine) parts(st *state) {
	c := &st.call
	if a, b, ok := st.scanArgs(); ok {
		st.check("args", item{effect: warden.Deny, code: warden.CodeBadInput, subject: fmt.Sprintf("%q and %q", a, b), extra: twinKeys})
	}
	n := 0
	if st.kind == "shell" {
		n += e.shellParts(st)
		// The other names of a shell tool's working folder (Codex's and
		// OpenCode's workdir, Gemini CLI's directory; dir_path is a path
		// argument): the command runs and lists there (ls with no path
		// reads it), as after cd DIR.
		if st.argKeys().workdir { // none: the common case, without a lookup of each
			for _, k := range workdirKeys {
				if v, ok := c.Args[k].(string); ok && v != "" && !slices.Contains(pathKeys, k) {
					e.readPart(st, shell.Write{Path: v, Op: "working folder"}, nil)
				}
			}
		}
	}
	e.includePart(st)
	n += e.uriPart(st)
	if st.kind != "shell" {
		e.looseArgs(st)
	}
	if st.kind == "other" {
		e.looseValues(st)
		// A tool of kind other counts as a write for intents.require.
		e.computedIntent(st)
	}
	if !st.argKeys().path {
		if e.searchToolPart(st) {
			return
		}
		if n == 0 {
			e.callPart(st)
		}
		return
	}
	write := writeKind(st.kind)
	alt := e.altDirs(st, "")
	// A move names its source and its destination (MCP filesystem
	// move_file): the source is removed, the destination written.
	for _, k := range moveKeys {
		if v, ok := c.Args[k]; ok && (write || st.kind == "other") {
			vk := "write"
			if k == "source" {
				vk = "delete"
			}
			switch v := v.(type) {
			case string:
				e.pathPart(st, v, true, vk, "move "+k, alt)
				n++
			case nil:
			default:
				badArg(st, k, v, "a string")
			}
		}
	}
	for _, k := range pathKeys {
		v, ok := c.Args[k]
		if !ok {
			continue
		}
		switch v := v.(type) {
		case string:
			if st.kind == "shell" && isWorkdirKey(k) {
				// A shell tool's working folder (Gemini CLI's dir_path):
				// where its command runs, not a file it writes.
				e.readPart(st, shell.Write{Path: v, Op: "working folder"}, nil)
			} else {
				e.pathPart(st, v, write, "", "", e.altDirs(st, k))
			}
			n++
		case nil:
		default:
			badArg(st, k, v, "a string")
		}
	}
	e.searchToolPart(st)
	if v, ok := c.Args[pathListKey]; ok {
		switch v := v.(type) {
		case string:
			e.pathPart(st, v, write, "", "", alt)
			n++
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					e.pathPart(st, s, write, "", "", alt)
					n++
				} else {
					badArg(st, pathListKey, x, "a string or a list of strings")
				}
			}
		case nil:
		default:
			badArg(st, pathListKey, v, "a string or a list of strings")
		}
	}
	for _, k := range patchKeys {
		if s, ok := c.Args[k].(string); ok {
			for _, f := range shell.PatchFiles(s) {
				e.pathPart(st, f.Path, true, f.Kind, "patch", alt)
				n++
			}
		}
	}
	for _, k := range nestedKeys {
		if v, ok := c.Args[k]; ok {
			nestedPaths(v, 0, func(p string) {
				e.pathPart(st, p, write, "", "", alt)
				n++
			})
		}
	}
	if n == 0 {
		e.callPart(st)
	}
}

// traceOnly runs f for the trace alone: the parts it evaluates are recorded
// (marked as not counting) but leave the decision as it was.
func (e *Engine) traceOnly(st *state, f func()) {
	saved := *st
	n := len(st.tr.Parts)
	f()
	tr := st.tr
	*st = saved
	for i := n; i < len(tr.Parts); i++ {
		tr.Parts[i].Uncounted = true
	}
}

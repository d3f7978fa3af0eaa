package handler

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Codex runs a PreToolUse hook's updatedInput (with permissionDecision
// allow) from version 0.131; an older Codex reports the answer as a failed
// hook and runs the call as it was, unconfined. Before a rewrite for
// Codex, the hook looks for the Codex process that runs it among its
// ancestors and reads its version: an older one gets no rewrite (a call
// that must run confined is denied, saying to upgrade Codex).

// codexMin is the first Codex that runs a hook's updatedInput.
var codexMin = [3]int{0, 131, 0}

// codexTooOld reports the version of the Codex that runs this process
// when it is older than codexMin ("" when it is recent enough, or when
// no Codex is found among the ancestors, as under hookd).
func codexTooOld() string {
	exe := codexAncestor(os.Getppid(), 8)
	if exe == "" {
		return ""
	}
	v := codexVersion(exe)
	if v == "" {
		return ""
	}
	if got, ok := parseVersion(v); ok && less(got, codexMin) {
		return v
	}
	return ""
}

// codexAncestor is the binary of the nearest ancestor process named
// codex, "" when none is within depth levels.
func codexAncestor(pid, depth int) string {
	for ; pid > 1 && depth > 0; depth-- {
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err == nil && filepath.Base(exe) == "codex" {
			return exe
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return ""
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 2 {
			return ""
		}
		if pid, err = strconv.Atoi(f[1]); err != nil {
			return ""
		}
	}
	return ""
}

var codexVersions sync.Map // binary and its size and time -> version

// codexVersion runs `codex --version` once per binary (by path, size and
// modification time) for this process.
func codexVersion(exe string) string {
	st, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", exe, st.Size(), st.ModTime().UnixNano())
	if v, ok := codexVersions.Load(key); ok {
		return v.(string)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, "--version").Output()
	v := ""
	if err == nil {
		if f := strings.Fields(string(out)); len(f) > 0 {
			v = f[len(f)-1]
		}
	}
	codexVersions.Store(key, v)
	return v
}

func parseVersion(v string) ([3]int, bool) {
	var out [3]int
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return out, false
	}
	for i, p := range parts {
		if j := strings.IndexFunc(p, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
			p = p[:j]
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return out, false
		}
		out[i] = n
	}
	return out, true
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

package mcpproxy

import (
	"net/url"
	"path"
	"strings"
)

// runners are programs that run a server named by their first
// non-option argument (node dist/index.js, npx -y @scope/server-x).
var runners = map[string]bool{
	"node": true, "npx": true, "bunx": true, "bun": true, "deno": true, "pnpm": true, "yarn": true,
	"python": true, "python3": true, "uv": true, "uvx": true, "pipx": true, "docker": true, "podman": true,
	"go": true, "sh": true, "bash": true,
}

// runnerWords are subcommands of the runners that come before the server.
var runnerWords = map[string]bool{"run": true, "exec": true, "dlx": true, "x": true, "-m": true}

// codeDirs are folders inside a package that do not name it.
var codeDirs = map[string]bool{"dist": true, "build": true, "lib": true, "src": true, "bin": true, "out": true, "cmd": true}

// ServerName derives the server's name in tool names (mcp__NAME__TOOL)
// from its command line: the package or program it runs, without the
// usual "mcp-server-" or "server-" prefixes. The filesystem reference
// server, run as `npx -y @modelcontextprotocol/server-filesystem DIR` or
// `node node_modules/@modelcontextprotocol/server-filesystem/dist/index.js DIR`,
// is "filesystem". It returns "" when it finds nothing; set the name
// yourself to the name the client knows the server by.
func ServerName(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	target := argv[0]
	if runners[path.Base(target)] {
		target = ""
		for _, a := range argv[1:] {
			if strings.HasPrefix(a, "-") && a != "-m" || runnerWords[a] {
				continue
			}
			target = a
			break
		}
	}
	return clean(packageName(target))
}

// packageName is the package or program a command's target names.
func packageName(target string) string {
	target = strings.TrimSuffix(target, "/")
	// @scope/name@version
	if i := strings.LastIndex(target, "@"); i > 0 && !strings.Contains(target[i:], "/") {
		target = target[:i]
	}
	parts := strings.Split(target, "/")
	for i := len(parts) - 1; i >= 0; i-- {
		p := parts[i]
		if i == len(parts)-1 {
			if ext := path.Ext(p); ext != "" && p != ext {
				base := strings.TrimSuffix(p, ext)
				if base != "index" && base != "main" && base != "server" && base != "cli" && base != "__main__" {
					return base
				}
				continue
			}
		}
		if p == "" || p == "." || p == ".." || codeDirs[p] {
			continue
		}
		return p
	}
	return ""
}

// clean strips the usual prefixes and suffixes of server package names
// and keeps the characters Claude Code keeps in server names.
func clean(name string) string {
	for _, p := range []string{"mcp-server-", "server-", "mcp-"} {
		if rest, ok := strings.CutPrefix(name, p); ok && rest != "" {
			name = rest
			break
		}
	}
	for _, s := range []string{"-mcp-server", "-server", "-mcp"} {
		if rest, ok := strings.CutSuffix(name, s); ok && rest != "" {
			name = rest
			break
		}
	}
	return sanitize(name)
}

// sanitize replaces what is not a letter, digit, _ or - with _.
func sanitize(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// ServerNameURL derives the server's name from its URL: the host's first
// label (mcp.example.com: "example"; localhost: "localhost").
func ServerNameURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return ""
	}
	labels := strings.Split(u.Hostname(), ".")
	name := labels[0]
	if (name == "mcp" || name == "api" || name == "www") && len(labels) > 2 {
		name = labels[1]
	}
	return sanitize(name)
}

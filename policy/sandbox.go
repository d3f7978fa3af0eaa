package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Sandbox modes of `sandbox.shell`.
const (
	SandboxOff      = "off"
	SandboxOn       = "on"
	SandboxRequired = "required"
)

// Sandbox is the `sandbox:` section: how the commands warden allows are
// confined when they run (docs/sandbox.md). The zero value, what a policy
// without the section gets, is Shell "off", Network "deny", no ports and
// no extra writable folders.
type Sandbox struct {
	// Shell is "off" (default), "on" (confine where the kernel can, run
	// unconfined with a warning where it cannot) or "required" (never run
	// unconfined).
	Shell string
	// Network is "deny" (default) or "allow": with deny, no outbound TCP
	// connection succeeds except to Ports.
	Network string
	// Ports are the TCP ports a confined command may connect to when
	// Network is deny (a test database on the loopback).
	Ports []int
	// Writable are more folders a confined command may write, absolute
	// (relative entries are resolved against the policy's folder, "~/"
	// against the home folder).
	Writable []string
	Pos      Pos
}

// Confine reports whether allowed shell commands are to run confined.
func (s Sandbox) Confine() bool { return s.Shell == SandboxOn || s.Shell == SandboxRequired }

// Required reports whether a command may never run unconfined.
func (s Sandbox) Required() bool { return s.Shell == SandboxRequired }

// NetworkDenied reports whether outbound TCP is refused (ports aside).
func (s Sandbox) NetworkDenied() bool { return s.Network != "allow" }

// sandbox decodes the `sandbox:` section.
func (d *decoder) sandbox(p *Policy, n *yaml.Node) {
	p.Sandbox = Sandbox{Shell: SandboxOff, Network: "deny", Pos: d.pos(resolve(n))}
	m := d.mapping(n, "sandbox", "shell", "network", "ports", "writable")
	if m == nil {
		return
	}
	if f, ok := m["shell"]; ok {
		v := resolve(f.val)
		s := v.Value
		// YAML 1.1 readers take on and off for booleans; accept the
		// boolean spellings too.
		switch s {
		case "true":
			s = SandboxOn
		case "false":
			s = SandboxOff
		}
		if v.Kind != yaml.ScalarNode || (s != SandboxOff && s != SandboxOn && s != SandboxRequired) {
			d.err(v, "sandbox.shell", "%s is not one of off, on, required", kindName(v))
		} else {
			p.Sandbox.Shell = s
		}
	}
	if f, ok := m["network"]; ok {
		if s, ok := d.str(f.val, "sandbox.network"); ok {
			if s != "deny" && s != "allow" {
				d.err(f.val, "sandbox.network", "%q is not one of deny, allow", s)
			} else {
				p.Sandbox.Network = s
			}
		}
	}
	if f, ok := m["ports"]; ok {
		v := resolve(f.val)
		if v.Kind != yaml.SequenceNode {
			d.err(v, "sandbox.ports", "must be a list of port numbers, not %s", kindName(v))
		} else {
			seen := map[int]bool{}
			for i, c := range v.Content {
				path := fmt.Sprintf("sandbox.ports[%d]", i)
				port, ok := d.integer(c, path, 1)
				if !ok {
					continue
				}
				if port > 65535 {
					d.err(c, path, "%d is not a TCP port (1 to 65535)", port)
					continue
				}
				if seen[port] {
					d.warn(c, path, "port %d is listed twice", port)
					continue
				}
				seen[port] = true
				p.Sandbox.Ports = append(p.Sandbox.Ports, port)
			}
			if len(p.Sandbox.Ports) > 0 && p.Sandbox.Network == "allow" {
				d.warn(v, "sandbox.ports", "network is allow, so every port is reachable and this list has no effect")
			}
		}
	}
	if f, ok := m["writable"]; ok {
		v := resolve(f.val)
		if v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
			return // writable: [] is the default, written out
		}
		for i, s := range d.strs(f.val, "sandbox.writable") {
			item := itemNode(f.val, i)
			path := fmt.Sprintf("sandbox.writable[%d]", i)
			if strings.ContainsAny(s, "*?[") {
				d.err(item, path, "%q: folders are named exactly, globs are not accepted here", s)
				continue
			}
			abs := expandHome(s)
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(p.Dir, abs)
			}
			abs = filepath.Clean(abs)
			home, _ := os.UserHomeDir()
			switch st, err := os.Stat(abs); {
			case abs == "/" || abs == home:
				d.warn(item, path, "%s makes %s writable: a confined command may then rewrite what lies there (shell startup files, other projects); name the folders it needs", s, abs)
			case err != nil:
				d.warn(item, path, "%s does not exist; a confined command gets no write access there until it does", abs)
			case !st.IsDir():
				d.err(item, path, "%s is not a folder", abs)
				continue
			}
			p.Sandbox.Writable = append(p.Sandbox.Writable, abs)
		}
	}
}

// Mode returns Shell, "off" when the policy has no sandbox section.
func (s Sandbox) Mode() string {
	if s.Shell == "" {
		return SandboxOff
	}
	return s.Shell
}

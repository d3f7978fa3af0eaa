package policy

import (
	"fmt"
	"slices"
	"time"

	"github.com/warden-run/warden/host"

	"github.com/warden-run/warden/report"
	"go.yaml.in/yaml/v3"
)

// Report is the `report:` section: the final-report contract (package
// report) that warden holds agents to at the end of each turn (docs/policy.md,
// "Final reports").
type Report struct {
	// Plugins are the plugin files as written, relative to the policy's
	// folder; Files the loaded files, in the same order.
	Plugins []string
	Files   report.PluginFiles
	// Required: the end of a turn is held open (with the retry text) until
	// the report is valid, at most Retries times. When false the
	// instructions are given and a valid report is kept, but a turn
	// without one ends as usual.
	Required bool
	// Roles limits the contract to sessions of these roles, subagents
	// included; empty means every top-level session.
	Roles   []string
	Retries int
	// Spawn bounds the follow-up sessions plugins start (package spawn);
	// never nil after loading (the defaults when the policy says nothing).
	Spawn *ReportSpawn
	// Cache is the response cache (report.cache); off unless enabled.
	Cache ReportCache
	Pos   Pos
}

// ReportSpawn is the `report.spawn:` section: the limits of the follow-up
// sessions a plugin may start when a report completes.
type ReportSpawn struct {
	// MaxDepth is the deepest delegation depth a follow-up session may
	// have (its parent's depth plus one); 0 turns spawning off. A chain of
	// follow-ups therefore ends.
	MaxDepth int
	// MaxPerSession bounds the follow-ups started from one session.
	MaxPerSession int
	// Hosts are the hosts a follow-up may run on; empty means every host.
	Hosts []string
	// Timeout bounds a follow-up session's run; it is killed after.
	Timeout time.Duration
}

// The defaults of report.spawn.
const (
	DefaultSpawnMaxDepth      = 1
	DefaultSpawnMaxPerSession = 3
	DefaultSpawnTimeout       = 30 * time.Minute
)

// DefaultReportSpawn returns the limits of a policy that does not set them.
func DefaultReportSpawn() *ReportSpawn {
	return &ReportSpawn{MaxDepth: DefaultSpawnMaxDepth, MaxPerSession: DefaultSpawnMaxPerSession, Timeout: DefaultSpawnTimeout}
}

// ReportCache is the `report.cache` key: a final report is kept under the
// key of the request that produced it, and an identical request later is
// answered from it (docs/reports.md, "Response cache").
type ReportCache struct {
	Enabled bool
	// TTL is how long an entry serves; DefaultReportCacheTTL when the
	// policy does not say.
	TTL time.Duration
}

// DefaultReportCacheTTL is how long a cached report serves when the
// policy does not say.
const DefaultReportCacheTTL = 24 * time.Hour

// DefaultReportRetries is how many times the gate holds a turn open when
// the policy does not say.
const DefaultReportRetries = 2

// Applies reports whether a session of the role at the delegation depth
// is held to the report contract. A nil Report applies to none.
func (r *Report) Applies(role string, depth int) bool {
	if r == nil {
		return false
	}
	if len(r.Roles) == 0 {
		return depth == 0
	}
	return role != "" && contains(r.Roles, role)
}

// report decodes the `report:` section. Each plugin file is loaded here,
// so that lint reports a missing file, a schema that does not compile or a
// path outside the project at the plugin's entry in the policy.
func (d *decoder) report(p *Policy, n *yaml.Node) {
	m := d.mapping(n, "report", "plugins", "required", "roles", "retries", "spawn", "cache")
	if m == nil {
		return
	}
	r := &Report{Required: true, Retries: DefaultReportRetries, Spawn: DefaultReportSpawn(), Cache: ReportCache{TTL: DefaultReportCacheTTL}, Pos: d.pos(resolve(n))}
	if f, ok := m["plugins"]; ok {
		r.Plugins = d.strs(f.val, "report.plugins")
		names := map[string]string{}
		for j, path := range r.Plugins {
			item := itemNode(f.val, j)
			field := fmt.Sprintf("report.plugins[%d]", j)
			if err := report.CheckPluginPath(path); err != nil {
				d.err(item, field, "%v (plugin files must stay inside the policy's folder)", err)
				continue
			}
			files, err := report.LoadPlugins(p.Dir, []string{path})
			if err != nil {
				d.err(item, field, "%v", err)
				continue
			}
			pf := files[0]
			if prev, dup := names[pf.Name]; dup {
				d.err(item, field, "plugin name %q is already used by %s", pf.Name, prev)
				continue
			}
			names[pf.Name] = path
			r.Files = append(r.Files, pf)
		}
	}
	if f, ok := m["required"]; ok {
		r.Required, _ = d.boolean(f.val, "report.required")
	}
	if f, ok := m["roles"]; ok {
		r.Roles = d.strs(f.val, "report.roles")
		for j, role := range r.Roles {
			if _, ok := p.Roles[role]; !ok {
				d.warn(itemNode(f.val, j), "report.roles", "role %q is not defined under roles; no session takes it", role)
			}
		}
	}
	if f, ok := m["retries"]; ok {
		if v, ok := d.integer(f.val, "report.retries", 0); ok {
			r.Retries = v
		}
	}
	if f, ok := m["retries"]; ok && !r.Required {
		d.warn(f.key, "report.retries", "retries has no effect with required: false (no turn is held open)")
	}
	if f, ok := m["spawn"]; ok {
		d.reportSpawn(p, r.Spawn, f.val)
	}
	// A plugin file's spawn key names a host and a role the policy must
	// know: a misspelt one is an error here, not a refusal at run time.
	if f, ok := m["plugins"]; ok {
		for _, pf := range r.Files {
			sp := pf.Spawn
			if sp == nil {
				continue
			}
			j := slices.Index(r.Plugins, pf.Path)
			item := itemNode(f.val, max(j, 0))
			if _, ok := host.Lookup(sp.Host); !ok {
				d.err(item, "report.plugins", "plugin file %s: spawn.host %q is not a host (want %s)", pf.Path, sp.Host, host.Want())
			} else if len(r.Spawn.Hosts) > 0 && !contains(r.Spawn.Hosts, sp.Host) {
				d.err(item, "report.plugins", "plugin file %s: spawn.host %q is not in report.spawn.hosts", pf.Path, sp.Host)
			}
			if sp.Role != "" && p.Roles[sp.Role] == nil {
				d.err(item, "report.plugins", "plugin file %s: spawn.role %q is not defined under roles", pf.Path, sp.Role)
			}
			if r.Spawn.MaxDepth == 0 {
				d.warn(item, "report.plugins", "plugin file %s asks for a follow-up session, but report.spawn.max_depth is 0: it is refused", pf.Path)
			}
		}
	}
	if f, ok := m["cache"]; ok {
		d.reportCache(r, f.val)
	}
	p.Report = r
}

// reportSpawn decodes `report.spawn:`.
func (d *decoder) reportSpawn(p *Policy, s *ReportSpawn, n *yaml.Node) {
	m := d.mapping(n, "report.spawn", "max_depth", "max_per_session", "hosts", "timeout")
	if m == nil {
		return
	}
	if f, ok := m["max_depth"]; ok {
		if v, ok := d.integer(f.val, "report.spawn.max_depth", 0); ok {
			s.MaxDepth = v
		}
	}
	if f, ok := m["max_per_session"]; ok {
		if v, ok := d.integer(f.val, "report.spawn.max_per_session", 1); ok {
			s.MaxPerSession = v
		}
	}
	if f, ok := m["hosts"]; ok {
		s.Hosts = d.strs(f.val, "report.spawn.hosts")
		for j, h := range s.Hosts {
			if _, ok := host.Lookup(h); !ok {
				d.err(itemNode(f.val, j), "report.spawn.hosts", "unknown host %q (want %s)", h, host.Want())
			}
		}
	}
	if f, ok := m["timeout"]; ok {
		if v, ok := d.duration(f.val, "report.spawn.timeout"); ok {
			if v <= 0 {
				d.err(f.val, "report.spawn.timeout", "must be longer than 0")
			} else {
				s.Timeout = v
			}
		}
	}
}

// reportCache decodes report.cache: {enabled: BOOL, ttl: DURATION}.
func (d *decoder) reportCache(r *Report, n *yaml.Node) {
	m := d.mapping(n, "report.cache", "enabled", "ttl")
	if m == nil {
		return
	}
	if f, ok := m["enabled"]; ok {
		r.Cache.Enabled, _ = d.boolean(f.val, "report.cache.enabled")
	}
	if f, ok := m["ttl"]; ok {
		if v, ok := d.duration(f.val, "report.cache.ttl"); ok {
			if v <= 0 {
				d.err(f.val, "report.cache.ttl", "must be a positive duration such as 12h or 7d")
			} else {
				r.Cache.TTL = v
			}
		}
	}
}

// Stale reports whether a plugin file changed on disk since the policy was
// loaded (false for a nil Report): a process that keeps a loaded policy
// (hookd) loads it again.
func (r *Report) Stale() bool { return r != nil && r.Files.Changed() }

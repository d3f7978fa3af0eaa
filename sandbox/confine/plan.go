package confine

import (
	"fmt"
	"strings"
)

// DisableEnv names mechanisms the probe reports missing although the
// kernel has them, comma-separated: "landlock", "userns", "landlock-net"
// (Landlock without TCP, as before ABI 4). It is for tests, to run the
// paths of a kernel that lacks a mechanism on one that has it: it can
// only take confinement away, so under sandbox.shell: required a run
// with a mechanism disabled is refused, as on such a kernel; under on it
// runs with what is left and says what is not enforced.
const DisableEnv = "WARDEN_SANDBOX_TEST_DISABLE"

// disabled returns k without the mechanisms list names (see DisableEnv).
func disabled(k Kernel, list string) Kernel {
	for _, m := range strings.Split(list, ",") {
		switch strings.TrimSpace(m) {
		case "landlock":
			k.LandlockABI = 0
			k.Disabled = append(k.Disabled, "landlock")
		case "landlock-net":
			if k.LandlockABI > 3 {
				k.LandlockABI = 3
				k.Disabled = append(k.Disabled, "landlock-net")
			}
		case "userns":
			k.UserNS = false
			k.UserNSNote = DisableEnv + " disables them"
			k.Disabled = append(k.Disabled, "userns")
		}
	}
	return k
}

// Kernel is what the running kernel offers for confinement (see Probe).
type Kernel struct {
	// LandlockABI is the Landlock ABI version, 0 when Landlock is missing
	// or disabled. 1 to 3 restrict files, 4 adds TCP, 5 device ioctls,
	// 6 abstract unix sockets and signals.
	LandlockABI int `json:"landlock_abi"`
	// UserNS reports whether this process may create a user namespace
	// (and a mount namespace in it); UserNSNote says why not.
	UserNS     bool   `json:"user_namespaces"`
	UserNSNote string `json:"user_namespaces_note,omitempty"`
	// Bwrap is the path of bubblewrap's bwrap, "" when not installed.
	// warden does not need it; doctor reports it (on a distribution that
	// restricts user namespaces, bwrap carries the profile that allows
	// them).
	Bwrap string `json:"bwrap,omitempty"`
	// OS is the operating system when it is not Linux (no mechanism yet).
	OS string `json:"os,omitempty"`
	// Disabled are the mechanisms DisableEnv took away (tests only).
	Disabled []string `json:"disabled_for_tests,omitempty"`
}

func (k Kernel) String() string {
	var b strings.Builder
	if k.OS != "" {
		fmt.Fprintf(&b, "%s: no confinement mechanism implemented", k.OS)
		return b.String()
	}
	if k.LandlockABI > 0 {
		fmt.Fprintf(&b, "Landlock ABI %d", k.LandlockABI)
	} else {
		b.WriteString("no Landlock")
	}
	if len(k.Disabled) > 0 {
		fmt.Fprintf(&b, " (%s disabled by %s)", strings.Join(k.Disabled, ", "), DisableEnv)
	}
	if k.UserNS {
		b.WriteString(", user namespaces")
	} else {
		b.WriteString(", no user namespaces")
		if k.UserNSNote != "" {
			b.WriteString(" (" + k.UserNSNote + ")")
		}
	}
	if k.Bwrap != "" {
		b.WriteString(", bwrap at " + k.Bwrap)
	}
	return b.String()
}

// Plan is what a Spec's run enforces on a kernel: the record of the
// confinement (for the audit trail, explain and doctor).
type Plan struct {
	// Landlock is the ABI applied (0: none): the outer write boundary,
	// and no mount or umount from inside.
	Landlock int `json:"landlock"`
	// Mounts: protected paths bound read-only and private paths hidden,
	// in a mount namespace of a user namespace.
	Mounts bool `json:"mounts"`
	// Network: outbound TCP restricted to the policy's ports.
	Network bool `json:"network"`
	// Scoped: abstract unix sockets and signals restricted to the
	// sandbox (Landlock ABI 6).
	Scoped bool `json:"scoped"`
	// Warnings say what the policy asks for and the run does not
	// enforce (plain text, one sentence each).
	Warnings []string `json:"warnings,omitempty"`
}

// Confined reports whether the run is confined at all.
func (p Plan) Confined() bool { return p.Landlock > 0 || p.Mounts }

func (p Plan) String() string {
	if !p.Confined() {
		return "unconfined"
	}
	var parts []string
	if p.Landlock > 0 {
		parts = append(parts, fmt.Sprintf("Landlock ABI %d (writes only in the workspace, temp and writable folders)", p.Landlock))
	}
	if p.Mounts {
		parts = append(parts, "mount namespace (protected paths read-only, private paths hidden)")
	}
	if p.Network {
		parts = append(parts, "TCP connect restricted")
	}
	if p.Scoped {
		parts = append(parts, "signals and abstract sockets scoped")
	}
	return strings.Join(parts, "; ")
}

// Plan returns what a run of s enforces on k. Under Required, an error
// says which mechanism is missing and what to do; otherwise the missing
// parts become warnings (and a run with nothing to confine with runs
// unconfined).
func (s Spec) Plan(k Kernel) (Plan, error) {
	p := Plan{Warnings: append([]string(nil), s.Warnings...)}
	var missing []string
	if len(k.Disabled) > 0 {
		missing = append(missing, fmt.Sprintf("%s (meant for tests) is set and takes away %s: unset it", DisableEnv, strings.Join(k.Disabled, ", ")))
	}
	if k.OS != "" {
		missing = append(missing, fmt.Sprintf("warden cannot confine commands on %s yet, so the command runs with every permission of its user", k.OS))
	}
	if k.LandlockABI > 0 {
		p.Landlock = k.LandlockABI
		p.Scoped = k.LandlockABI >= 6
	} else if k.OS == "" {
		missing = append(missing, "the kernel has no Landlock (Linux 5.13 or later with lsm=landlock), so writes outside the workspace are not refused")
	}
	if k.UserNS {
		p.Mounts = true
	} else if k.OS == "" {
		note := ""
		if k.UserNSNote != "" {
			note = " (" + k.UserNSNote + ")"
		}
		missing = append(missing, "user namespaces are not available"+note+", so protected paths inside the workspace are writable and private paths readable")
	}
	if s.NetworkDeny {
		if k.LandlockABI >= 4 {
			p.Network = true
		} else if k.OS == "" {
			missing = append(missing, "the kernel's Landlock cannot restrict TCP (ABI 4, Linux 6.7, is needed), so the network is open")
		}
	}
	if len(missing) > 0 && s.Required {
		return Plan{}, fmt.Errorf("sandbox.shell is required but %s. Nothing was run. Run it on a kernel that offers the mechanism (see warden doctor), or set sandbox.shell: on to run with what the kernel offers", strings.Join(missing, "; and "))
	}
	p.Warnings = append(p.Warnings, missing...)
	return p, nil
}

//go:build linux

package sandbox_test

import (
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/sandbox"
)

// BenchmarkOverhead runs, interleaved, what a host's shell runs for an
// allowed `true`: plain `bash -c true`; the hook's rewrite on the lean
// runner (`bash -c "warden-sandbox --spec FILE --spec-sha256 HEX
// --required -- bash -c true"`, the spec written by Specs as a hook
// writes it), and under unshare where it can start the runner
// (rewrite-inside: `unshare ... -- warden-sandbox ... --inside ...`, one
// process); the rewrite on `warden sandbox` (what a warden without
// warden-sandbox next to it rewrites to); and, where installed, bwrap
// with the same read-only binds and hidden paths around `bash -c true`,
// in a small git workspace (the real binaries, built once). It reports
// each one's median wall time and CPU time per run and the medians'
// differences to bash:
//
//	go test -run XXX -bench Overhead -benchtime 200x ./sandbox/
func BenchmarkOverhead(b *testing.B) {
	k := sandbox.Probe()
	if k.LandlockABI == 0 || !k.UserNS {
		b.Skipf("this kernel cannot confine (%s)", k)
	}
	dir := b.TempDir()
	bin := filepath.Join(dir, "warden")
	// warden, and the small helper next to it (its confining child, and
	// the runner of a spec written ahead).
	build := exec.Command("go", "build", "-o", dir+"/", "./cmd/warden", "./cmd/warden-sandbox")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(filepath.Join(ws, "src"), 0o755)
	os.WriteFile(filepath.Join(ws, "warden.yaml"), []byte("version: 1\nprotected: [\"config/**\"]\nsandbox: {shell: required, ports: [5432]}\n"), 0o644)
	os.WriteFile(filepath.Join(ws, ".env"), []byte("TOKEN=x\n"), 0o600)
	os.WriteFile(filepath.Join(ws, "src", "main.go"), []byte("package main\n"), 0o644)
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
	// A first run creates the placeholders, so that bwrap binds the same.
	if out, err := exec.Command(bin, "sandbox", "--cwd", ws, "--", "true").CombinedOutput(); err != nil {
		b.Fatalf("warden sandbox -- true: %v\n%s", err, out)
	}
	p, err := policy.Load(filepath.Join(ws, "warden.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	digest := hex.EncodeToString(p.Digest[:])
	prep, err := sandbox.NewSpecs().Prepare(p, digest)
	if err != nil {
		b.Fatal(err)
	}
	spec := prep.Spec
	rwSpec, err := sandbox.RewriteSpec(sandbox.Runner(bin), prep.File, prep.Sum, true, "true")
	if err != nil || sandbox.Runner(bin) == "" {
		b.Fatalf("rewrite on the runner: %v", err)
	}
	rwWarden, err := sandbox.Rewrite(bin, p.File, digest, true, "true")
	if err != nil {
		b.Fatal(err)
	}
	runs := map[string][]string{
		"bash":           {"bash", "-c", "true"},
		"rewrite-spec":   {"bash", "-c", rwSpec},
		"rewrite-warden": {"bash", "-c", rwWarden},
	}
	order := []string{"bash", "rewrite-spec", "rewrite-warden"}
	if u := sandbox.Unshare(); u != "" {
		// What a hook answers where unshare can start the runner.
		rwInside, err := sandbox.RewriteInside(u, sandbox.Runner(bin), prep.File, prep.Sum, true, "true")
		if err != nil {
			b.Fatal(err)
		}
		runs["rewrite-inside"] = []string{"bash", "-c", rwInside}
		order = append(order, "rewrite-inside")
	}
	if k.Bwrap != "" {
		args := []string{k.Bwrap, "--unshare-user", "--dev-bind", "/", "/"}
		for _, r := range spec.ReadOnly {
			args = append(args, "--ro-bind", r, r)
		}
		for _, h := range spec.Hidden {
			if st, err := os.Stat(h); err == nil && st.IsDir() {
				args = append(args, "--tmpfs", h, "--remount-ro", h)
			} else {
				args = append(args, "--ro-bind", "/dev/null", h)
			}
		}
		args = append(args, "--chdir", ws, "--", sandbox.Bash(), "-c", "true")
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = sandbox.Quote(a)
		}
		runs["bwrap"] = []string{"bash", "-c", strings.Join(quoted, " ")}
		order = append(order, "bwrap")
	}
	// Wall time, and CPU time (user and system, the process and the
	// children it waited for): on a loaded machine the wall time carries
	// the waits for a CPU, the CPU time does not.
	times := map[string][]time.Duration{}
	cpu := map[string][]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, name := range order {
			argv := runs[name]
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir = ws
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%s: %v\n%s", name, err, out)
			}
			times[name] = append(times[name], time.Since(start))
			cpu[name] = append(cpu[name], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
	}
	b.StopTimer()
	median := func(ts []time.Duration) float64 {
		slices.Sort(ts)
		return float64(ts[len(ts)/2].Microseconds()) / 1000
	}
	med, medCPU := map[string]float64{}, map[string]float64{}
	for _, name := range order {
		med[name], medCPU[name] = median(times[name]), median(cpu[name])
		b.ReportMetric(med[name], "ms/"+name)
		b.ReportMetric(medCPU[name], "cpu-ms/"+name)
	}
	for _, name := range order[1:] {
		b.ReportMetric(med[name]-med["bash"], "ms-overhead/"+name)
		b.ReportMetric(medCPU[name]-medCPU["bash"], "cpu-ms-overhead/"+name)
	}
}

// BenchmarkFromPolicy derives the confinement of a policy (what a hook
// does for every allowed shell command it rewrites) in a workspace of
// 20,000 files in 2,000 folders, with the default private globs (every
// .env) and one protected glob: the walk of the workspace dominates.
//
//	go test -run XXX -bench FromPolicy ./sandbox/
func BenchmarkFromPolicy(b *testing.B) {
	ws := b.TempDir()
	for d := 0; d < 2000; d++ {
		dir := filepath.Join(ws, "src", fmt.Sprintf("m%02d", d%50), fmt.Sprintf("p%04d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := 0; f < 10; f++ {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", f)), nil, 0o644)
		}
	}
	os.WriteFile(filepath.Join(ws, "warden.yaml"), []byte("version: 1\nprotected: [\"config/**\"]\nsandbox: {shell: required}\n"), 0o644)
	p, err := policy.Load(filepath.Join(ws, "warden.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := sandbox.FromPolicy(p, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSpecsPrepare is what a hook that keeps a Specs (hookd) does
// per allowed shell command in the same workspace of 20,000 files as
// BenchmarkFromPolicy, nothing changed since the last call: the fixed
// paths derived again, each folder of the workspace stamped (not read),
// the spec file's stamp checked. /oneshot is a new Specs per call (a
// one-shot warden hook, starting from the walk file). /changed adds a new file in one folder
// before each call (that folder is read again, a new spec file written).
// /watched and /watched-changed are the same for hookd's Specs, which
// watches the folders (Specs.Watch).
//
//	go test -run XXX -bench 'FromPolicy|SpecsPrepare' ./sandbox/
func BenchmarkSpecsPrepare(b *testing.B) {
	ws := b.TempDir()
	for d := 0; d < 2000; d++ {
		dir := filepath.Join(ws, "src", fmt.Sprintf("m%02d", d%50), fmt.Sprintf("p%04d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := 0; f < 10; f++ {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", f)), nil, 0o644)
		}
	}
	os.WriteFile(filepath.Join(ws, "warden.yaml"), []byte("version: 1\nprotected: [\"config/**\"]\nsandbox: {shell: required}\n"), 0o644)
	p, err := policy.Load(filepath.Join(ws, "warden.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	digest := hex.EncodeToString(p.Digest[:])
	c := sandbox.NewSpecs()
	for range 2 {
		if _, err := c.Prepare(p, digest); err != nil {
			b.Fatal(err)
		}
		time.Sleep(250 * time.Millisecond) // past the clock step: stamps trusted
	}
	b.Run("unchanged", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Prepare(p, digest); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("oneshot", func(b *testing.B) {
		// A new Specs per call, as a one-shot warden hook: the walk file.
		for b.Loop() {
			if _, err := sandbox.NewSpecs().Prepare(p, digest); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("changed", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			os.WriteFile(filepath.Join(ws, "src", "m07", "p0007", fmt.Sprintf("new%d.go", i)), nil, 0o644)
			if _, err := c.Prepare(p, digest); err != nil {
				b.Fatal(err)
			}
		}
	})
	// hookd's Specs watches the workspace's folders (Specs.Watch):
	// nothing changed, no folder is stamped; /watched-changed, a new file
	// in one folder before each call.
	w := sandbox.NewSpecs()
	w.Watch()
	for range 2 {
		if _, err := w.Prepare(p, digest); err != nil {
			b.Fatal(err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	b.Run("watched", func(b *testing.B) {
		for b.Loop() {
			if _, err := w.Prepare(p, digest); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("watched-changed", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			os.WriteFile(filepath.Join(ws, "src", "m08", "p0008", fmt.Sprintf("new%d.go", i)), nil, 0o644)
			if _, err := w.Prepare(p, digest); err != nil {
				b.Fatal(err)
			}
		}
	})
}

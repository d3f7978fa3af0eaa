package e2e

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestReleaseAndNPMPackage builds this platform's release archive and npm
// packages with scripts/release.sh, checks the archive and its checksum,
// installs the two npm tarballs into a fresh folder offline (no registry:
// the platform package is the tarball beside the main one), and runs the
// installed warden as a user would: `warden version` names the release,
// `warden init claude` wires the installed warden-hook by its absolute
// path, and that wired hook, fed a PreToolUse event, denies `rm -rf /`.
// Without the platform package the launcher says what is missing.
func TestReleaseAndNPMPackage(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("npm"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("npm is not installed")
		}
		t.Skip("npm is not installed")
	}
	goos, goarch := runtime.GOOS, runtime.GOARCH
	if (goos != "linux" && goos != "darwin") || (goarch != "amd64" && goarch != "arm64") {
		t.Skipf("warden ships no npm binaries for %s/%s", goos, goarch)
	}
	cpu := map[string]string{"amd64": "x64", "arm64": "arm64"}[goarch]
	root := repoRoot
	tmp := t.TempDir()
	dist := filepath.Join(tmp, "dist")
	const version = "0.0.0-test.1"

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	run := func(dir string, env []string, name string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		if env != nil {
			cmd.Env = env
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// The commit the release is built from (read first: the archive names
	// the commit release.sh saw when it started).
	commit, err := run(root, nil, "git", "rev-parse", "HEAD")
	if err != nil {
		t.Fatalf("git rev-parse: %v %s", err, commit)
	}
	commit = strings.TrimSpace(commit)[:12]
	if out, err := run(root, nil, "bash", "scripts/release.sh", "--platforms", goos+"/"+goarch, "--out", dist, version); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, out)
	}

	// The checksums list the archive and both npm tarballs, and match.
	archive := "warden_" + version + "_" + goos + "_" + goarch + ".tar.gz"
	mainTgz := "npm/warden-run-warden-" + version + ".tgz"
	platTgz := "npm/warden-run-warden-" + goos + "-" + cpu + "-" + version + ".tgz"
	sums := readSums(t, filepath.Join(dist, "SHA256SUMS"))
	for _, f := range []string{archive, mainTgz, platTgz} {
		want, ok := sums[f]
		if !ok {
			t.Fatalf("SHA256SUMS does not list %s: %v", f, sums)
		}
		if got := fileSum(t, filepath.Join(dist, f)); got != want {
			t.Errorf("%s: sha256 %s, SHA256SUMS says %s", f, got, want)
		}
	}
	if len(sums) != 3 {
		t.Errorf("SHA256SUMS lists %d files, want 3: %v", len(sums), sums)
	}

	// The archive holds the three binaries, the licence and the README in
	// one folder, and its warden names the version and the commit.
	unpacked := filepath.Join(tmp, "unpacked")
	names := untar(t, filepath.Join(dist, archive), unpacked)
	top := "warden_" + version + "_" + goos + "_" + goarch + "/"
	for _, n := range []string{"warden", "warden-hook", "warden-sandbox", "LICENSE", "README.md"} {
		if !names[top+n] {
			t.Errorf("archive has no %s%s: %v", top, n, names)
		}
	}
	out, err := run(tmp, nil, filepath.Join(unpacked, top, "warden"), "version")
	if err != nil || !strings.Contains(out, "warden v"+version+" (commit "+commit+")") {
		t.Errorf("archive's warden version: %v %q, want v%s and commit %s", err, out, version, commit)
	}

	// A fresh folder installs the two tarballs, offline.
	inst := filepath.Join(tmp, "inst")
	mustMkdir(t, inst)
	if err := os.WriteFile(filepath.Join(inst, "package.json"), []byte(`{"name":"try-warden","version":"1.0.0","private":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	npmEnv := append(os.Environ(), "npm_config_cache="+filepath.Join(tmp, "npmcache"), "npm_config_update_notifier=false")
	if out, err := run(inst, npmEnv, "npm", "install", "--offline", "--no-audit", "--no-fund",
		filepath.Join(dist, platTgz), filepath.Join(dist, mainTgz)); err != nil {
		t.Fatalf("npm install: %v\n%s", err, out)
	}
	bin := filepath.Join(inst, "node_modules", ".bin")
	out, err = run(inst, npmEnv, filepath.Join(bin, "warden"), "version")
	if err != nil || !strings.Contains(out, "warden v"+version) {
		t.Fatalf("installed warden version: %v %q", err, out)
	}

	// warden init claude, in a project, wires the installed warden-hook by
	// its absolute path.
	project := filepath.Join(tmp, "project")
	home := filepath.Join(tmp, "home")
	runDir, err := os.MkdirTemp("", "wrt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		exec.Command(filepath.Join(inst, "node_modules", "@warden-run", "warden-"+goos+"-"+cpu, "bin", "warden"),
			"hookd", "stop", "--socket", filepath.Join(runDir, "warden", "hookd.sock")).Run()
		os.RemoveAll(runDir)
	})
	os.Chmod(runDir, 0o700)
	mustMkdir(t, project)
	mustMkdir(t, home)
	if out, err := run(project, nil, "git", "init", "-q"); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	userEnv := []string{"HOME=" + home, "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"XDG_RUNTIME_DIR=" + runDir, "WARDEN_HOOK_TIMEOUT=45s", "LANG=C.UTF-8"}
	if out, err := run(project, userEnv, filepath.Join(bin, "warden"), "init", "claude"); err != nil {
		t.Fatalf("warden init claude: %v\n%s", err, out)
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string } `json:"hooks"`
		} `json:"hooks"`
	}
	raw, err := os.ReadFile(filepath.Join(project, ".claude", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &settings); err != nil {
		t.Fatalf(".claude/settings.json: %v", err)
	}
	hookBin := filepath.Join(inst, "node_modules", "@warden-run", "warden-"+goos+"-"+cpu, "bin", "warden-hook")
	pre := settings.Hooks["PreToolUse"]
	if len(pre) != 1 || len(pre[0].Hooks) != 1 || pre[0].Hooks[0].Command != hookBin+" claude" {
		t.Fatalf("PreToolUse wiring = %+v, want the installed %s claude", pre, hookBin)
	}

	// The wired command, run as Claude Code runs it, denies rm -rf /.
	event, _ := json.Marshal(map[string]any{
		"session_id": "npm-s1", "hook_event_name": "PreToolUse", "cwd": project,
		"tool_name": "Bash", "tool_input": map[string]any{"command": "rm -rf /"}, "tool_use_id": "toolu_1",
	})
	hook := exec.CommandContext(ctx, hookBin, "claude")
	hook.Dir = project
	hook.Env = userEnv
	hook.Stdin = strings.NewReader(string(event))
	hout, herr := hook.Output()
	if herr != nil || !strings.Contains(string(hout), `"permissionDecision":"deny"`) {
		t.Fatalf("the wired hook on rm -rf /: %v %s", herr, hout)
	}

	// Without the platform package the launcher says what is missing.
	if err := os.RemoveAll(filepath.Join(inst, "node_modules", "@warden-run", "warden-"+goos+"-"+cpu)); err != nil {
		t.Fatal(err)
	}
	out, err = run(inst, npmEnv, filepath.Join(bin, "warden"), "version")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 127 || !strings.Contains(out, "no prebuilt binary for "+goos) {
		t.Errorf("launcher without its platform package: %v %q, want exit 127 and a message", err, out)
	}
}

// readSums reads a sha256sum file into name -> hex sum.
func readSums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("%s: bad line %q", path, sc.Text())
		}
		m[name] = sum
	}
	return m
}

func fileSum(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// untar unpacks a .tar.gz into dir and returns the names it held.
func untar(t *testing.T, path, dir string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	names := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names[h.Name] = true
		dst := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(dst, dir+string(filepath.Separator)) {
			t.Fatalf("archive entry %q leaves the folder", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			mustMkdir(t, dst)
		case tar.TypeReg:
			mustMkdir(t, filepath.Dir(dst))
			w, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(w, tr); err != nil {
				t.Fatal(err)
			}
			w.Close()
		}
	}
}

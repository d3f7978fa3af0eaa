package gate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/gate"
	"github.com/warden-run/warden/internal/policytest"
)

const testPolicy = `version: 1
default: deny
rules:
  - id: echo
    effect: allow
    tool: shell
    command: ["echo *"]
`

var echo = warden.ToolCall{Tool: "Bash", Args: map[string]any{"command": "echo hi"}}

func write(t *testing.T, path, s string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	if !mtime.IsZero() {
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSourceCompilesOnContentOnly: an unchanged file is not compiled
// again, a changed one is, and one that stops loading is an error (never
// the last good policy); fixed, it loads again.
func TestSourceCompilesOnContentOnly(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "warden.yaml")
	old := time.Now().Add(-time.Hour)
	write(t, file, testPolicy, old)
	src, err := gate.NewSource(file)
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	src.Logf = func(f string, a ...any) { logged = append(logged, f) }
	first, err := src.Engine()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := src.Engine(); again != first {
		t.Error("an unchanged policy was compiled again")
	}
	// The same bytes saved again (a new modification time): not compiled.
	write(t, file, testPolicy, old.Add(time.Minute))
	if again, _ := src.Engine(); again != first {
		t.Error("a save that changed nothing compiled the policy again")
	}
	if d := first.Decide(echo, nil).Decision; d.Decision != warden.Allow {
		t.Fatalf("echo = %s %s, want allow", d.Decision, d.Code)
	}
	write(t, file, strings.Replace(testPolicy, "effect: allow", "effect: ask", 1), old.Add(2*time.Minute))
	second, err := src.Engine()
	if err != nil {
		t.Fatal(err)
	}
	if d := second.Decide(echo, nil).Decision; d.Decision != warden.Ask {
		t.Errorf("after the edit, echo = %s, want ask", d.Decision)
	}
	write(t, file, "version: 1\nrules: [\n", old.Add(3*time.Minute))
	if _, err := src.Engine(); err == nil {
		t.Error("a policy that no longer parses compiled")
	}
	write(t, file, testPolicy, old.Add(4*time.Minute))
	if _, err := src.Engine(); err != nil {
		t.Errorf("the policy fixed again: %v", err)
	}
	if len(logged) != 2 {
		t.Errorf("logged %d lines, want 2 (stops loading, loads again): %q", len(logged), logged)
	}
}

// TestSourceSeesAnEditWithTheSameStamp: two writes of the same size in one
// tick of the file system's clock leave the same stamp (size, modification
// time); a file read within that tick is read again, so the second write
// takes effect, for the policy file and its intents file alike.
func TestSourceSeesAnEditWithTheSameStamp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "warden.yaml")
	intents := filepath.Join(dir, "intents.yaml")
	tick := time.Now().Truncate(time.Second)
	src, err := gate.NewSource(file)
	if err != nil {
		t.Fatal(err)
	}
	write(t, file, testPolicy, tick)
	if eng, err := src.Engine(); err != nil {
		t.Fatal(err)
	} else if d := eng.Decide(echo, nil).Decision; d.Decision != warden.Allow {
		t.Fatalf("echo = %s, want allow", d.Decision)
	}
	write(t, file, strings.Replace(testPolicy, "effect: allow", "effect: ask  ", 1), tick) // the same size
	eng, err := src.Engine()
	if err != nil {
		t.Fatal(err)
	}
	if d := eng.Decide(echo, nil).Decision; d.Decision != warden.Ask {
		t.Errorf("after an edit with the same size and modification time, echo = %s, want ask", d.Decision)
	}

	old := tick.Add(-time.Hour)
	write(t, intents, "intents:\n  - id: INT-001\n    name: Docs\n    owned_scope: [\"docs/**\"]\n", tick)
	write(t, file, testPolicy+"intents:\n  file: intents.yaml\n", old)
	first, err := src.Engine()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := src.Engine(); again != first {
		t.Error("an unchanged policy was compiled again")
	}
	write(t, intents, "intents:\n  - id: INT-002\n    name: Docs\n    owned_scope: [\"docs/**\"]\n", tick)
	if second, err := src.Engine(); err != nil {
		t.Fatal(err)
	} else if second == first {
		t.Error("an edit of the intents file with the same size and modification time was not seen")
	}
}

// TestSourceFineStamps: on a file system that keeps sub-second times, a
// read within the fine window (100 ms) of the file's modification time
// cannot vouch for it, so a second write of the same size and time takes
// effect; a read a second after can, and costs a stat, not a read (before,
// every stamp waited 2 s, and a service started right after its policy
// was written read the file on every call). Whole-second times keep the
// 2 s window (TestSourceSeesAnEditWithTheSameStamp).
func TestSourceFineStamps(t *testing.T) {
	t.Parallel()
	fine := func(at time.Time) time.Time { return at.Truncate(time.Millisecond).Add(1234 * time.Nanosecond) }
	for _, tc := range []struct {
		name     string
		at       time.Time
		readsNew bool
	}{
		// A time ahead of the clock (a write in the same tick as the
		// read, or a skewed clock) is within the window however long the
		// test takes.
		{"within the window", fine(time.Now().Add(time.Hour)), true},
		{"a second old", fine(time.Now().Add(-time.Second)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "warden.yaml")
			src, err := gate.NewSource(file)
			if err != nil {
				t.Fatal(err)
			}
			write(t, file, testPolicy, tc.at)
			if eng, err := src.Engine(); err != nil {
				t.Fatal(err)
			} else if d := eng.Decide(echo, nil).Decision; d.Decision != warden.Allow {
				t.Fatalf("echo = %s, want allow", d.Decision)
			}
			write(t, file, strings.Replace(testPolicy, "effect: allow", "effect: ask  ", 1), tc.at)
			eng, err := src.Engine()
			if err != nil {
				t.Fatal(err)
			}
			want := warden.Allow
			if tc.readsNew {
				want = warden.Ask
			}
			if d := eng.Decide(echo, nil).Decision; d.Decision != want {
				t.Errorf("after an edit with the same size and modification time, echo = %s, want %s", d.Decision, want)
			}
		})
	}
}

// TestSourceSeesAReportPluginChange: a report plugin is compiled in; an
// edit of it compiles the policy again, and a plugin that breaks is an
// error.
func TestSourceSeesAReportPluginChange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "warden.yaml")
	plugin := filepath.Join(dir, "report", "support.yaml")
	os.MkdirAll(filepath.Dir(plugin), 0o755)
	good := "name: support\nschema:\n  type: object\nlong_instruction: Say how it went.\nshort_instruction: JSON object.\n"
	old := time.Now().Add(-time.Hour)
	write(t, plugin, good, old)
	write(t, file, testPolicy+"report:\n  plugins: [report/support.yaml]\n", old)
	src, err := gate.NewSource(file)
	if err != nil {
		t.Fatal(err)
	}
	first, err := src.Engine()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := src.Engine(); again != first {
		t.Error("an unchanged policy was compiled again")
	}
	write(t, plugin, strings.Replace(good, "Say how it went.", "Say how it went, briefly.", 1), old.Add(time.Minute))
	second, err := src.Engine()
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Error("an edit of a report plugin was not seen")
	}
	write(t, plugin, "name: [\n", old.Add(2*time.Minute))
	if _, err := src.Engine(); err == nil {
		t.Error("a broken report plugin compiled")
	}
}

// TestSourceWaitsForAWholeFile: a policy file being written (its first
// lines there, the deny still to come) is compiled whole.
func TestSourceWaitsForAWholeFile(t *testing.T) {
	// Not parallel: it sets the policy package's timings.
	file, wrote := policytest.WriteInTwoSteps(t, "rules:\n  - id: no-delete\n    effect: deny\n    tool: mcp__files__delete\n    message: Deleting is blocked.\n    suggestion: Ask the user.\n")
	src, err := gate.NewSource(file)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := src.Engine()
	if werr := <-wrote; werr != nil {
		t.Fatal(werr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if d := eng.Decide(warden.ToolCall{Tool: "mcp__files__delete", Args: map[string]any{"name": "x"}}, nil).Decision; d.Decision != warden.Deny {
		t.Errorf("a delete decided while the policy was written: %s %s, want deny by no-delete", d.Decision, d.Code)
	}
}

// TestSourcesKeepsAtMostMax: the least recently used policy goes first.
func TestSourcesKeepsAtMostMax(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ss := &gate.Sources{Max: 2}
	var files []string
	for i := range 3 {
		f := filepath.Join(dir, string(rune('a'+i)), "warden.yaml")
		os.MkdirAll(filepath.Dir(f), 0o755)
		write(t, f, testPolicy, time.Now().Add(-time.Hour))
		files = append(files, f)
	}
	a, err := ss.Engine(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := ss.Engine(files[0]); again != a {
		t.Error("Sources compiled an unchanged policy again")
	}
	ss.Engine(files[1])
	ss.Engine(files[2]) // a, the least recently used, goes
	if again, _ := ss.Engine(files[0]); again == a {
		t.Error("Sources kept more than Max policies")
	}
}

// BenchmarkSourceUnchanged is the cost a decision pays for the reload
// rule when nothing changed: stats, no read.
func BenchmarkSourceUnchanged(b *testing.B) {
	file := filepath.Join(b.TempDir(), "warden.yaml")
	if err := os.WriteFile(file, []byte(testPolicy), 0o644); err != nil {
		b.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(file, old, old)
	src, err := gate.NewSource(file)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := src.Engine(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := src.Engine(); err != nil {
			b.Fatal(err)
		}
	}
}

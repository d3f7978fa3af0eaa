package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const exampleDir = "../../examples/report"

func runReportCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), append([]string{"report"}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func readExample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(exampleDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantAll(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

func TestReportCheckFinal(t *testing.T) {
	t.Parallel()
	code, out, errs := runReportCmd(t, readExample(t, "response.txt"),
		"check", "--dir", exampleDir, "--plugins", "support.yaml,quality.json")
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	wantAll(t, "stdout", out,
		"nonce: 7c3e9a10",
		`plugin "support": ../../examples/report/support.yaml`,
		"plugin hash: sha256:",
		"final report: accepted (line 3)",
		"  | You were charged twice on March 3",
		`meta "support": valid (line 8)`,
		`{"language":"en","categories":["billing"],"frustration":40}`,
		`meta "quality": valid (line 11)`,
		"result: FINAL after 1 turn(s)")
	if strings.Contains(out, "retry feedback") {
		t.Errorf("feedback printed for a final session:\n%s", out)
	}
}

func TestReportCheckNotFinal(t *testing.T) {
	t.Parallel()
	code, out, _ := runReportCmd(t, readExample(t, "response-incomplete.txt"),
		"check", "--dir", exampleDir, "--plugins", "support.yaml", "--plugins", "quality.json")
	if code != exitNotFinal {
		t.Fatalf("exit %d, want %d\n%s", code, exitNotFinal, out)
	}
	wantAll(t, "stdout", out,
		`meta "support": schema_invalid (line 5)`,
		"  at /language: 'English' does not match pattern '^[a-z]{2}$'",
		"  at /categories: got string, want array",
		`  | {"language": "English", "categories": "billing", "frustration": 40}`,
		`meta "quality": missing`,
		"retry feedback (what the model would be sent):",
		`- Metadata for plugin "quality" is missing.`,
		"Your final report was received and is kept. Do not send it again.",
		`<warden-7c3e9a10-META plugin="quality">`,
		"result: NOT FINAL after 1 turn(s)")
}

// TestReportCheckTurns gives one response file per turn: the retry sends
// only the metadata and the session becomes final.
func TestReportCheckTurns(t *testing.T) {
	t.Parallel()
	code, out, _ := runReportCmd(t, "", "check", "--dir", exampleDir, "--plugins", "support.yaml,quality.json",
		filepath.Join(exampleDir, "response-incomplete.txt"), filepath.Join(exampleDir, "retry.txt"))
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\n%s", code, out)
	}
	wantAll(t, "stdout", out, "== turn 1: ../../examples/report/response-incomplete.txt", "== turn 2: ../../examples/report/retry.txt",
		"final report: kept from an earlier turn", `meta "quality": valid (line 4)`, "result: FINAL after 2 turn(s)")
}

func TestReportCheckNonce(t *testing.T) {
	t.Parallel()
	resp := readExample(t, "response.txt")
	// A wrong nonce finds no blocks: nothing is final.
	code, out, _ := runReportCmd(t, resp, "check", "--nonce", "0000", "--dir", exampleDir, "--plugins", "quality.json")
	if code != exitNotFinal {
		t.Fatalf("exit %d with a wrong nonce, want %d\n%s", code, exitNotFinal, out)
	}
	wantAll(t, "stdout", out, "nonce: 0000", "final report: missing", `meta "quality": missing`, "<warden-0000-FINAL>")
	// No plugins: the final report alone finalizes.
	if code, out, _ := runReportCmd(t, resp, "check"); code != ExitOK || !strings.Contains(out, "plugins: none") {
		t.Fatalf("exit %d without plugins\n%s", code, out)
	}
	// A custom prefix.
	if code, out, _ := runReportCmd(t, "<acme-1-FINAL>hi</acme-1-FINAL>", "check", "--prefix", "acme"); code != ExitOK || !strings.Contains(out, "  | hi") {
		t.Fatalf("exit %d with a custom prefix\n%s", code, out)
	}
}

func TestReportCheckErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("name: p\nschema: {type: object}\nlong_instruction: l\nshort_instruction: s\nextra: 1\n"), 0o644)
	cases := []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"no tags and no nonce", "plain text", []string{"check"}, "no --nonce given and no <warden-NONCE-FINAL> or <warden-NONCE-META> tag found in stdin"},
		{"bad plugin file", "x", []string{"check", "--dir", dir, "--plugins", "bad.yaml"}, `plugin file bad.yaml: line 5: unknown field "extra"`},
		{"missing plugin file", "x", []string{"check", "--dir", dir, "--plugins", "nothere.yaml"}, "plugin file nothere.yaml: file not found"},
		{"path traversal", "x", []string{"check", "--plugins", "../x.yaml"}, `plugin path ../x.yaml contains ".."`},
		{"absolute path", "x", []string{"check", "--plugins", filepath.Join(dir, "bad.yaml")}, "is absolute"},
		{"missing response file", "", []string{"check", "nothere.txt"}, "read response nothere.txt:"},
		{"bad nonce", "x", []string{"check", "--nonce", "a-b"}, `nonce "a-b"`},
		{"unknown flag", "x", []string{"check", "--bogus"}, "flag provided but not defined: -bogus"},
		{"unknown subcommand", "", []string{"frobnicate"}, `unknown subcommand "frobnicate"`},
		{"filter without nonce", "", []string{"filter"}, "warden report filter: report: nonce \"\""},
		{"filter with argument", "", []string{"filter", "--nonce", "1", "file.txt"}, `unexpected argument "file.txt"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errs := runReportCmd(t, tc.stdin, tc.args...)
			if code != ExitError {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitError, out, errs)
			}
			wantAll(t, "stderr", errs, tc.want)
		})
	}
	if code, out, _ := runReportCmd(t, ""); code != ExitError || !strings.Contains(out, "warden report check [--session S | --nonce N]") {
		t.Errorf("bare `warden report`: exit %d\n%s", code, out)
	}
}

func TestReportFilter(t *testing.T) {
	t.Parallel()
	code, out, errs := runReportCmd(t, readExample(t, "response.txt"), "filter", "--nonce", "7c3e9a10")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "\nYou were charged twice on March 3 because the first payment timed out at the\n" +
		"bank and was retried. The duplicate charge has been refunded; it will appear\n" +
		"on your statement within 5 business days.\n"
	if out != want {
		t.Fatalf("filter wrote %q, want %q", out, want)
	}
	// A stream larger than the read buffer, with a META block inside FINAL.
	big := strings.Repeat("0123456789abcdef", 8192)
	in := "pre <x-9-FINAL>" + big[:50000] + `<x-9-META plugin="m">{"a":1}</x-9-META>` + big[50000:] + "</x-9-FINAL> post"
	code, out, _ = runReportCmd(t, in, "filter", "--nonce", "9", "--prefix", "x")
	if code != ExitOK || out != big {
		t.Fatalf("exit %d, filter wrote %d bytes, want %d", code, len(out), len(big))
	}
}

func TestReportCheckRunOnComplete(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "p.yaml"), []byte("name: p\nschema: {type: object}\nlong_instruction: l\nshort_instruction: s\non_complete:\n  command: \"cat > got.json\"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "q.yaml"), []byte("name: q\nschema: {type: object}\nlong_instruction: l\nshort_instruction: s\non_complete:\n  command: \"echo broken >&2; exit 1\"\n"), 0o644)
	resp := `<warden-5-FINAL>done</warden-5-FINAL><warden-5-META plugin="p">{"k": "v"}</warden-5-META><warden-5-META plugin="q">{}</warden-5-META>`
	code, out, errs := runReportCmd(t, resp, "check", "--dir", dir, "--plugins", "p.yaml,q.yaml", "--run-on-complete")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	wantAll(t, "stdout", out, "on-complete: 1 failed (see the warnings on stderr); the session is final regardless")
	wantAll(t, "stderr", errs, "level=WARN", "plugin=q", "broken")
	got, err := os.ReadFile(filepath.Join(dir, "got.json"))
	if err != nil || !strings.Contains(string(got), `"meta":{"k":"v"}`) || !strings.Contains(string(got), `"from_cache":false`) {
		t.Fatalf("on-complete input = %s, %v", got, err)
	}
	// Without the flag, nothing runs.
	os.Remove(filepath.Join(dir, "got.json"))
	if code, _, _ := runReportCmd(t, resp, "check", "--dir", dir, "--plugins", "p.yaml,q.yaml"); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(dir, "got.json")); err == nil {
		t.Fatal("on-complete ran without --run-on-complete")
	}
}

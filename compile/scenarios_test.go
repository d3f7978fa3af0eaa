package compile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/compile"
	"github.com/warden-run/warden/engine"
	"github.com/warden-run/warden/internal/scripted"
	"github.com/warden-run/warden/policy"
	wsview "github.com/warden-run/warden/workspace"
)

// A small mail policy the scenario tests compile into.
const mailPolicy = `# mail agent
version: 1
default: {safe: allow, destructive: ask}
tools:
  gmail.read: read
  gmail.send: other
  gmail.draft: write
  gmail.delete: delete
  gmail.batchDelete: delete
protected: ["secrets/**"]
roles:
  assistant:
    tools: [read, write, delete, other]
rules:
  - id: no-send-secrets   # written by hand
    effect: deny
    tool: gmail.send
    args: {subject: "*password*"}
    message: Passwords are never mailed.
    suggestion: Tell the user where to find it instead.
tests:
  - name: mailing a password is denied
    call: {tool: gmail.send, args: {to: a@example.com, subject: "your password"}}
    expect: deny
`

// answerJSON renders a model answer.
func answerJSON(t *testing.T, rules ...map[string]any) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{"rules": rules})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func rule(id, effect string, tool []string, args map[string]string, message, suggestion string, tests ...map[string]any) map[string]any {
	var as []any
	for k, v := range args {
		as = append(as, map[string]any{"name": k, "glob": v})
	}
	if as == nil {
		as = []any{}
	}
	return map[string]any{"id": id, "effect": effect, "tool": tool, "command": []string{}, "path": []string{}, "args": as,
		"intent": "", "roles": []string{}, "message": message, "suggestion": suggestion, "tests": tests}
}

func tcase(kind, name, tool string, args map[string]string, expect string) map[string]any {
	var as []any
	for k, v := range args {
		as = append(as, map[string]any{"name": k, "value": v})
	}
	return map[string]any{"kind": kind, "name": name, "expect": expect,
		"call": map[string]any{"tool": tool, "args": as, "role": "", "intent": ""}}
}

// mailSetup writes mailPolicy and a RULES.md with the given rules.
func mailSetup(t *testing.T, rules ...string) (pol, rulesFile string) {
	t.Helper()
	dir := t.TempDir()
	return writeFile(t, dir, "warden.yaml", mailPolicy), writeFile(t, dir, "RULES.md", "- "+strings.Join(rules, "\n- ")+"\n")
}

// The answers a model gives for "Never delete emails in bulk."
func bulkDeleteRule(suggestion string) map[string]any {
	return rule("no-bulk-delete", "deny", []string{"gmail.batchDelete"}, nil,
		"Deleting many emails at once is not allowed.", suggestion,
		tcase("catch", "bulk delete", "gmail.batchDelete", map[string]string{"folder": "Inbox"}, "deny"),
		tcase("near_miss", "one message", "gmail.delete", map[string]string{"id": "m1"}, "ask"))
}

func TestCleanCompile(t *testing.T) {
	t.Parallel()
	pol, rules := mailSetup(t, "Never delete emails in bulk.")
	m, srv := model(t, scripted.Turn{Text: answerJSON(t, bulkDeleteRule("Delete messages one at a time."))})
	res, err := compile.Compile(context.Background(), pol, rules, compile.Options{Model: m})
	if err != nil || !res.OK() {
		t.Fatalf("err %v, failures %+v", err, res.Failures)
	}
	if res.Calls != 1 || len(srv.Requests()) != 1 {
		t.Errorf("%d calls, %d requests", res.Calls, len(srv.Requests()))
	}
	req := srv.Requests()[0]
	for _, want := range []string{"Never delete emails in bulk.", "no-send-secrets", "gmail.batchDelete (delete)"} {
		if !req.Contains(want) {
			t.Errorf("the request does not tell the model %q", want)
		}
	}
	if req.Contains("sk-test-0123456789") {
		t.Error("the API key is in the request body")
	}
	for _, want := range []string{"+  - id: no-bulk-delete", "+    source: Never delete emails in bulk.", "+compiled:", "--- "} {
		if !strings.Contains(res.Diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, res.Diff)
		}
	}
	if strings.Contains(res.Diff, "-  - id: no-send-secrets") || !strings.Contains(string(res.New), "  - id: no-send-secrets   # written by hand\n") {
		t.Errorf("the hand-written rule or its comment changed:\n%s", res.New)
	}
}

func TestMalformedJSONIsRepaired(t *testing.T) {
	t.Parallel()
	pol, rules := mailSetup(t, "Never delete emails in bulk.")
	good := answerJSON(t, bulkDeleteRule("Delete messages one at a time."))
	m, srv := model(t,
		scripted.Turn{Name: "cut off", Text: good[:len(good)/2]},
		scripted.Turn{Name: "fenced", Text: "```json\n" + good + "\n```"},
	)
	res, err := compile.Compile(context.Background(), pol, rules, compile.Options{Model: m})
	if err != nil || !res.OK() {
		t.Fatalf("err %v, failures %+v", err, res.Failures)
	}
	reqs := srv.Requests()
	if res.Calls != 2 || len(reqs) != 2 {
		t.Fatalf("%d calls, want 2", res.Calls)
	}
	if !reqs[1].Contains("not valid JSON") || !reqs[1].Contains(good[:len(good)/2]) {
		t.Errorf("the repair request does not carry the problem and the bad answer:\n%s", reqs[1].Text())
	}
}

func TestLintErrorIsRepaired(t *testing.T) {
	t.Parallel()
	pol, rules := mailSetup(t, "Never delete emails in bulk.")
	m, srv := model(t,
		scripted.Turn{Name: "no suggestion", Text: answerJSON(t, bulkDeleteRule(""))},
		scripted.Turn{Name: "repaired", Text: answerJSON(t, bulkDeleteRule("Delete messages one at a time."))},
	)
	var progress bytes.Buffer
	res, err := compile.Compile(context.Background(), pol, rules, compile.Options{Model: m, Progress: &progress})
	if err != nil || !res.OK() {
		t.Fatalf("err %v, failures %+v", err, res.Failures)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !reqs[1].Contains("a deny rule needs a suggestion") || !reqs[1].Contains("no-bulk-delete") {
		t.Fatalf("the repair request does not carry the lint error")
	}
	if !strings.Contains(progress.String(), "asking for a repair (1 of 2)") {
		t.Errorf("progress does not show the repair:\n%s", progress.String())
	}
	if !strings.Contains(string(res.New), "suggestion: Delete messages one at a time.") {
		t.Errorf("the repaired rule is not in the policy")
	}
}

// A rule whose own tests fail, and go on failing through every repair: the
// model's near miss finds that a glob on a recipient list lets a second,
// outside address through. It is reported and nothing is written.
func TestFailingTestsAreReportedNotWritten(t *testing.T) {
	t.Parallel()
	pol, rules := mailSetup(t, "Never delete emails in bulk.", "Mail to example.com is fine; ask before mailing anyone else.")
	internal := rule("allow-internal-mail", "allow", []string{"gmail.send"}, map[string]string{"to": "*@example.com"}, "", "",
		tcase("catch", "a colleague", "gmail.send", map[string]string{"to": "bob@example.com"}, "allow"),
		tcase("near_miss", "an outside address hidden in a list", "gmail.send", map[string]string{"to": "eve@evil.org, bob@example.com"}, "ask"))
	turns := []scripted.Turn{{Name: "bulk", Text: answerJSON(t, bulkDeleteRule("Delete messages one at a time."))}}
	for i := 0; i < 3; i++ {
		turns = append(turns, scripted.Turn{Text: answerJSON(t, internal)})
	}
	m, srv := model(t, turns...)
	before, _ := os.ReadFile(pol)
	res, err := compile.Compile(context.Background(), pol, rules, compile.Options{Model: m, AllowWiden: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK() || res.New != nil || len(res.Failures) != 1 {
		t.Fatalf("ok %v, failures %+v", res.OK(), res.Failures)
	}
	f := res.Failures[0]
	if f.Source.Line != 2 || f.Refused || len(f.Problems) == 0 || !strings.Contains(f.Problems[0], "matches gmail.send") ||
		!strings.Contains(f.Problems[0], "eve@evil.org") {
		t.Errorf("failure: %+v", f)
	}
	if res.Calls != 4 || len(srv.Unplayed()) != 0 {
		t.Errorf("%d calls (want 1 + 1 + 2 repairs), unplayed %v", res.Calls, srv.Unplayed())
	}
	if err := compile.Write(res); err == nil {
		t.Error("Write wrote a failed compile")
	}
	after, _ := os.ReadFile(pol)
	if !bytes.Equal(before, after) {
		t.Error("the policy changed")
	}
	// The diff still shows what did compile.
	if !strings.Contains(res.Diff, "no-bulk-delete") || strings.Contains(res.Diff, "allow-internal-mail") || strings.Contains(res.Diff, "compiled:") {
		t.Errorf("diff:\n%s", res.Diff)
	}
}

func TestWideningIsRefused(t *testing.T) {
	t.Parallel()
	internal := rule("allow-internal-mail", "allow", []string{"gmail.send"}, map[string]string{"to": "*@example.com"}, "", "",
		tcase("catch", "a colleague", "gmail.send", map[string]string{"to": "bob@example.com"}, "allow"),
		tcase("near_miss", "an outside address", "gmail.send", map[string]string{"to": "eve@evil.org"}, "ask"))
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		pol, rules := mailSetup(t, "Mail to example.com needs no approval.")
		m, _ := model(t, scripted.Turn{Text: answerJSON(t, internal)})
		res, err := compile.Compile(context.Background(), pol, rules, compile.Options{Model: m})
		if err != nil {
			t.Fatal(err)
		}
		if res.OK() || len(res.Failures) != 1 || !res.Failures[0].Refused {
			t.Fatalf("ok %v, failures %+v", res.OK(), res.Failures)
		}
		p := strings.Join(res.Failures[0].Problems, "\n")
		if !strings.Contains(p, "would widen what is allowed") || !strings.Contains(p, "bob@example.com") || !strings.Contains(p, "--allow-widen") {
			t.Errorf("problems: %s", p)
		}
		if res.Calls != 1 {
			t.Errorf("a refusal is not sent back for repair: %d calls", res.Calls)
		}
	})
	t.Run("accepted with the flag", func(t *testing.T) {
		t.Parallel()
		pol, rules := mailSetup(t, "Mail to example.com needs no approval.")
		m, _ := model(t, scripted.Turn{Text: answerJSON(t, internal)})
		res, err := compile.Compile(context.Background(), pol, rules, compile.Options{Model: m, AllowWiden: true})
		if err != nil || !res.OK() {
			t.Fatalf("err %v, failures %+v", err, res.Failures)
		}
		if len(res.Loosened) == 0 || !strings.Contains(res.Loosened[0], "bob@example.com") {
			t.Errorf("the accepted widening is not reported: %v", res.Loosened)
		}
	})
	t.Run("a deny is never weakened without its flag", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		pol := writeFile(t, dir, "warden.yaml", strings.Replace(mailPolicy, "destructive: ask", "destructive: deny", 1))
		rules := writeFile(t, dir, "RULES.md", "Ask me before deleting an email.\n")
		ask := rule("ask-delete", "ask", []string{"gmail.delete"}, nil, "Deleting needs approval.", "",
			tcase("catch", "delete", "gmail.delete", map[string]string{"id": "m1"}, "ask"),
			tcase("near_miss", "read", "gmail.read", map[string]string{"id": "m1"}, "allow"))
		m, _ := model(t, scripted.Turn{Text: answerJSON(t, ask)}, scripted.Turn{Text: answerJSON(t, ask)})
		res, err := compile.Compile(context.Background(), pol, rules, compile.Options{Model: m, AllowWiden: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.OK() || len(res.Failures) != 1 || !strings.Contains(res.Failures[0].Problems[0], "would turn a deny into ask") {
			t.Fatalf("failures %+v", res.Failures)
		}
		res, err = compile.Compile(context.Background(), pol, rules, compile.Options{Model: m, AllowWeakenDeny: true})
		if err != nil || !res.OK() {
			t.Fatalf("with the flag: err %v, failures %+v", err, res.Failures)
		}
	})
}

// A compiled rule cannot open what the policy protects: its test that
// expects a write to a protected path to be allowed fails.
func TestProtectedPathsStay(t *testing.T) {
	t.Parallel()
	pol, rules := mailSetup(t, "The agent may write anything under secrets.")
	r := rule("write-secrets", "allow", []string{"Write"}, nil, "", "",
		tcase("catch", "write a secret", "Write", map[string]string{"file_path": "secrets/key.txt"}, "allow"),
		tcase("near_miss", "write a note", "Write", map[string]string{"file_path": "notes/a.txt"}, "ask"))
	r["path"] = []string{"secrets/**"}
	m, _ := model(t, scripted.Turn{Text: answerJSON(t, r)})
	res, err := compile.Compile(context.Background(), pol, rules, compile.Options{Model: m, MaxRepairs: -1, AllowWiden: true, AllowWeakenDeny: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK() || len(res.Failures) != 1 || !strings.Contains(strings.Join(res.Failures[0].Problems, "\n"), "PROTECTED_PATH") {
		t.Fatalf("failures %+v", res.Failures)
	}
}

func TestModelFailures(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, m *compile.Model, wants ...string) {
		t.Helper()
		pol, rules := mailSetup(t, "Never delete emails in bulk.")
		before, _ := os.ReadFile(pol)
		start := time.Now()
		res, err := compile.Compile(context.Background(), pol, rules, compile.Options{Model: m})
		if err == nil {
			t.Fatalf("no error; result %+v", res)
		}
		if res != nil && (res.New != nil || res.OK()) {
			t.Errorf("a stopped compile has a policy to write")
		}
		var me *compile.ModelError
		if !errors.As(err, &me) {
			t.Errorf("error %v is not a ModelError", err)
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q lacks %q", err, w)
			}
		}
		if strings.Contains(err.Error(), "sk-test-0123456789") {
			t.Errorf("the error shows the API key: %v", err)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("took %v", el)
		}
		after, _ := os.ReadFile(pol)
		if !bytes.Equal(before, after) {
			t.Error("the policy changed")
		}
	}
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		m, _ := model(t, scripted.Turn{Delay: time.Minute, Text: "{}"})
		m.Timeout = 300 * time.Millisecond
		check(t, m, "did not answer within 300ms", "--timeout")
	})
	t.Run("server error", func(t *testing.T) {
		t.Parallel()
		m, _ := model(t, scripted.Turn{Status: http.StatusInternalServerError, Text: "model runner crashed"})
		check(t, m, "HTTP 500", "model runner crashed")
	})
	t.Run("bad key echoed", func(t *testing.T) {
		t.Parallel()
		m, _ := model(t, scripted.Turn{Status: http.StatusUnauthorized, Text: "Incorrect API key provided: sk-test-0123456789"})
		check(t, m, "HTTP 401", "check the API key")
	})
	t.Run("unreachable", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		check(t, &compile.Model{BaseURL: "http://" + addr + "/v1", Name: "m", APIKey: "sk-test-0123456789"}, "cannot be reached", addr)
	})
}

func TestCheck(t *testing.T) {
	t.Parallel()
	pol, rules := mailSetup(t, "Never delete emails in bulk.")
	m, _ := model(t, scripted.Turn{Text: answerJSON(t, bulkDeleteRule("Delete messages one at a time."))})
	if err := compile.Check(pol, rules); err == nil || !strings.Contains(err.Error(), "no compiled: section") {
		t.Errorf("check before compiling: %v", err)
	}
	res, err := compile.Compile(context.Background(), pol, rules, compile.Options{Model: m})
	if err != nil || !res.OK() {
		t.Fatalf("err %v, failures %+v", err, res.Failures)
	}
	if err := compile.Write(res); err != nil {
		t.Fatal(err)
	}
	if err := compile.Check(pol, ""); err != nil {
		t.Fatalf("check: %v", err)
	}
	compiled, _ := os.ReadFile(pol)
	// RULES.md changes: the check fails, naming the file and the new rule.
	os.WriteFile(rules, []byte("- Never delete emails in bulk.\n- Never mail the board.\n"), 0o644)
	if err := compile.Check(pol, ""); err == nil || !strings.Contains(err.Error(), "changed since the last compile") ||
		!strings.Contains(err.Error(), `RULES.md:2: "Never mail the board." has no compiled rule`) {
		t.Errorf("check after RULES.md changed: %v", err)
	}
	os.WriteFile(rules, []byte("- Never delete emails in bulk.\n"), 0o644)
	// A compiled rule edited by hand: the check fails.
	edited := strings.Replace(string(compiled), "tool: [gmail.batchDelete]", "tool: [gmail.batchDelete, gmail.other]", 1)
	if edited == string(compiled) {
		t.Fatal("the compiled rule was not found to edit")
	}
	os.WriteFile(pol, []byte(edited), 0o644)
	if err := compile.Check(pol, ""); err == nil || !strings.Contains(err.Error(), "edited after compiling") {
		t.Errorf("check after a hand edit: %v", err)
	}
	// Layout and comments do not count.
	os.WriteFile(pol, []byte("# a new comment\n"+string(compiled)), 0o644)
	if err := compile.Check(pol, ""); err != nil {
		t.Errorf("check after adding a comment: %v", err)
	}
}

// Recompiling replaces the compiled rules of a changed sentence and keeps
// the others without asking; a sentence removed from RULES.md takes its
// deny with it only with the flag that allows weakening a deny.
func TestRecompile(t *testing.T) {
	t.Parallel()
	pol, rules := mailSetup(t, "Never delete emails in bulk.")
	m, srv := model(t, scripted.Turn{Text: answerJSON(t, bulkDeleteRule("Delete messages one at a time."))})
	res, err := compile.Compile(context.Background(), pol, rules, compile.Options{Model: m})
	if err != nil || compile.Write(res) != nil {
		t.Fatalf("first compile: %v %+v", err, res.Failures)
	}
	os.WriteFile(rules, []byte("- Ask me before sending mail.\n"), 0o644)
	askSend := answerJSON(t, rule("ask-send", "ask", []string{"gmail.send"}, nil, "Sending needs approval.", "",
		tcase("catch", "send", "gmail.send", map[string]string{"to": "a@example.com"}, "ask"),
		tcase("near_miss", "draft", "gmail.draft", map[string]string{"to": "a@example.com"}, "ask")))
	srv.Add(scripted.Turn{Text: askSend}, scripted.Turn{Text: askSend}) // the refused run writes nothing, so the next asks again
	res, err = compile.Compile(context.Background(), pol, rules, compile.Options{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK() || !strings.Contains(strings.Join(res.Failures[0].Problems, "\n"), "would turn a deny into ask: gmail.batchDelete") {
		t.Fatalf("removing a compiled deny was not refused: %+v", res.Failures)
	}
	res, err = compile.Compile(context.Background(), pol, rules, compile.Options{Model: m, AllowWeakenDeny: true})
	if err != nil || !res.OK() {
		t.Fatalf("with the flag: %v %+v", err, res.Failures)
	}
	if compile.Write(res) != nil {
		t.Fatal("write")
	}
	p, err := policy.Load(pol)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range p.Rules {
		got = append(got, r.ID)
	}
	if strings.Join(got, ",") != "no-send-secrets,ask-send" {
		t.Errorf("rules after recompiling: %v", got)
	}
	for _, c := range p.Tests {
		if strings.Contains(c.Name, "no-bulk-delete") {
			t.Errorf("a test of the removed rule is left: %s", c.Name)
		}
	}
	if err := compile.Check(pol, ""); err != nil {
		t.Errorf("check: %v", err)
	}
}

// An allow whose tests only show calls the policy allows already is still
// checked on calls made from its own patterns: "npm *" meets "npm x".
func TestWideningFoundByProbes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := writeFile(t, dir, "warden.yaml", `version: 1
default: {safe: allow, destructive: ask}
rules:
  - id: allow-git-read
    effect: allow
    tool: shell
    command: ["git status *"]
`)
	rules := writeFile(t, dir, "RULES.md", "- Checking the repository state is fine.\n")
	r := rule("allow-repo-state", "allow", []string{"shell"}, nil, "", "",
		tcase("catch", "git status", "Bash", map[string]string{"command": "git status"}, "allow"),
		tcase("near_miss", "a build", "Bash", map[string]string{"command": "make build"}, "ask"))
	r["command"] = []string{"git status *", "npm *"}
	m, _ := model(t, scripted.Turn{Text: answerJSON(t, r)})
	res, err := compile.Compile(context.Background(), pol, rules, compile.Options{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK() || len(res.Failures) != 1 || !res.Failures[0].Refused ||
		!strings.Contains(strings.Join(res.Failures[0].Problems, "\n"), `Bash {"command":"npm x"} is asked now`) {
		t.Fatalf("failures %+v", res.Failures)
	}
}

// A server without JSON Schema structured output is asked for a JSON
// object, with the schema in the prompt, from then on.
func TestServerWithoutJSONSchema(t *testing.T) {
	t.Parallel()
	pol, rules := mailSetup(t, "Never delete emails in bulk.", "Ask me before sending mail.")
	askSend := rule("ask-send", "ask", []string{"gmail.send"}, nil, "Sending needs approval.", "",
		tcase("catch", "send", "gmail.send", map[string]string{"to": "a@example.com"}, "ask"),
		tcase("near_miss", "draft", "gmail.draft", map[string]string{"to": "a@example.com"}, "ask"))
	m, srv := model(t,
		scripted.Turn{Name: "refuses", Status: http.StatusBadRequest, Text: "response_format type json_schema is not supported"},
		scripted.Turn{Name: "bulk", Text: answerJSON(t, bulkDeleteRule("Delete messages one at a time."))},
		scripted.Turn{Name: "send", Text: answerJSON(t, askSend)},
	)
	var progress bytes.Buffer
	res, err := compile.Compile(context.Background(), pol, rules, compile.Options{Model: m, Progress: &progress})
	if err != nil || !res.OK() {
		t.Fatalf("err %v, failures %+v\n%s", err, res.Failures, progress.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		var body struct {
			ResponseFormat struct{ Type string } `json:"response_format"`
		}
		json.Unmarshal(r.Body, &body)
		want := "json_object"
		if i == 0 {
			want = "json_schema"
		}
		if body.ResponseFormat.Type != want || (i > 0) != r.Contains("follows this JSON Schema") {
			t.Errorf("request %d: response_format %q, want %q; schema in prompt %v", i, body.ResponseFormat.Type, want, r.Contains("follows this JSON Schema"))
		}
	}
}

// Compiled rules edited by hand are not kept by the next compile: the
// model is asked again, and the edit is gone.
func TestHandEditIsNotKept(t *testing.T) {
	t.Parallel()
	pol, rules := mailSetup(t, "Never delete emails in bulk.")
	answer := answerJSON(t, bulkDeleteRule("Delete messages one at a time."))
	m, srv := model(t, scripted.Turn{Text: answer}, scripted.Turn{Text: answer})
	res, err := compile.Compile(context.Background(), pol, rules, compile.Options{Model: m})
	if err != nil || compile.Write(res) != nil {
		t.Fatalf("first compile: %v %+v", err, res.Failures)
	}
	data, _ := os.ReadFile(pol)
	edited := strings.Replace(string(data), "effect: deny\n    tool: [gmail.batchDelete]", "effect: ask\n    tool: [gmail.batchDelete]", 1)
	if edited == string(data) {
		t.Fatal("nothing edited")
	}
	os.WriteFile(pol, []byte(edited), 0o644)
	res, err = compile.Compile(context.Background(), pol, rules, compile.Options{Model: m})
	if err != nil || !res.OK() {
		t.Fatalf("second compile: %v %+v", err, res.Failures)
	}
	if res.Reused != 0 || res.Calls != 1 || len(srv.Unplayed()) != 0 {
		t.Errorf("reused %d, calls %d", res.Reused, res.Calls)
	}
	if !strings.Contains(res.Diff, "-    effect: ask") || !strings.Contains(res.Diff, "+    effect: deny") {
		t.Errorf("the hand edit is not undone:\n%s", res.Diff)
	}
}

// TestMeaningReachesTheRule: what can be read from the sentence holds the
// answer, also where the model's own tests pass. The README's showcase,
// "Never send email to addresses outside example.com without asking.",
// answered with an ask on every gmail.send (a message that claims the
// address condition, a near miss on gmail.draft) is sent back for repair;
// the repaired rule checks the address, and only the outside address is
// asked about by it. Under default: allow, an ask-me sentence compiled as
// an allow is refused.
func TestMeaningReachesTheRule(t *testing.T) {
	t.Parallel()
	showcase := "Never send email to addresses outside example.com without asking."
	unconditional := rule("ask-before-send", "ask", []string{"gmail.send"}, nil,
		"Sending email to addresses outside example.com needs the user's approval.", "Save it as a draft.",
		tcase("catch", "outside", "gmail.send", map[string]string{"to": "partner@other.org"}, "ask"),
		tcase("near_miss", "a draft", "gmail.draft", map[string]string{"to": "partner@other.org"}, "allow"))
	conditional := rule("ask-before-send", "ask", []string{"gmail.send"}, map[string]string{"to": "!*@example.com"},
		"Sending email to an address outside example.com needs the user's approval.", "Save it as a draft.",
		tcase("catch", "outside", "gmail.send", map[string]string{"to": "partner@other.org"}, "ask"),
		tcase("near_miss", "inside", "gmail.send", map[string]string{"to": "alice@example.com"}, "ask"))
	pol, rules := mailSetup(t, showcase)
	m, srv := model(t, scripted.Turn{Name: "unconditional", Text: answerJSON(t, unconditional)},
		scripted.Turn{Name: "conditional", Text: answerJSON(t, conditional)})
	res, err := compile.Compile(context.Background(), pol, rules, compile.Options{Model: m})
	if err != nil || !res.OK() || res.Calls != 2 || len(srv.Unplayed()) != 0 {
		t.Fatalf("err %v, ok %v, %d calls, failures %+v", err, res != nil && res.OK(), res.Calls, res.Failures)
	}
	repair := srv.Requests()[1].Text()
	for _, want := range []string{`the sentence names "example.com", but no rule checks it`,
		`the message says "example.com", which this rule does not check`} {
		if !strings.Contains(repair, want) {
			t.Errorf("the repair request lacks %q", want)
		}
	}
	dir := t.TempDir()
	file := writeFile(t, dir, "warden.yaml", string(res.New))
	p, err := policy.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Compile(p, wsview.Live())
	if err != nil {
		t.Fatal(err)
	}
	for to, matched := range map[string]bool{"partner@other.org": true, "alice@example.com": false, "eve@example.com.evil.org": true} {
		d := eng.Decide(warden.ToolCall{Tool: "gmail.send", Args: map[string]any{"to": to, "subject": "hi"}}, nil).Decision
		if slices.Contains(d.Matched, "ask-before-send") != matched {
			t.Errorf("gmail.send to %s: matched %v, want the rule to match: %v", to, d.Matched, matched)
		}
	}

	// An ask-me sentence never becomes an allow, whatever the default.
	dir = t.TempDir()
	pol = writeFile(t, dir, "warden.yaml", strings.Replace(mailPolicy, "default: {safe: allow, destructive: ask}", "default: allow", 1))
	rules = writeFile(t, dir, "RULES.md", "- Ask me before deleting any email.\n")
	allowDelete := rule("delete-mail", "allow", []string{"gmail.delete"}, nil, "", "",
		tcase("catch", "delete", "gmail.delete", map[string]string{"id": "m1"}, "allow"),
		tcase("near_miss", "read", "gmail.read", map[string]string{"id": "m1"}, "allow"))
	m, _ = model(t, scripted.Turn{Text: answerJSON(t, allowDelete)})
	res, err = compile.Compile(context.Background(), pol, rules, compile.Options{Model: m, MaxRepairs: -1})
	if err != nil || res.OK() || len(res.Failures) != 1 ||
		!strings.Contains(strings.Join(res.Failures[0].Problems, "\n"), `the sentence asks for the user's approval ("Ask me"), so no rule compiled from it may allow`) {
		t.Fatalf("an ask-me sentence compiled as allow: err %v, failures %+v", err, res.Failures)
	}
}

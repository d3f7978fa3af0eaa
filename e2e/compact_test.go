package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/internal/scripted"
)

// The post-compaction reminder on the hosts other than Claude Code (see
// TestClaudeResumeAndCompact): each host compacts its context for real,
// offline, by asking the scripted model for a summary, and the request the
// model gets after the compaction must carry warden's reminder.

// compactReminder heads warden's post-compaction reminder.
const compactReminder = "WARDEN REMINDER (after context compaction)"

// hookClients are the two ways a host runs warden's hook, as in
// TestGoverned: `warden hook HOST` (a process per event) and `warden-hook
// HOST` answered by a resident hookd.
var hookClients = []string{"warden", "warden-hook"}

// initHook wires host's hooks to warden with the given client.
func (e *env) initHook(host, client string) {
	e.t.Helper()
	bin := wardenBin
	if client == "warden-hook" {
		bin = wardenHookBin
		e.useHookd()
	}
	if out, err := e.warden("init", host, "--bin", bin); err != nil {
		e.t.Fatalf("warden init %s --bin %s: %v\n%s", host, bin, err, out)
	}
}

// storedSessions returns the sessions in the project's store.
func storedSessions(e *env) []warden.Session {
	e.t.Helper()
	ss, err := e.store().Sessions(context.Background(), warden.SessionFilter{})
	if err != nil {
		e.t.Fatalf("read the sessions: %v", err)
	}
	return ss
}

// runOK fails the test when a host run failed or left turns of the script
// unplayed (why says what that means), and has the run and the model's
// requests logged if the test fails.
func runOK(t *testing.T, e *env, r result, host, why string) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			e.dump(r)
			logRequests(t, e)
		}
	})
	if r.err != nil {
		t.Fatalf("%s: %v", host, r.err)
	}
	if u := e.model.Unplayed(); len(u) > 0 {
		t.Fatalf("turns never played: %v%s", u, why)
	}
}

// compactions is the number of compactions warden recorded, over every
// session of the project.
func compactions(e *env) int {
	n := 0
	for _, s := range storedSessions(e) {
		n += s.Compactions
	}
	return n
}

// played returns the index of the request turn answered (-1 if none).
func played(reqs []*scripted.Request, turn string) int {
	for i, q := range reqs {
		if q.Turn == turn {
			return i
		}
	}
	return -1
}

// noReminderBefore fails the test when a request before index end carries
// the reminder: it is due only once the host has compacted.
func noReminderBefore(t *testing.T, reqs []*scripted.Request, end int) {
	t.Helper()
	for i := 0; i < end && i < len(reqs); i++ {
		if reqs[i].Contains(compactReminder) {
			t.Errorf("request %d (turn %q), before the compaction, already carries the post-compaction reminder", i, reqs[i].Turn)
		}
	}
}

// logRequests logs what each request to the model carried.
func logRequests(t *testing.T, e *env) {
	t.Helper()
	for i, q := range e.model.Requests() {
		t.Logf("request %d %s turn=%q tools=%v governance=%v reminder=%v", i, q.Path, q.Turn, q.HasTools(),
			q.Contains(sessionStartMarker), q.Contains(compactReminder))
	}
}

// jsonObject returns the object at the path of keys in v (nil if none).
func jsonObject(v any, keys ...string) map[string]any {
	m, _ := v.(map[string]any)
	for _, k := range keys {
		m, _ = m[k].(map[string]any)
	}
	return m
}

// promptTokensRE matches the prompt size in the scripted server's Gemini
// answers (usageMetadata.promptTokenCount).
var promptTokensRE = regexp.MustCompile(`"promptTokenCount":\d+`)

// sizedUsage starts a front for the scripted model that reports the real
// size of each Gemini request (bytes/4, the scripted server's own count for
// countTokens) as its prompt token count, instead of the scripted server's
// fixed 10, and returns its URL. Gemini CLI refuses a compression that does
// not shrink the prompt below the size the model reported last
// (ChatCompressionService.compress: COMPRESSION_FAILED_INFLATED_TOKEN_COUNT,
// "Compression was not beneficial"), and it compares that size with
// model.compressionThreshold, so it can compress only when the model reports
// the prompt's real size, as a real model does.
func sizedUsage(t *testing.T, e *env) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		e.model.ServeHTTP(&usageWriter{ResponseWriter: w, count: fmt.Sprintf(`"promptTokenCount":%d`, 1+len(body)/4)}, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// usageWriter rewrites the prompt token count in what the scripted server
// writes; the server writes each JSON document (or SSE event) in one Write.
type usageWriter struct {
	http.ResponseWriter
	count string
}

func (w *usageWriter) Write(b []byte) (int, error) {
	if _, err := w.ResponseWriter.Write(promptTokensRE.ReplaceAll(b, []byte(w.count))); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (w *usageWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestCodexCompactReminder: `codex exec` compacts in the middle of a turn
// when the token usage the model reports reaches
// model_auto_compact_token_limit and the turn goes on (after a tool call).
// With a provider other than OpenAI's it compacts locally: it asks the
// model for a summary ("You are performing a CONTEXT CHECKPOINT
// COMPACTION"), replaces the history with it, runs the PreCompact hook and
// then SessionStart with source "compact", whose additionalContext warden
// answers with the reminder. The request after the compaction must carry
// it (and none before).
func TestCodexCompactReminder(t *testing.T) {
	t.Parallel()
	h := governedHosts[1]
	for _, client := range hookClients {
		t.Run(client, func(t *testing.T) {
			bin := requireHost(t, h.spec)
			const summary = "CODEX-SUMMARY-7f3a: work.txt was created; nothing is left to do."
			compaction := scripted.Contains("You are performing a CONTEXT CHECKPOINT COMPACTION")
			e := newEnv(t,
				scripted.Turn{Name: "summary", Match: compaction, Text: summary},
				scripted.Turn{Name: "work", Match: scripted.All(scripted.Not(compaction), scripted.Contains("marker-one")),
					ToolCalls: []scripted.ToolCall{h.shell("touch work.txt")}},
				scripted.Turn{Name: "after", Match: scripted.All(scripted.Not(compaction), scripted.Contains("CODEX-SUMMARY-7f3a")),
					Text: "All done."},
			)
			e.write("warden.yaml", governedPolicy)
			e.setupCodex()
			// The scripted server reports 10 input tokens plus the answer's
			// size (about 18 in all for the tool call): past 12, Codex
			// compacts after the tool call, before its next request.
			// Top-level keys go before config.toml's tables.
			cfg := filepath.Join(e.codexHome(), "config.toml")
			old, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			e.write(cfg, "model_auto_compact_token_limit = 12\n"+string(old))
			e.initHook("codex", client)

			r := e.runCodex(bin, "marker-one: create work.txt")
			runOK(t, e, r, "codex", " (Codex did not compact, or sent nothing after compacting)")
			if !e.exists("work.txt") {
				t.Errorf("work.txt is missing: the allowed call did not run")
			}
			reqs := e.model.Requests()
			sum, after := played(reqs, "summary"), played(reqs, "after")
			if sum < 0 || after < sum {
				t.Fatalf("the summary request (%d) does not come before the request after the compaction (%d)", sum, after)
			}
			if !reqs[played(reqs, "work")].Contains(sessionStartMarker) {
				t.Errorf("the first request lacks the session-start governance text")
			}
			noReminderBefore(t, reqs, after)
			q := reqs[after]
			if !q.Contains(compactReminder) || !q.Contains("The user's latest request: marker-one: create work.txt") {
				t.Errorf("the request after the compaction lacks warden's reminder (with the user's request)")
			}
			t.Logf("the request after the compaction: governance text %v, reminder %v", q.Contains(sessionStartMarker), q.Contains(compactReminder))
			if n := compactions(e); n < 1 {
				t.Errorf("warden recorded %d compactions, want at least 1", n)
			}
		})
	}
}

// TestOpenCodeCompactReminder: `opencode run` compacts on its own when the
// tokens of a step reach the model's usable context (limit.context minus
// limit.output in opencode.json): it runs the experimental.session.compacting
// hook, asks the model for a summary (the compaction agent, "You are a
// context summarization agent"), adds a synthetic "Continue if you have next
// steps" message and publishes session.compacted. warden's plugin records
// the compaction from the compacting hook, which OpenCode waits for, so
// from the next request on warden's chat.system.transform answer is the
// reminder instead of the session-start text. (From session.compacted
// alone, which comes through an event bus OpenCode does not wait for, the
// first request after the compaction got the session-start text in about
// 1 run in 20.)
func TestOpenCodeCompactReminder(t *testing.T) {
	t.Parallel()
	h := governedHosts[3]
	for _, client := range hookClients {
		t.Run(client, func(t *testing.T) {
			bin := requireHost(t, h.spec)
			const summary = "OPENCODE-SUMMARY-5c1e: work.txt was created; create after.txt next."
			compaction := scripted.Contains("You are a context summarization agent")
			after := scripted.All(scripted.HasTools, scripted.Not(compaction), scripted.Contains("OPENCODE-SUMMARY-5c1e"))
			// The scripted server reports 10 prompt tokens plus the answer's
			// size: this call's long description (about 190 tokens in all)
			// crosses the usable context of 100 set below; the other answers
			// (under 30) do not.
			big := scripted.ToolCall{Name: "bash", Args: map[string]any{"command": "touch work.txt",
				"description": strings.Repeat("Create the work file for the task. ", 20)}}
			e := newEnv(t,
				scripted.Turn{Name: "summary", Match: compaction, Text: summary},
				scripted.Turn{Name: "work", Match: scripted.All(scripted.HasTools, scripted.Not(compaction), scripted.Contains("marker-one")),
					ToolCalls: []scripted.ToolCall{big}},
				scripted.Turn{Name: "after", Match: after, ToolCalls: []scripted.ToolCall{h.shell("touch after.txt")}},
				scripted.Turn{Name: "final", Match: scripted.All(after, scripted.MinToolResults(1)), Text: "All done."},
			)
			e.write("warden.yaml", governedPolicy)
			e.setupOpenCode()
			var cfg map[string]any
			data, err := os.ReadFile(filepath.Join(e.project, "opencode.json"))
			if err == nil {
				err = json.Unmarshal(data, &cfg)
			}
			model := jsonObject(cfg, "provider", "scripted", "models", "model")
			if err != nil || model == nil {
				t.Fatalf("opencode.json: %v; no provider.scripted.models.model in:\n%s", err, data)
			}
			// The usable context is limit.context minus limit.output: 100.
			model["limit"] = map[string]any{"context": 150, "output": 50}
			e.writeJSON("opencode.json", cfg)
			e.initHook("opencode", client)

			r := e.runOpenCode(bin, "marker-one: create work.txt, then after.txt")
			runOK(t, e, r, "opencode", " (OpenCode did not compact, or sent nothing after compacting)")
			if !e.exists("work.txt") || !e.exists("after.txt") {
				t.Errorf("work.txt or after.txt is missing: an allowed call did not run")
			}
			reqs := e.model.Requests()
			sum, first, last := played(reqs, "summary"), played(reqs, "after"), played(reqs, "final")
			if !(played(reqs, "work") < sum && sum < first && first < last) {
				t.Fatalf("requests out of order: work %d, summary %d, after %d, final %d", played(reqs, "work"), sum, first, last)
			}
			if !reqs[played(reqs, "work")].Contains(sessionStartMarker) {
				t.Errorf("the request before the compaction lacks the session-start governance text")
			}
			noReminderBefore(t, reqs, sum)
			for _, i := range []int{first, last} {
				if q := reqs[i]; !q.Contains(compactReminder) || q.Contains(sessionStartMarker) ||
					!q.Contains("The user's latest request: ") || !q.Contains("marker-one: create work.txt, then after.txt") {
					t.Errorf("request %d (turn %q), after the compaction: reminder %v (with the user's request %v), session-start text %v; want the reminder only",
						i, q.Turn, q.Contains(compactReminder), q.Contains("The user's latest request"), q.Contains(sessionStartMarker))
				}
			}
			if n := compactions(e); n < 1 {
				t.Errorf("warden recorded %d compactions, want at least 1", n)
			}
		})
	}
}

// geminiCompression are the turns that answer Gemini CLI's compression: a
// summary, then its verification (ChatCompressionService.compress), both
// with the snapshot text.
func geminiCompression(snapshot string) []scripted.Turn {
	return []scripted.Turn{
		{Name: "summary", Match: scripted.Contains("Generate a new <state_snapshot>"), Text: snapshot},
		{Name: "verify", Match: scripted.Contains("Critically evaluate the <state_snapshot>"), Text: snapshot},
	}
}

// geminiSizedRun runs headless Gemini CLI (-p) on prompt against the
// scripted model behind sizedUsage.
func geminiSizedRun(t *testing.T, e *env, entry, prompt string) result {
	t.Helper()
	return e.run(hostTimeout, []string{"GOOGLE_GEMINI_BASE_URL=" + sizedUsage(t, e), "GEMINI_API_KEY=test", "GEMINI_CLI_TRUST_WORKSPACE=true"},
		"node", entry, "-m", "gemini-2.5-flash", "-p", prompt, "--output-format", "json", "--yolo")
}

// storedIntent is the intent warden recorded for the project's only
// session.
func storedIntent(t *testing.T, e *env) string {
	t.Helper()
	ss := storedSessions(e)
	if len(ss) != 1 {
		t.Fatalf("%d sessions in the store, want 1: %+v", len(ss), ss)
	}
	return ss[0].Intent
}

// TestGeminiCompressReminder: Gemini CLI fires PreCompress before every
// model turn, before it decides whether to compress, and BeforeModel before
// every model request; warden counts a compaction only when a main-chat
// request has lost the governance text the session was given, and adds the
// reminder to that request (BeforeModel's llm_request).
//
// First a headless run without a compression (a tool call, then the answer
// to its result): no compaction is recorded and no request carries the
// reminder. Then Gemini CLI runs interactively in a terminal (tmux): a first
// prompt, `/compress` (which replaces the history with the model's
// summary), then a second prompt. The request of the second prompt must
// carry the reminder, with that prompt as the user's latest request, and
// the first prompt must be gone from it (the history was really replaced).
func TestGeminiCompressReminder(t *testing.T) {
	t.Parallel()
	h := governedHosts[2]
	for _, client := range hookClients {
		t.Run(client, func(t *testing.T) {
			entry := requireHost(t, h.spec)
			t.Run("no-compression", func(t *testing.T) { testGeminiNoCompression(t, h, client, entry) })
			t.Run("compress", func(t *testing.T) { testGeminiCompress(t, h, client, entry) })
		})
	}
}

func testGeminiNoCompression(t *testing.T, h governedHost, client, entry string) {
	const prompt = "marker-zero: create work.txt"
	e := newEnv(t,
		scripted.Turn{Name: "work", Match: scripted.All(scripted.Contains("marker-zero"), scripted.MinToolResults(0), scripted.Not(scripted.HasToolResult)),
			ToolCalls: []scripted.ToolCall{h.shell("touch work.txt")}},
		scripted.Turn{Name: "final", Match: scripted.All(scripted.Contains("marker-zero"), scripted.MinToolResults(1)), Text: "Created work.txt."},
	)
	e.write("warden.yaml", governedPolicy)
	h.setup(e)
	e.initHook("gemini", client)
	r := geminiSizedRun(t, e, entry, prompt)
	runOK(t, e, r, "gemini", "")
	if !e.exists("work.txt") {
		t.Errorf("work.txt is missing: the allowed call did not run")
	}
	reqs := e.model.Requests()
	for _, turn := range []string{"work", "final"} {
		if !reqs[played(reqs, turn)].Contains(sessionStartMarker) {
			t.Errorf("the %s request lacks the session-start governance text", turn)
		}
	}
	noReminderBefore(t, reqs, len(reqs))
	if n := compactions(e); n != 0 {
		t.Errorf("warden recorded %d compactions in a run without a compression", n)
	}
	// Headless, the SessionStart text is part of the prompt Gemini CLI
	// reports at BeforeAgent; the intent is the user's request alone.
	if got := storedIntent(t, e); got != prompt {
		t.Errorf("recorded intent %q, want %q", got, prompt)
	}
}

func testGeminiCompress(t *testing.T, h governedHost, client, entry string) {
	requireTmux(t)
	const snapshot = "<state_snapshot>GEMINI-SUMMARY-2d9b: the user was greeted.</state_snapshot>"
	e := newEnv(t, append(geminiCompression(snapshot),
		scripted.Turn{Name: "first", Match: scripted.All(scripted.HasTools, scripted.Contains("marker-one")), Text: "Hello from the first prompt."},
		scripted.Turn{Name: "second", Match: scripted.All(scripted.HasTools, scripted.Contains("marker-two")), Text: "Answer to the second prompt."},
	)...)
	e.write("warden.yaml", governedPolicy)
	h.setup(e)
	e.initHook("gemini", client)
	vars := []string{"GOOGLE_GEMINI_BASE_URL=" + sizedUsage(t, e), "GEMINI_API_KEY=test", "GEMINI_CLI_TRUST_WORKSPACE=true"}
	for _, v := range e.vars {
		if !strings.HasPrefix(v, "TERM=") { // tmux sets the terminal's TERM
			vars = append(vars, v)
		}
	}
	term := startTerminal(t, e.project, vars, "node", entry, "-m", "gemini-2.5-flash", "--yolo")
	defer func() {
		if t.Failed() {
			e.dump(result{stdout: term.screen()})
			logRequests(t, e)
		}
	}()
	// type, wait for the text to show, then press Enter.
	enter := func(text string) {
		term.send(text)
		term.waitFor("the typed "+text, 10*time.Second, nil, text)
		term.send("Enter")
	}
	// The first prompt is typed once warden has answered SessionStart. A
	// prompt given on the command line (-i) can go to the model before
	// Gemini CLI has put SessionStart's text into its history, on a slow
	// machine: its first request then lacks the text, which warden counts
	// as a compaction (seen in one run of two on a slow 2-core machine).
	waitGoverned(t, e, 45*time.Second)
	term.waitFor("the input box", 45*time.Second, nil, "Type your message")
	enter("marker-one: say hello")
	term.waitFor("the answer to the first prompt", 45*time.Second, nil, "Hello from the first prompt.")
	// PreCompress has fired (Gemini CLI fires it before every turn), but
	// nothing was compressed.
	if n := compactions(e); n != 0 {
		t.Errorf("warden recorded %d compactions before /compress", n)
	}
	// Gemini CLI shows the answer before the turn ends (its AfterAgent
	// hook runs after it), and refuses a slash command until then ("Slash
	// commands cannot be queued"), keeping the text: wait for warden to see
	// the turn end, and press Enter again while the command is refused.
	//
	// The command's menu of suggestions is filled a moment after the text
	// shows, and an Enter pressed before that is swallowed (InputPrompt's
	// ACCEPT_SUGGESTION with no suggestion yet), keeping the text: wait for
	// the menu's line of the command, and press Enter again while the line
	// still shows a second after the last Enter (seen once under load).
	waitIdle(t, e, 10*time.Second)
	const compressLine = "Compresses the context"
	term.send("/compress")
	term.waitFor("the typed /compress and its suggestion", 10*time.Second, nil, "/compress", compressLine)
	term.send("Enter")
	last := time.Now()
	term.waitFor("the compression's result", 30*time.Second, func() string {
		s := term.screen()
		if time.Since(last) > time.Second && (strings.Contains(s, "commands cannot be queued") || strings.Contains(s, compressLine)) {
			term.send("Enter")
			last = time.Now()
		}
		return ""
	}, "Chat history compressed from")
	enter("marker-two tell me more")
	term.waitFor("the answer to the second prompt", 30*time.Second, func() string {
		// Under load the terminal sometimes drops the Enter of a typed
		// prompt: press it again while the prompt still waits.
		if !strings.Contains(term.screen(), "Answer to the second prompt.") {
			term.send("Enter")
			time.Sleep(time.Second)
		}
		return ""
	}, "Answer to the second prompt.")

	if u := e.model.Unplayed(); len(u) > 0 {
		t.Fatalf("turns never played: %v", u)
	}
	reqs := e.model.Requests()
	second := played(reqs, "second")
	if played(reqs, "verify") > second {
		t.Fatalf("the compression (request %d) came after the second prompt (%d)", played(reqs, "verify"), second)
	}
	if !reqs[played(reqs, "first")].Contains(sessionStartMarker) {
		t.Errorf("the first prompt's request lacks the session-start governance text")
	}
	noReminderBefore(t, reqs, second)
	q := reqs[second]
	if !q.Contains("GEMINI-SUMMARY-2d9b") || q.Contains("marker-one") {
		t.Errorf("the second prompt's request does not carry the compressed history (snapshot %v, first prompt %v)",
			q.Contains("GEMINI-SUMMARY-2d9b"), q.Contains("marker-one"))
	}
	if !q.Contains(compactReminder) || !q.Contains("The user's latest request: marker-two tell me more") {
		t.Errorf("the request after /compress lacks warden's reminder (with the user's request)")
	}
	t.Logf("the request after /compress: governance text %v, reminder %v", q.Contains(sessionStartMarker), q.Contains(compactReminder))
	if n := compactions(e); n != 1 {
		t.Errorf("warden recorded %d compactions, want 1", n)
	}
}

// waitGoverned waits until warden has given the project's only session its
// session-start text (SessionStart answered).
func waitGoverned(t *testing.T, e *env, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ss := storedSessions(e)
		if len(ss) == 1 && ss[0].GovernanceInjected {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s warden has not answered SessionStart: sessions %+v", timeout, ss)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitIdle waits until warden has recorded the end of the project's only
// session's turn (Gemini CLI's AfterAgent: session status idle).
func waitIdle(t *testing.T, e *env, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ss := storedSessions(e)
		if len(ss) == 1 && ss[0].Status == warden.SessionIdle {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s warden has not seen the turn end (AfterAgent): sessions %+v", timeout, ss)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestGeminiAutoCompressReminder: headless Gemini CLI (-p) compresses on its
// own in the middle of a prompt: with a tiny model.compressionThreshold and
// the next-speaker check on, the model says it will go on, Gemini CLI sends
// "Please continue." and, before that request, compresses the whole
// history (the first prompt and warden's session-start text in it) into the
// model's summary. No BeforeAgent fires before that request (one fires per
// prompt); warden's BeforeModel hook sees the request without the
// governance text, records the compaction and adds the reminder, with the
// user's request (the prompt without the SessionStart text Gemini CLI put
// into it).
func TestGeminiAutoCompressReminder(t *testing.T) {
	t.Parallel()
	h := governedHosts[2]
	for _, client := range hookClients {
		t.Run(client, func(t *testing.T) {
			entry := requireHost(t, h.spec)
			const snapshot = "<state_snapshot>GEMINI-SUMMARY-8e4c: the user asked for a plan.</state_snapshot>"
			nextSpeaker := scripted.Contains("determine who should logically speak next")
			e := newEnv(t, append(geminiCompression(snapshot),
				scripted.Turn{Name: "next-model", Match: nextSpeaker, Text: `{"reasoning": "It said what it does next.", "next_speaker": "model"}`},
				scripted.Turn{Name: "next-user", Match: nextSpeaker, Text: `{"reasoning": "It is done.", "next_speaker": "user"}`},
				scripted.Turn{Name: "first", Match: scripted.All(scripted.HasTools, scripted.Contains("marker-one")), Text: "Next, I will write the plan."},
				scripted.Turn{Name: "after", Match: scripted.All(scripted.HasTools, scripted.Contains("GEMINI-SUMMARY-8e4c")), Text: "Here is the plan."},
			)...)
			e.write("warden.yaml", governedPolicy)
			h.setup(e)
			settings := filepath.Join(e.home, ".gemini", "settings.json")
			var cfg map[string]any
			data, err := os.ReadFile(settings)
			if err == nil {
				err = json.Unmarshal(data, &cfg)
			}
			if err != nil {
				t.Fatalf("%s: %v", settings, err)
			}
			// 0.0001 of gemini-2.5-flash's 1M tokens: any history with a
			// model turn in it is compressed.
			cfg["model"] = map[string]any{"compressionThreshold": 0.0001, "skipNextSpeakerCheck": false}
			e.writeJSON(settings, cfg)
			e.initHook("gemini", client)
			r := geminiSizedRun(t, e, entry, "marker-one: plan the work")
			runOK(t, e, r, "gemini", " (Gemini CLI did not compress, or sent nothing after compressing)")
			reqs := e.model.Requests()
			after := played(reqs, "after")
			if played(reqs, "verify") > after {
				t.Fatalf("the compression (request %d) came after the request it was for (%d)", played(reqs, "verify"), after)
			}
			if !reqs[played(reqs, "first")].Contains(sessionStartMarker) {
				t.Errorf("the first request lacks the session-start governance text")
			}
			noReminderBefore(t, reqs, after)
			q := reqs[after]
			// The reminder quotes the first prompt; the first answer shows
			// whether the history before the compression is still there.
			if q.Contains("Next, I will write the plan.") || !q.Contains("Please continue.") {
				t.Fatalf("the request after the compression still carries the history before it, or is not Gemini CLI's \"Please continue.\"")
			}
			if !q.Contains(compactReminder) || !q.Contains("The user's latest request: marker-one: plan the work\n") {
				t.Errorf("the request after the compression lacks warden's reminder with the user's request (reminder %v, session-start text %v)",
					q.Contains(compactReminder), q.Contains(sessionStartMarker))
			}
			if q.Contains("hook_context&gt;") {
				t.Errorf("the reminder quotes hook text as the user's request")
			}
			if n := compactions(e); n != 1 {
				t.Errorf("warden recorded %d compactions, want 1 (PreCompress fired before each turn, one compressed)", n)
			}
		})
	}
}

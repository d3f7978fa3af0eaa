package e2e

import (
	"encoding/json"
	"testing"
)

// TestClaudeResumeAndCompact runs three Claude Code processes on one
// session: a first prompt (session-start governance text), a resumed
// session running /compact (resume note), and a prompt after the
// compaction, whose request must carry the post-compaction reminder.
func TestClaudeResumeAndCompact(t *testing.T) {
	t.Parallel()
	h := governedHosts[0]
	bin := requireHost(t, h.spec)
	e := newEnv(t)
	e.write("warden.yaml", governedPolicy)
	e.initHost("claude")
	r := e.runClaude(bin, "first request marker-one")
	var res struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.SessionID == "" || r.err != nil {
		e.dump(r)
		t.Fatalf("first run: %v %v", r.err, err)
	}
	resume := func(prompt string) result {
		return e.run(hostTimeout, []string{"ANTHROPIC_BASE_URL=" + e.model.URL, "ANTHROPIC_API_KEY=test",
			"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"},
			bin, "-p", prompt, "--resume", res.SessionID, "--output-format", "json")
	}
	if r := resume("/compact"); r.err != nil {
		e.dump(r)
		t.Fatalf("/compact: %v", r.err)
	}
	if r := resume("after compaction marker-two"); r.err != nil {
		e.dump(r)
		t.Fatalf("after compaction: %v", r.err)
	}
	first, after := e.model.Find("marker-one"), e.model.Find("marker-two")
	if len(first) == 0 || !first[0].Contains("WARDEN GOVERNANCE") {
		t.Errorf("the first request lacks the session-start governance text")
	}
	if !e.modelSaw("WARDEN: SESSION RESUMED") {
		t.Errorf("no request carried the resume note")
	}
	if len(after) == 0 || !after[len(after)-1].Contains("WARDEN REMINDER (after context compaction)") {
		for i, q := range e.model.Requests() {
			t.Logf("request %d: governance=%v reminder=%v", i, q.Contains("WARDEN GOVERNANCE"), q.Contains("WARDEN REMINDER"))
		}
		t.Errorf("the request after /compact lacks the post-compaction reminder")
	}
}

package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/session"
)

// forbidden reports emoji, pictographs and box-drawing characters.
func forbidden(s string) rune {
	for _, r := range s {
		if r >= 0x2500 && r <= 0x259F || r >= 0x2600 && r <= 0x27BF || r >= 0x1F000 || r == 0xFE0F {
			return r
		}
	}
	return 0
}

func TestGovernanceMoments(t *testing.T) {
	e := setup(t, testPolicy)
	if err := session.SetPhase(ctx, e.store, "build", session.Limits(e.pol), time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, a := range []warden.Anchor{
		{Priority: warden.Critical, Content: "Never touch the billing module."},
		{Priority: warden.High, Content: "API v2 is frozen."},
		{Priority: warden.Normal, Content: "Prefer small commits."},
	} {
		if _, err := session.AddAnchor(ctx, e.store, a, session.Limits(e.pol), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	s, prefix, err := e.tr.Start(ctx, session.StartOptions{ID: "g", Role: "builder", Host: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	if !s.GovernanceInjected || s.Status != warden.SessionActive {
		t.Errorf("started session: %+v", s)
	}
	for _, want := range []string{"You are: builder (Edits code and runs commands.)", "Current phase: build",
		"ask-push: Pushing publishes commits. Instead: Ask the user first.", "DENY no-force-push",
		"Use read before any other tool.", "- coordinator: Plans and delegates.", "- builder (you)",
		"You may use only these tools: read, list, write, edit, shell, todo."} {
		if !strings.Contains(prefix, want) {
			t.Errorf("prefix lacks %q:\n%s", want, prefix)
		}
	}
	if r := forbidden(prefix); r != 0 {
		t.Errorf("prefix has %U", r)
	}
	// Nothing is due until a compaction.
	if text, err := e.tr.Governance(ctx, "g"); err != nil || text != "" {
		t.Errorf("governance right after start: %q %v", text, err)
	}
	if _, err := e.tr.Compact(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	rem, err := e.tr.Governance(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"REMINDER", "You are: builder", "Current phase: build",
		"[CRITICAL] Never touch the billing module.", "[HIGH] API v2 is frozen.", "- coordinator", "Resume with read."} {
		if !strings.Contains(rem, want) {
			t.Errorf("reminder lacks %q:\n%s", want, rem)
		}
	}
	if strings.Contains(rem, "small commits") {
		t.Errorf("reminder has a normal anchor:\n%s", rem)
	}
	if text, _ := e.tr.Governance(ctx, "g"); text != "" {
		t.Errorf("reminder given twice: %q", text)
	}
	// A new session gets its prefix from Governance too.
	if text, _ := e.tr.Governance(ctx, "fresh"); !strings.Contains(text, "WARDEN GOVERNANCE") {
		t.Errorf("governance of a new session: %q", text)
	}
	e.decide(t, bash("g", "", "git status"), session.Options{})
	note, err := e.tr.Resume(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SESSION RESUMED", "session g as builder", "1 tool calls", "[CRITICAL] Never touch", "WARDEN GOVERNANCE"} {
		if !strings.Contains(note, want) {
			t.Errorf("resume note lacks %q:\n%s", want, note)
		}
	}
	if s, _ := e.store.Session(ctx, "g"); s.Resumes != 1 || s.Compactions != 1 {
		t.Errorf("lifecycle counters: %+v", s)
	}
	s, err = e.tr.End(ctx, "g", session.Idle)
	if err != nil || s.Status != warden.SessionIdle || s.EndedAt.IsZero() {
		t.Fatalf("idle: %+v %v", s, err)
	}
	st, _ := e.store.State(ctx)
	last := st.History[len(st.History)-1]
	if !strings.Contains(last.Action, "session:idle calls=1") || last.Session != "g" || last.Result != "pass" {
		t.Errorf("stats in history: %+v", last)
	}
	// A session whose call was denied still ends as a pass: the deny has
	// its own entry.
	if r := e.decide(t, bash("g2", "builder", "git push --force origin main"), session.Options{}); r.Decision.Decision != warden.Deny {
		t.Fatalf("force push: %+v", r.Decision)
	}
	if _, err := e.tr.End(ctx, "g2", session.Ended); err != nil {
		t.Fatal(err)
	}
	st, _ = e.store.State(ctx)
	var deny, end warden.HistoryEntry
	for _, h := range st.History {
		if h.Session == "g2" && strings.HasPrefix(h.Action, "violation:") {
			deny = h
		}
		if h.Session == "g2" && strings.HasPrefix(h.Action, "session:ended") {
			end = h
		}
	}
	if deny.Result != "fail" || end.Result != "pass" || !strings.Contains(end.Action, "violations=1") {
		t.Errorf("after a deny: violation %+v, end %+v; want the deny a fail and the end a pass that counts it", deny, end)
	}
	if _, err := e.tr.End(ctx, "nope", session.Ended); err == nil {
		t.Error("ending an unknown session: no error")
	}
}

func TestGovernanceTemplates(t *testing.T) {
	custom := strings.Replace(testPolicy, "    first: [read]\n  strict:", `    first: [read]
    prompt: "ROLE={{.Role}} PHASE={{.Phase}} FIRST={{.First}} \u2705 \u2500\u2500"
    reminder: "AFTER COMPACTION {{.Role}}{{range .Anchors}} {{.Content}}{{end}}"
  strict:`, 1)
	e := setup(t, custom)
	_, text, err := e.tr.Start(ctx, session.StartOptions{ID: "c", Role: "builder"})
	if err != nil {
		t.Fatal(err)
	}
	if text != "ROLE=builder PHASE=init FIRST=[read]\n" {
		t.Errorf("custom prompt (plain text enforced): %q", text)
	}
	e.tr.Compact(ctx, "c")
	if text, _ := e.tr.Governance(ctx, "c"); !strings.HasPrefix(text, "AFTER COMPACTION builder") {
		t.Errorf("custom reminder: %q", text)
	}
	// The template functions (join, upper, lower).
	e.pol.Roles["builder"].Prompt = `{{upper .Role}} first: {{join .First " or "}}`
	if _, text, _ := e.tr.Start(ctx, session.StartOptions{ID: "f", Role: "builder"}); text != "BUILDER first: read\n" {
		t.Errorf("template functions: %q", text)
	}
	// A template that fails at run time names the file, the role and the field.
	e.pol.Roles["builder"].Prompt = "{{.Nope}}"
	_, _, err = e.tr.Start(ctx, session.StartOptions{ID: "d", Role: "builder"})
	if err == nil || !strings.Contains(err.Error(), `role "builder" prompt`) || !strings.Contains(err.Error(), "warden.yaml") {
		t.Errorf("bad template error: %v", err)
	}
	if err := session.CheckTemplates(e.pol); err == nil {
		t.Error("CheckTemplates: no error")
	}
}

func TestPlain(t *testing.T) {
	in := "\u26a1 RULES \u2192 do \U0001F6AB this\n\u250c\u2500\u2510 box  \n"
	if got := session.Plain(in); got != " RULES -> do  this\n box\n" {
		t.Errorf("Plain = %q", got)
	}
}

func TestPurgeAndAnchors(t *testing.T) {
	e := setup(t, testPolicy+`state:
  anchors_max: 3
  history_max: 4
  session_max_age: 24h
audit:
  retention: 48h
`)
	l := session.Limits(e.pol)
	if l.AnchorsMax != 3 || l.HistoryMax != 4 || l.SessionMaxAge != 24*time.Hour || l.AuditRetention != 48*time.Hour || l.AnchorDemoteAfter != 48*time.Hour {
		t.Fatalf("limits from policy: %+v", l)
	}
	now := time.Now().UTC()
	add := func(p warden.Priority, content string, age time.Duration) (warden.Anchor, error) {
		return session.AddAnchor(ctx, e.store, warden.Anchor{Priority: p, Content: content, CreatedAt: now.Add(-age)}, l, now)
	}
	for _, a := range []struct {
		p   warden.Priority
		c   string
		age time.Duration
	}{{warden.High, "old high", 50 * time.Hour}, {warden.Critical, "crit", 100 * time.Hour}, {warden.Normal, "n1", time.Hour}} {
		if _, err := add(a.p, a.c, a.age); err != nil {
			t.Fatal(err)
		}
	}
	// Over the count: the normal one goes.
	if _, err := add(warden.High, "new high", 0); err != nil {
		t.Fatal(err)
	}
	st, _ := e.store.State(ctx)
	if contents(st.Anchors) != "crit,old high,new high" {
		t.Fatalf("after a 4th anchor with max 3: %s", contents(st.Anchors))
	}
	// A low anchor cannot push out more important ones.
	if _, err := add(warden.Low, "low", 0); err == nil || !strings.Contains(err.Error(), "anchor limit") {
		t.Errorf("low anchor over a full set: %v", err)
	}
	for i := 0; i < 6; i++ {
		e.store.AddHistory(ctx, warden.HistoryEntry{Action: "h"})
	}
	e.store.UpdateSession(ctx, "stale", func(s *warden.Session, _ bool) error { s.LastSeen = now.Add(-25 * time.Hour); return nil })
	e.store.UpdateSession(ctx, "live", func(s *warden.Session, _ bool) error { s.LastSeen = now; return nil })
	e.store.AppendAudit(ctx, warden.AuditRecord{Time: now.Add(-49 * time.Hour), Tool: "Old", Decision: warden.Allow})
	e.store.AppendAudit(ctx, warden.AuditRecord{Time: now.Add(-time.Hour), Tool: "New", Decision: warden.Allow})

	rep, err := e.tr.Purge(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.AnchorsDemoted != 1 || rep.AnchorsRemoved != 0 || rep.HistoryArchived != 2 || rep.SessionsArchived != 1 || rep.AuditPurged != 1 {
		t.Errorf("purge report: %+v", rep)
	}
	st, _ = e.store.State(ctx)
	if len(st.History) != 4 {
		t.Errorf("history after purge: %d entries", len(st.History))
	}
	for _, a := range st.Anchors {
		if a.Content == "old high" && a.Priority != warden.Normal {
			t.Errorf("old high anchor not demoted: %+v", a)
		}
	}
	// 49 hours later the demoted anchor is deleted; critical and high stay.
	e.store.Clock = func() time.Time { return now.Add(49 * time.Hour) }
	if _, err := e.tr.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	st, _ = e.store.State(ctx)
	if contents(st.Anchors) != "crit,new high" {
		t.Errorf("anchors 49h later: %s", contents(st.Anchors))
	}
	if ss, _ := e.store.Sessions(ctx, warden.SessionFilter{}); len(ss) != 0 {
		t.Errorf("sessions not archived 49h later: %+v", ss)
	}
}

func contents(as []warden.Anchor) string {
	var out []string
	for _, a := range as {
		out = append(out, a.Content)
	}
	return strings.Join(out, ",")
}

func TestOutcome(t *testing.T) {
	e := setup(t, testPolicy)
	e.tr.Start(ctx, session.StartOptions{ID: "o", Role: "builder"})
	if err := e.tr.Outcome(ctx, "o", "Bash", false, "exit 1: API_KEY=sekret123 missing"); err != nil {
		t.Fatal(err)
	}
	st, _ := e.store.State(ctx)
	h := st.History[len(st.History)-1]
	if h.Result != "fail" || h.Agent != "builder" || !strings.HasPrefix(h.Action, "outcome:Bash exit 1") || strings.Contains(h.Action, "sekret123") {
		t.Errorf("outcome entry: %+v", h)
	}
}

// TestPrefixSummarisesPolicy: the session-start text says in plain lines
// what is protected, where the workspace ends, what the defaults are and
// how approvals work.
func TestPrefixSummarisesPolicy(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "warden.yaml")
	os.WriteFile(file, []byte("version: 1\ndefault: {safe: allow, destructive: ask}\nprotected: [\"**/.env\"]\nprivate: [\"**/*.pem\"]\nworkspace: {root: ., outside: deny}\n"), 0o644)
	pol, err := policy.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	text, err := session.Prefix(pol, warden.Session{ID: "s"}, warden.ProjectState{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Protected (no agent may write, edit or delete): **/.env.",
		"Private (no agent may read or write them, by any tool or command): **/*.pem.",
		"Files: work inside the project folder (where warden.yaml is); a path outside it is denied.",
		"reading and listing are allowed; shell commands, writes and other tools need a human's approval.",
		"retry exactly the same call once they answered",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("governance text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, ".warden/**") || strings.Contains(text, file) {
		t.Errorf("governance text lists warden's own protected paths:\n%s", text)
	}
}

package warden_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/warden-run/warden"
)

func TestParseToolCall(t *testing.T) {
	t.Parallel()
	c, err := warden.ParseToolCall([]byte(`{"tool":"Bash","args":{"command":"ls"},"session":"s","role":"r","depth":2,"intent":"i","intent_id":"INT-1","cwd":"/w"}`))
	if err != nil || c.Tool != "Bash" || c.Args["command"] != "ls" || c.Depth != 2 || c.IntentID != "INT-1" || c.Cwd != "/w" {
		t.Fatalf("%+v %v", c, err)
	}
	for in, want := range map[string]string{
		`[]`:                                "not a JSON object",
		`{"args":{}}`:                       `"tool" is required`,
		`{"tool":"x"}`:                      `"args" is required`,
		`{"tool":"x","args":null}`:          "must be an object",
		`{"tool":"x","args":[]}`:            "cannot unmarshal",
		`{"tool":"x","args":{},"extra":1}`:  `unknown field "extra"`,
		`{"tool":"x","args":{},"depth":-1}`: "must not be negative",
	} {
		if _, err := warden.ParseToolCall([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
	}
}

func TestRendering(t *testing.T) {
	t.Parallel()
	d := warden.Decision{Decision: warden.Deny, Code: warden.CodeRuleDeny, Rule: "no-rm-rf",
		Reason: "Recursive forced deletion is blocked.", Suggestion: "Delete specific files.", Recoverable: true,
		Warnings: []string{"w1"}}
	text := d.Text()
	for _, want := range []string{"## BLOCKED: RULE_DENY", "Reason: Recursive forced deletion is blocked.", "Rule: no-rm-rf", "Suggestion: Delete specific files.", "Warning: w1"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	for _, r := range text {
		if r > 0x7e && r != '\n' {
			t.Errorf("model-facing text has a non-ASCII character %q", r)
		}
	}
	data, _ := json.Marshal(d.ModelError())
	if string(data) != `{"error":"RULE_DENY","reason":"Recursive forced deletion is blocked.","suggestion":"Delete specific files.","recoverable":true}` {
		t.Errorf("model error: %s", data)
	}
	if !strings.HasPrefix((warden.Decision{Decision: warden.Ask, Code: warden.CodeRuleAsk}).Text(), "## APPROVAL REQUIRED") {
		t.Error("ask title")
	}
}

func TestFailClosed(t *testing.T) {
	t.Parallel()
	d := warden.FailClosed(warden.Errorf(warden.CodeApprovalTimeout, "no answer in %s", "5m"))
	if d.Decision != warden.Deny || d.Code != warden.CodeApprovalTimeout || d.Reason == "" || d.Suggestion == "" || d.Recoverable {
		t.Errorf("%+v", d)
	}
	if d := warden.FailClosed(errors.New("disk full")); d.Decision != warden.Deny || d.Code != warden.CodePolicyError {
		t.Errorf("%+v", d)
	}
	// The text matches recoverable: a policy that does not load is not
	// the model's to retry; a malformed call is.
	if d := warden.FailClosed(errors.New("warden.yaml:3: bad")); d.Recoverable || !strings.Contains(d.Suggestion, "ask the user") ||
		strings.Contains(strings.ToLower(d.Suggestion), "then retry") {
		t.Errorf("policy error: %+v", d)
	}
	if d := warden.FailClosed(warden.Errorf(warden.CodeBadInput, "the input is empty")); !d.Recoverable || !strings.Contains(d.Suggestion, "Retry") {
		t.Errorf("bad input: %+v", d)
	}
	// An unknown effect is the most severe, so a corrupt value never allows.
	if warden.Effect("bogus").Severity() <= warden.Deny.Severity()-1 || warden.Allow.Severity() >= warden.Ask.Severity() {
		t.Error("severity order")
	}
}

// TestStoreError: a store's failure is STORE_UNAVAILABLE (recoverable),
// the end of a deadline DECISION_TIMEOUT, an error with a code keeps it,
// and the error it wraps is still seen.
func TestStoreError(t *testing.T) {
	down := errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
	err := warden.StoreError(fmt.Errorf("update session: %w", down))
	d := warden.FailClosed(err)
	if d.Decision != warden.Deny || d.Code != warden.CodeStoreUnavailable || !d.Recoverable ||
		!strings.Contains(d.Reason, "connection refused") || !strings.Contains(d.Suggestion, "not a policy problem") {
		t.Errorf("store down: %+v", d)
	}
	if !errors.Is(err, down) {
		t.Error("errors.Is does not see the store's error through StoreError")
	}
	if c := warden.ErrorCode(warden.StoreError(fmt.Errorf("read: %w", context.DeadlineExceeded))); c != warden.CodeTimeout {
		t.Errorf("deadline: %s, want DECISION_TIMEOUT", c)
	}
	if c := warden.ErrorCode(warden.StoreError(warden.Errorf(warden.CodeHalted, "halted"))); c != warden.CodeHalted {
		t.Errorf("a coded error: %s, want its own code", c)
	}
	if warden.StoreError(nil) != nil {
		t.Error("StoreError(nil) is not nil")
	}
}

// TestToolCallFieldsAreTheTags: the names ParseToolCall takes (and serve's
// one-pass decoding looks for) are ToolCall's JSON names, all of them.
func TestToolCallFieldsAreTheTags(t *testing.T) {
	var tags []string
	ty := reflect.TypeFor[warden.ToolCall]()
	for i := range ty.NumField() {
		name, _, _ := strings.Cut(ty.Field(i).Tag.Get("json"), ",")
		tags = append(tags, name)
	}
	if got := warden.ToolCallFields(); !slices.Equal(got, tags) {
		t.Errorf("ToolCallFields() = %q, want the tags %q", got, tags)
	}
}

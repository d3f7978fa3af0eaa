// Package notify tells the people who can answer a waiting approval that
// it waits: a webhook (a JSON body Slack's and Matrix's incoming webhooks
// accept) and a desktop notification where the machine has one
// (notify-send on Linux, osascript on macOS). A notice never changes a
// decision: a failure to send one is returned for the caller's log only.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/warden-run/warden"
)

// Timeout bounds one notice (webhook and desktop together): a notice is
// sent while a call waits, and must not hold it long.
const Timeout = 3 * time.Second

// Config is where notices go (policy approvals.notify).
type Config struct {
	// Webhook is the URL notices are posted to; "" sends none. Resolved:
	// an env:NAME in the policy is already the variable's value here.
	Webhook string
	// Desktop sends a desktop notification where one is available.
	Desktop bool
	// Page is the approvals page's address, linked from every notice.
	Page string
}

// Body is the webhook's JSON body. Text is what Slack and Matrix
// (hookshot, maubot) incoming webhooks show; Warden holds the same facts
// for a receiver that reads them.
type Body struct {
	Text   string `json:"text"`
	Warden Notice `json:"warden"`
}

// Notice is one waiting approval, as a notice tells of it. Every text in it
// is the approval's redacted text: a secret in the call never leaves in
// clear.
type Notice struct {
	Approval string `json:"approval"`
	Tool     string `json:"tool"`
	Call     string `json:"call"`
	Code     string `json:"code"`
	Rule     string `json:"rule,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Session  string `json:"session,omitempty"`
	Agent    string `json:"agent,omitempty"`
	Host     string `json:"host,omitempty"`
	URL      string `json:"url,omitempty"`
	// Answer is the command that answers it.
	Answer string `json:"answer"`
}

// For makes the notice of an approval; page is the approvals page or "".
func For(a warden.Approval, page string) Notice {
	n := Notice{Approval: a.ID, Tool: a.Tool, Call: a.Summary, Code: string(a.Code), Rule: a.Rule,
		Reason: warden.RedactString(a.Reason), Session: a.Session, Agent: a.Agent, Host: a.Host,
		Answer: "warden approvals approve " + a.ID + " (or reject " + a.ID + " --message WHY)"}
	if n.Call == "" {
		n.Call = a.Tool
	}
	if page != "" {
		n.URL = strings.TrimRight(page, "/") + "/#approvals"
	}
	return n
}

// Line is the notice in one line of plain text.
func (n Notice) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "warden: approval %s waits for a human: %s", n.Approval, oneLine(n.Call, 200))
	if n.Rule != "" {
		fmt.Fprintf(&b, " (rule %s)", n.Rule)
	}
	if who := n.Agent; who != "" || n.Host != "" {
		if who == "" {
			who = n.Host
		}
		fmt.Fprintf(&b, ", asked by %s", who)
	}
	fmt.Fprintf(&b, ". Answer: %s", n.Answer)
	if n.URL != "" {
		fmt.Fprintf(&b, ", or on %s", n.URL)
	}
	return b.String()
}

// Send sends the notice where c says. It returns the failures, joined, for
// the caller's log; it never returns the webhook's address (a secret).
func Send(ctx context.Context, c Config, n Notice) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	var errs []error
	if c.Webhook != "" {
		if err := Post(ctx, c.Webhook, n); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Desktop {
		if err := Desktop(ctx, n); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Post posts the notice's Body to a webhook. An answer other than 2xx is an
// error that names the status, not the address.
func Post(ctx context.Context, url string, n Notice) error {
	body, err := json.Marshal(Body{Text: n.Line(), Warden: n})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return errors.New("approvals.notify.webhook: not a usable URL")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "warden-notify")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		// The error text of net/http names the URL: keep only its kind.
		var ue interface{ Timeout() bool }
		if errors.As(err, &ue) && ue.Timeout() {
			return errors.New("approvals.notify.webhook: no answer within the notice's time")
		}
		return errors.New("approvals.notify.webhook: could not post the notice (connection failed)")
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("approvals.notify.webhook: the receiver answered %s", resp.Status)
	}
	return nil
}

// Desktop shows the notice as a desktop notification: notify-send on a
// Linux session with a display or a session bus, osascript on macOS.
// Elsewhere (a server, CI) it does nothing and returns nil.
func Desktop(ctx context.Context, n Notice) error {
	title := "warden: approval " + n.Approval
	text := oneLine(n.Call, 200) + "\n" + n.Answer
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "linux":
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" && os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
			return nil
		}
		bin, err := exec.LookPath("notify-send")
		if err != nil {
			return nil
		}
		cmd = exec.CommandContext(ctx, bin, "--app-name=warden", "--", title, text)
	case "darwin":
		script := fmt.Sprintf("display notification %s with title %s", appleString(text), appleString(title))
		cmd = exec.CommandContext(ctx, "osascript", "-e", script)
	default:
		return nil
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("desktop notification: %v: %s", err, oneLine(string(out), 200))
	}
	return nil
}

// appleString quotes s as an AppleScript string literal.
func appleString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// oneLine folds white space runs (line breaks included) into one space and
// cuts s to at most max bytes, on a rune boundary.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}

package e2e

import (
	"testing"

	"github.com/warden-run/warden/internal/scripted"
)

// opencodeReport is OpenCode as a host of the report gate: its plugin
// reports the turn's final text as it completes (experimental.text.complete),
// while OpenCode still holds the turn, and adds warden's retry text to the
// session as a user message; OpenCode then asks the model again before the
// session goes idle, so `opencode run` waits for the retry.
var opencodeReport = reportHost{name: "opencode", spec: opencodeSpec, main: scripted.HasTools,
	setup: func(e *env, bin string) { e.setupOpenCode() },
	run:   func(e *env, bin, prompt string) result { return e.runOpenCode(bin, prompt) }}

// TestOpenCodeReportGate is TestReportGate on OpenCode: the first answer
// has the final report without the plugin's metadata; the turn is held,
// the model gets the retry text and sends the metadata; the report is
// final, on-complete ran once, and `opencode run` printed the second
// answer before it exited.
func TestOpenCodeReportGate(t *testing.T) {
	t.Parallel()
	testReportGate(t, opencodeReport, wardenBin)
}

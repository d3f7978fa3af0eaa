package cli

import (
	"os"
	"testing"

	"github.com/warden-run/warden/hook"
)

// TestMain gives the hooks these tests run in process room for a loaded
// machine: a test comparing two answers must not see one of them turn into
// DECISION_TIMEOUT because the machine was busy for 10 s. Tests of the
// deadline itself pass --timeout, which wins.
func TestMain(m *testing.M) {
	if os.Getenv(hook.TimeoutEnv) == "" {
		os.Setenv(hook.TimeoutEnv, "2m")
	}
	// The tests' project folders are new, so Gemini CLI trusts none of
	// them: `warden init gemini` would fail (TestInitGeminiUntrusted
	// tests that, without this).
	if os.Getenv("GEMINI_CLI_TRUST_WORKSPACE") == "" {
		os.Setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
	}
	os.Exit(m.Run())
}

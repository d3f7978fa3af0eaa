package opencode_test

import (
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden/host/opencode"
)

func TestPluginSource(t *testing.T) {
	src := opencode.PluginSource("/opt/my warden/warden", 90*time.Second)
	if strings.Contains(src, "__") || !strings.Contains(src, `["hook"]).concat(["opencode","--wait","1m30s"])`) || !strings.Contains(src, "TIMEOUT_MS = 120000") || !strings.Contains(src, `process.env.WARDEN_BIN || "/opt/my warden/warden"`) {
		t.Errorf("binary not substituted:\n%s", src[:600])
	}
	for _, hook := range []string{`"tool.execute.before"`, `"tool.execute.after"`, `"experimental.chat.system.transform"`, `"chat.message"`, `"session.compacted"`, `"experimental.session.compacting"`, "throw new Error"} {
		if !strings.Contains(src, hook) {
			t.Errorf("plugin lacks %s", hook)
		}
	}
}

package warden

import (
	"bytes"
	"encoding/json"
	"strings"
)

// ModelText is the plain text a model reads for a deny or an ask, on every
// host: the decision's own rendering (Text), which names the code, reason,
// rule and suggestion, without emoji or box drawing. When the policy's
// model_errors option chose JSON for the host (ModelFormat), it is the
// structured error {"error", "reason", "suggestion", "recoverable"}
// instead (docs/policy.md, "What the model reads").
func (d Decision) ModelText() string {
	if d.ModelFormat == "json" {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if enc.Encode(d.ModelError()) == nil {
			return strings.TrimSpace(b.String())
		}
	}
	return strings.TrimSpace("warden " + strings.TrimPrefix(d.Text(), "## "))
}

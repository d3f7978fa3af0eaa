package policy

import (
	"fmt"
	"strings"
	"text/template"
)

// TemplateFuncs are the functions a role's prompt and reminder templates
// may use. The loader checks templates with them; the session layer
// renders with them.
var TemplateFuncs = template.FuncMap{
	"join":  strings.Join,
	"upper": func(v any) string { return strings.ToUpper(fmt.Sprint(v)) },
	"lower": func(v any) string { return strings.ToLower(fmt.Sprint(v)) },
	// trimAre makes "are denied" "is denied" (a singular subject).
	"trimAre": func(s string) string {
		if rest, ok := strings.CutPrefix(s, "are "); ok {
			return "is " + rest
		}
		if rest, ok := strings.CutPrefix(s, "need "); ok {
			return "needs " + rest
		}
		return s
	},
	// verb says a default effect in a sentence: "are allowed", "are
	// denied", "need a human's approval".
	"verb": func(v any) string {
		switch e := fmt.Sprint(v); e {
		case "allow":
			return "are allowed"
		case "deny":
			return "are denied"
		case "ask":
			return "need a human's approval"
		default:
			return e
		}
	},
}

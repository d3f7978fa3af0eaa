package warden

import (
	"regexp"
	"strings"
	"sync"
)

// Redacted replaces every secret RedactArgs and RedactString remove.
const Redacted = "[REDACTED]"

// secretName matches names of arguments, environment variables and flags
// that hold secrets. The expressions compile on first use, so that a
// short-lived process (a hook) that redacts nothing does not pay for them.
var secretName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(passw(or)?d|passwd|\bpwd\b|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credential|authorization|\bauth\b|cookie|session[_-]?key|client[_-]?secret|signing[_-]?key|bearer)`)
})

type redactor struct {
	re   *regexp.Regexp
	repl string
}

var redactors = sync.OnceValue(func() []redactor {
	return []redactor{
		// Authorization / Proxy-Authorization headers, to the end of the value.
		{regexp.MustCompile(`(?i)((?:proxy-)?authorization\s*:\s*)(?:"[^"]*"|'[^']*'|[^\n"']*)`), "${1}" + Redacted},
		// Other secret-looking headers: X-Api-Key: v, Cookie: v.
		{regexp.MustCompile(`(?i)((?:x-[a-z-]*)?(?:api-?key|token|secret|cookie)\s*:\s*)([^\s"',;]+)`), "${1}" + Redacted},
		// Bearer/Basic/token credentials on their own.
		{regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}`), "${1} " + Redacted},
		// NAME=value assignments (env, flags, config) whose name looks secret.
		{regexp.MustCompile(`(?i)((?:--?)?[A-Za-z0-9_.-]*(?:passw(?:or)?d|passwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credential|auth|cookie)[A-Za-z0-9_.-]*["']?\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s"',;&|)]+)`), "${1}" + Redacted},
		// --password value, --token value (a flag with a secret name, then a separate value).
		{regexp.MustCompile(`(?i)(--?[A-Za-z0-9-]*(?:passw(?:or)?d|passwd|secret|token|api-?key|access-?key|private-?key|credential)[A-Za-z0-9-]*\s+)("[^"]*"|'[^']*'|[^\s"'-][^\s"';&|)]*)`), "${1}" + Redacted},
		// Credentials in URLs: scheme://user:password@host.
		{regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:)([^@\s/]+)(@)`), "${1}" + Redacted + "${3}"},
		// Well-known token shapes.
		{regexp.MustCompile(`\b(sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{16,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})`), Redacted},
		// PEM private keys.
		{regexp.MustCompile(`(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|$)`), Redacted},
	}
})

// RedactString removes secrets from free text such as a command line:
// Authorization headers, NAME=value assignments whose name looks secret
// (API_KEY=..., DB_PASSWORD=..., --token=...), secret flags followed by a
// value (--password x), credentials in URLs, and well-known token shapes
// (sk-..., ghp_..., AKIA..., JWTs, PEM private keys). It errs on the side of
// removing too much.
func RedactString(s string) string {
	if s == "" {
		return s
	}
	for _, r := range redactors() {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return s
}

// RedactArgs returns a deep copy of a call's arguments with secrets removed:
// the value of every key whose name looks secret (password, token, api_key,
// authorization, ...) is replaced by Redacted, and every string is passed
// through RedactString. The input is not modified.
func RedactArgs(args map[string]any) map[string]any {
	if args == nil {
		return map[string]any{}
	}
	out, _ := redactValue(args).(map[string]any)
	return out
}

func redactValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			if secretName().MatchString(k) && !isEmpty(x) {
				m[k] = Redacted
				continue
			}
			// Header maps: {"headers": {"Authorization": "..."}} is caught
			// above; env maps: {"env": {"API_KEY": "..."}} too.
			m[k] = redactValue(x)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = redactValue(x)
		}
		return s
	case []string:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = RedactString(x)
		}
		return s
	case string:
		return RedactString(v)
	}
	return v
}

func isEmpty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(v) == ""
	}
	return false
}

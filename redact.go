package warden

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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

// secretWords are words every name secretName matches holds, as ASCII in
// lowercase: a name without any of them is not looked at by the
// expression (a call's argument names are few and mostly plain, and the
// expression cost some 5 us a call in warden serve).
var secretWords = []string{"passw", "pwd", "secret", "token", "key", "credential", "auth", "cookie", "bearer"}

// secretKey reports whether an argument's name looks secret (secretName),
// running the expression only where its words are (redactor.mayMatch).
func secretKey(k string) bool {
	return redactor{ci: secretWords}.mayMatch(k, asciiLower(k)) && secretName().MatchString(k)
}

type redactor struct {
	re   *regexp.Regexp
	repl string
	// Text without any of these cannot match: ci are looked for in the
	// lowercased text (for a (?i) expression), cs as they are.
	ci, cs []string
}

// mayMatch reports whether the redactor could match s, whose lowercase
// form is lower ("" when s is not all ASCII: then every redactor runs,
// since Unicode case folding reaches beyond strings.ToLower).
func (r redactor) mayMatch(s, lower string) bool {
	if lower == "" && (len(r.ci) > 0) {
		return true
	}
	for _, k := range r.ci {
		if strings.Contains(lower, k) {
			return true
		}
	}
	for _, k := range r.cs {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

var redactors = sync.OnceValue(func() []redactor {
	return []redactor{
		// Authorization / Proxy-Authorization headers, to the end of the value.
		{regexp.MustCompile(`(?i)((?:proxy-)?authorization\s*:\s*)(?:"[^"]*"|'[^']*'|[^\n"']*)`), "${1}" + Redacted,
			[]string{"authorization"}, nil},
		// Other secret-looking headers: X-Api-Key: v, Cookie: v.
		{regexp.MustCompile(`(?i)((?:x-[a-z-]*)?(?:api-?key|token|secret|cookie)\s*:\s*)([^\s"',;]+)`), "${1}" + Redacted,
			[]string{"api", "token", "secret", "cookie"}, nil},
		// Bearer/Basic/token credentials on their own.
		{regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}`), "${1} " + Redacted,
			[]string{"bearer", "basic", "token"}, nil},
		// NAME=value assignments (env, flags, config) whose name looks secret.
		{regexp.MustCompile(`(?i)((?:--?)?[A-Za-z0-9_.-]*(?:passw(?:or)?d|passwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credential|auth|cookie)[A-Za-z0-9_.-]*["']?\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s"',;&|)]+)`), "${1}" + Redacted,
			[]string{"passw", "secret", "token", "api", "access", "private", "credential", "auth", "cookie"}, nil},
		// --password value, --token value (a flag with a secret name, then a separate value).
		{regexp.MustCompile(`(?i)(--?[A-Za-z0-9-]*(?:passw(?:or)?d|passwd|secret|token|api-?key|access-?key|private-?key|credential)[A-Za-z0-9-]*\s+)("[^"]*"|'[^']*'|[^\s"'-][^\s"';&|)]*)`), "${1}" + Redacted,
			[]string{"passw", "secret", "token", "api", "access", "private", "credential"}, nil},
		// "set NAME VALUE" in a tool's configuration, where NAME looks
		// secret: aws configure set aws_secret_access_key X, npm config
		// set //host/:_authToken X, git config x.password X.
		{regexp.MustCompile(`(?i)(\b(?:set|config)\s+(?:--?[a-z-]+\s+)*["']?[^\s"'=]*(?:passw|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential|auth)[^\s"'=]*["']?\s+)("[^"]*"|'[^']*'|[^\s"';&|)]+)`), "${1}" + Redacted,
			[]string{"set", "config"}, nil},
		// curl -u user:password (--user, -U/--proxy-user): the user stays.
		{regexp.MustCompile(`(?i)(\bcurl\b[^\n|;&]*?\s(?:-u|--user|-U|--proxy-user)(?:\s+|=)?["']?[^\s:"']*:)([^\s"']+)`), "${1}" + Redacted,
			[]string{"curl"}, nil},
		// The MySQL clients' -pPASSWORD (the password joined to -p).
		{regexp.MustCompile(`(\b(?i:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mysqlpump|mariadb|mariadb-dump|mariadb-admin)\b[^\n|;&]*?\s-p)("[^"]*"|'[^']*'|[^\s"';&|)]+)`), "${1}" + Redacted,
			[]string{"mysql", "mariadb"}, nil},
		// A registry login's -p PASSWORD: docker, podman, buildah, skopeo,
		// nerdctl, oras, helm registry.
		{regexp.MustCompile(`(?i)(\b(?:docker|podman|buildah|skopeo|nerdctl|oras|helm\s+registry)\s+login\b[^\n|;&]*?\s-p(?:\s+|=)?)("[^"]*"|'[^']*'|[^\s"';&|)]+)`), "${1}" + Redacted,
			[]string{"login"}, nil},
		// sshpass -p PASSWORD.
		{regexp.MustCompile(`(?i)(\bsshpass\b[^\n|;&]*?\s-p\s*)("[^"]*"|'[^']*'|[^\s"';&|)]+)`), "${1}" + Redacted,
			[]string{"sshpass"}, nil},
		// htpasswd -b FILE USER PASSWORD (the password is the last word).
		{regexp.MustCompile(`(?i)(\bhtpasswd\s+(?:-[a-z]+\s+)*-[a-z]*b[a-z]*\s+(?:-[a-z]+\s+)*[^\s-]\S*\s+\S+\s+)("[^"]*"|'[^']*'|[^\s"';&|)]+)`), "${1}" + Redacted,
			[]string{"htpasswd"}, nil},
		// Credentials in URLs: scheme://user:password@host.
		{regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:)([^@\s/]+)(@)`), "${1}" + Redacted + "${3}",
			nil, []string{"://"}},
		// Well-known token shapes.
		{regexp.MustCompile(`\b(sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{16,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})`), Redacted,
			nil, []string{"sk-", "gh", "github_pat_", "glpat-", "xox", "AKIA", "AIza", "eyJ"}},
		// PEM private keys.
		{regexp.MustCompile(`(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|$)`), Redacted,
			nil, []string{"-----BEGIN "}},
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
	lower := asciiLower(s)
	for _, r := range redactors() {
		// A quick look for the words an expression needs spares the
		// expression a pass over text it cannot match (a file's content).
		if r.mayMatch(s, lower) {
			if t := r.re.ReplaceAllString(s, r.repl); t != s {
				s, lower = t, asciiLower(t)
			}
		}
	}
	return s
}

// RedactExact is RedactString for a value that is kept to be compared
// (a grant's or an approval part's value: a later call is matched
// against it exactly): a value with no secret RedactString finds is
// returned as it is; otherwise its redacted text followed by a hash of the
// whole value, so that two values compare equal exactly when they were
// equal, and the secret is not kept in clear.
func RedactExact(s string) string {
	r := RedactText(s)
	if r == s {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return r + " (exact value " + hex.EncodeToString(sum[:16]) + ")"
}

// RedactPart keeps a part of a command line (a simple command a grant or
// an approval covers, as RedactExact left it) that is secret only in its
// line's context from being kept in clear: a word of a private key
// between its BEGIN and END lines is one command of its own. A part a
// word of which redaction removes from line is kept as Redacted with a
// hash of it; a part redacted already is returned as it is.
func RedactPart(value, line string) string {
	if line == "" || strings.Contains(value, Redacted) {
		return value
	}
	rl := RedactString(line)
	if rl == line {
		return value
	}
	for _, w := range strings.Fields(value) {
		if len(w) >= 4 && strings.Contains(line, w) && !strings.Contains(rl, w) {
			sum := sha256.Sum256([]byte(value))
			return Redacted + " (exact value " + hex.EncodeToString(sum[:16]) + ")"
		}
	}
	return value
}

// CommandLine is the command line a call's arguments hold: command or
// cmd (a string, or an argv list joined by spaces), or chars; "" for
// none.
func CommandLine(args map[string]any) string {
	v, ok := args["command"]
	if !ok {
		v, ok = args["cmd"]
	}
	if !ok {
		v = args["chars"]
	}
	switch v := v.(type) {
	case string:
		return v
	case []any:
		words := make([]string, 0, len(v))
		for _, w := range v {
			s, _ := w.(string)
			words = append(words, s)
		}
		return strings.Join(words, " ")
	}
	return ""
}

// RedactText is RedactString for a text that may be a JSON object (a
// call's arguments as text): an object is redacted as arguments
// (RedactArgs), which finds secrets in its strings that its JSON escapes
// hide from RedactString, and written back as JSON; a text that holds no
// secret is returned as it is.
func RedactText(s string) string {
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
		var m map[string]any
		if json.Unmarshal([]byte(t), &m) == nil {
			before, err1 := json.Marshal(m)
			after, err2 := json.Marshal(RedactArgs(m))
			if err1 == nil && err2 == nil {
				if string(before) == string(after) {
					return s
				}
				return string(after)
			}
		}
	}
	return RedactString(s)
}

// asciiLower is s in lowercase, or "" when s is not all ASCII.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return ""
		}
	}
	return strings.ToLower(s)
}

// RedactArgs returns a deep copy of a call's arguments with secrets removed:
// the value of every key whose name looks secret (password, token, api_key,
// authorization, ...) is replaced by Redacted, and every string is passed
// through RedactString. The input is not modified.
func RedactArgs(args map[string]any) map[string]any { return RedactArgsCut(args, 0) }

// RedactArgsCut is RedactArgs that also cuts every string longer than max
// bytes (0: no limit) at a space or line break before the limit, or drops
// it when there is none near it, and notes how many bytes it left out.
// Cutting before redacting keeps redaction fast on large contents; cutting
// at a space keeps a secret from being split into a part no pattern knows.
func RedactArgsCut(args map[string]any, max int) map[string]any {
	if args == nil {
		return map[string]any{}
	}
	out, _ := redactValue(args, max).(map[string]any)
	return out
}

func redactValue(v any, max int) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			if secretKey(k) && !isEmpty(x) {
				m[k] = Redacted
				continue
			}
			// Header maps: {"headers": {"Authorization": "..."}} is caught
			// above; env maps: {"env": {"API_KEY": "..."}} too.
			m[k] = redactValue(x, max)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = redactValue(x, max)
		}
		return s
	case []string:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = redactCut(x, max)
		}
		return s
	case string:
		return redactCut(v, max)
	}
	return v
}

// redactCut is RedactString on s cut to max bytes (0: whole).
func redactCut(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return RedactString(s)
	}
	cut := strings.LastIndexAny(s[:max], " \t\n")
	if cut < max/2 {
		// No break near the limit: one huge token, which could be a
		// secret that a cut would hide from redaction. Keep none of it.
		cut = 0
	}
	return RedactString(s[:cut]) + fmt.Sprintf("\n[warden: %d more bytes not recorded]", len(s)-cut)
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

package warden

import (
	"strings"
	"testing"
)

// redactAll is RedactString without the keyword look-ahead: every
// expression over the whole text.
func redactAll(s string) string {
	if s == "" {
		return s
	}
	for _, r := range redactors() {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return s
}

// FuzzRedactSkipsOnlyWhatCannotMatch: skipping an expression whose words
// are absent never changes what RedactString removes.
func FuzzRedactSkipsOnlyWhatCannotMatch(f *testing.F) {
	for _, s := range []string{
		"curl -H 'Authorization: Bearer abcdefghijkl' https://u:p@x.io", "DB_PASSWORD=hunter2 ./run",
		"--token abc --api-key=xyz", "sk-ant-" + strings.Repeat("a", 20), "-----BEGIN RSA PRIVATE KEY-----\nabc",
		"x-api-key: v; Cookie: c", "ghp_" + strings.Repeat("b", 24), "eyJabcdefgh.abcdefghi.abcdefghi",
		"TOKEN\u212A=v", "ſecret: x", "AUTH=1 aws AKIA1234567890ABCDEF", "plain text, nothing to hide",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := RedactString(s), redactAll(s); got != want {
			t.Errorf("RedactString(%q) = %q, every expression gives %q", s, got, want)
		}
	})
}

// FuzzSecretKeyIsTheExpression: the look for secretWords before the
// expression never changes which names are secret.
func FuzzSecretKeyIsTheExpression(f *testing.F) {
	for _, s := range []string{
		"command", "file_path", "PASSWORD", "db_passwd", "pwd", "Client-Secret", "X-Api-Key", "apikey",
		"access_key", "PRIVATE_KEY", "credentials", "Authorization", "auth", "cookie", "session_key",
		"signingKey", "Bearer", "toKen", "TOKEN\u212A", "\u212Aey", "ſecret", "paſſword", "", "keyword",
		"monkey", "author", "description",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := secretKey(s), secretName().MatchString(s); got != want {
			t.Errorf("secretKey(%q) = %v, the expression says %v", s, got, want)
		}
	})
}

// BenchmarkRedactContent is the audit trail's work on a 64 KiB file
// content with no secret in it.
func BenchmarkRedactContent(b *testing.B) {
	line := "func handle(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, \"hello %s\", r.URL.Path) }\n"
	s := strings.Repeat(line, 64<<10/len(line))
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		RedactString(s)
	}
}

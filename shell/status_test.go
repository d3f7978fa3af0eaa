package shell_test

import (
	"testing"

	"github.com/warden-run/warden/shell"
)

// TestSucceeded: the commands a line's success vouches for, as bash runs
// the line (checked with bash -c: `false || true`, `false; true` and
// `false | true` all exit 0).
func TestSucceeded(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"go test ./...", "go test ./..."},
		{"go test ./x || true", ""},
		{"go test ./...; true", "true"},
		{"go test ./...\ntrue", "true"},
		{"go test ./... | tail -1", "tail -1"},
		{"cd x && go test ./...", "cd x && go test ./..."},
		{"go vet ./... && go test ./... && echo ok", "go vet ./... && go test ./... && echo ok"},
		{"(cd x && go test ./...)", "cd x && go test ./..."},
		{"{ go test ./...; }", "go test ./..."},
		{"! go test ./...", ""},
		{"go test ./... &", ""},
		{"if go test ./...; then echo y; fi", ""},
		{"for p in a b; do go test ./$p; done", ""},
		{"go test ./... 2>&1 > out.txt", "go test ./... 2>&1 >out.txt"},
		{"timeout 60 go test ./...", "timeout 60 go test ./..."},
		{"go test ./... || go test ./... ", ""},
		{"go test (", ""},
	} {
		if got := shell.Succeeded(tc.line); got != tc.want {
			t.Errorf("Succeeded(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

// Package golden reads and checks the golden transcripts of the host
// adapters: files of "-- name --" sections, where the sections a test
// computes are compared with the file and rewritten by -update.
package golden

import (
	"os"
	"strings"
	"testing"
)

// Read returns a transcript's sections and their order.
func Read(t *testing.T, file string) (map[string]string, []string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	secs := map[string]string{}
	var order []string
	name := ""
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if strings.HasPrefix(line, "-- ") && strings.HasSuffix(strings.TrimSpace(line), " --") {
			name = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "-- "), " --")
			order = append(order, name)
			continue
		}
		if name != "" {
			secs[name] += line
		}
	}
	for k, v := range secs {
		secs[k] = strings.TrimSpace(v)
	}
	return secs, order
}

// Check compares the computed sections got with the file's; with update
// it rewrites the file, keeping the input sections in their order.
func Check(t *testing.T, file string, secs map[string]string, order []string, got map[string]string, update bool) {
	t.Helper()
	if update {
		var b strings.Builder
		for _, name := range order {
			if _, out := got[name]; out {
				continue
			}
			b.WriteString("-- " + name + " --\n" + secs[name] + "\n")
		}
		for _, name := range []string{"call", "stdout"} {
			if v, ok := got[name]; ok {
				b.WriteString("-- " + name + " --\n" + v + "\n")
			}
		}
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for name, v := range got {
		if secs[name] != strings.TrimSpace(v) {
			t.Errorf("%s: section %q differs (run go test -update to accept)\n got:\n%s\nwant:\n%s", file, name, v, secs[name])
		}
	}
}

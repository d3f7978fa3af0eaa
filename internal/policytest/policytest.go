// Package policytest helps the front ends' tests of the stable policy read
// (policy.LoadStable, policy.ReadStable): a policy file written in two
// steps while a front end reads it. It is imported by tests only.
package policytest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/warden-run/warden/policy"
)

// Head is the first part of a policy being written: a default that
// allows, so that reading it alone would allow what the whole denies.
const Head = "version: 1\ndefault: allow\n"

// WriteInTwoSteps sets the policy package's settle timings for the test
// (restored after it; the test must not be parallel), writes Head to
// warden.yaml in a new folder, and appends rest a moment later. It returns
// the file and a channel that gets the result of the append. Settle is
// long, so that a writer slowed by a loaded machine still writes within
// it.
func WriteInTwoSteps(t *testing.T, rest string) (file string, wrote <-chan error) {
	t.Helper()
	s, w := policy.Settle, policy.SettleWait
	t.Cleanup(func() { policy.Settle, policy.SettleWait = s, w })
	policy.Settle, policy.SettleWait = 3*time.Second, 30*time.Second
	file = filepath.Join(t.TempDir(), "warden.yaml")
	if err := os.WriteFile(file, []byte(Head), 0o644); err != nil {
		t.Fatal(err)
	}
	ch := make(chan error, 1)
	go func() {
		time.Sleep(100 * time.Millisecond)
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			_, err = f.WriteString(rest)
			f.Close()
		}
		ch <- err
	}()
	return file, ch
}

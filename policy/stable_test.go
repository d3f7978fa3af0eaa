package policy_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/warden-run/warden/policy"
)

// TestFindFolderIsAnError: a folder named warden.yaml is reported, not
// skipped for a policy further up.
func TestFindFolderIsAnError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "warden.yaml"), []byte("version: 1\n"), 0o644)
	sub := filepath.Join(dir, "sub")
	os.MkdirAll(filepath.Join(sub, "warden.yaml"), 0o755)
	if got, err := policy.Find(sub); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("Find with a folder named warden.yaml = %q, %v; want an error saying it is a folder", got, err)
	}
	if _, err := policy.Load(filepath.Join(sub, "warden.yaml")); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("Load of a folder: %v", err)
	}
	if _, err := policy.LoadStable(filepath.Join(sub, "warden.yaml")); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("LoadStable of a folder: %v", err)
	}
}

// TestReadStableWaitsForQuiet: a file changed a moment ago is read once it
// has been quiet for policy.Settle; one that keeps changing is an error.
func TestReadStableWaitsForQuiet(t *testing.T) {
	// Not parallel: it sets the package's timings.
	defer func(s, w time.Duration) { policy.Settle, policy.SettleWait = s, w }(policy.Settle, policy.SettleWait)
	policy.Settle, policy.SettleWait = 100*time.Millisecond, 600*time.Millisecond
	file := filepath.Join(t.TempDir(), "warden.yaml")
	os.WriteFile(file, []byte("version: 1\n"), 0o644)
	written := time.Now()
	// A writer finishes the file 50 ms later: the read must see the end,
	// unless the loaded machine held the writer back for a whole Settle
	// (then the half file was quiet that long, and may be read).
	var appended time.Time
	appendDone := make(chan struct{})
	go func() {
		defer close(appendDone)
		time.Sleep(50 * time.Millisecond)
		appended = time.Now()
		f, _ := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
		f.WriteString("default: deny\n")
		f.Close()
	}()
	data, err := policy.ReadStable(file)
	<-appendDone
	stalled := appended.Sub(written) >= policy.Settle
	if err != nil || string(data) != "version: 1\ndefault: deny\n" && !(stalled && string(data) == "version: 1\n") {
		t.Errorf("ReadStable = %q, %v; want the whole file (writer stalled: %v)", data, err, stalled)
	}
	// A file that never settles. On a loaded machine the writer itself can
	// stall (a truncate waiting on the journal) for longer than Settle, and
	// then the file did settle: ReadStable may return it only if such a
	// quiet spell happened. The writer records its longest one: from the
	// start of one write to the end of the next bounds how long the file's
	// time stood still.
	policy.Settle, policy.SettleWait = 300*time.Millisecond, 1500*time.Millisecond
	os.WriteFile(file, []byte("version: 1\n"), 0o644)
	stop := make(chan struct{})
	done := make(chan time.Duration)
	go func() {
		var longest time.Duration
		prev := time.Now()
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- longest
				return
			default:
				start := time.Now()
				os.WriteFile(file, []byte(strings.Repeat("#", i%7)+"version: 1\n"), 0o644)
				longest = max(longest, time.Since(prev))
				prev = start
				runtime.Gosched()
			}
		}
	}()
	_, err = policy.ReadStable(file)
	close(stop)
	longest := <-done
	if !errors.Is(err, policy.ErrUnsettled) && longest < policy.Settle {
		t.Errorf("ReadStable of a file that kept changing (never quiet for more than %v): %v, want ErrUnsettled", longest, err)
	}
}

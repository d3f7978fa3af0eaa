package exectest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// TestNoTextFileBusy writes and runs scripts while other goroutines start
// processes without pause: every run must start. With os.WriteFile in
// place of WriteFile this fails within a few hundred rounds on Linux.
func TestNoTextFileBusy(t *testing.T) {
	dir := t.TempDir()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				exec.Command("true").Run()
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	rounds := 300
	if testing.Short() {
		rounds = 100
	}
	for i := range rounds {
		p := filepath.Join(dir, "s"+strconv.Itoa(i))
		if err := WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(p).CombinedOutput(); err != nil {
			t.Fatalf("round %d: %s: %v %s", i, p, err, out)
		}
		os.Remove(p)
	}
}

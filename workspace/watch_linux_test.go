package workspace

import (
	"errors"
	"io/fs"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A file system mounted on a folder on the way, which no inotify event
// tells, is seen through the mount table (where the test may mount).
//
// Not parallel: a mount sets aside what every View of the process
// remembers, which the parallel tests would see as a forgetting.
func TestViewRefreshSeesAMount(t *testing.T) {
	dir := tempDir(t)
	write(t, filepath.Join(dir, "m", "f"), "one")
	settle(t)
	v := newView(t, "watch")
	if data, _ := v.ReadFile(filepath.Join(dir, "m", "f")); string(data) != "one" {
		t.Fatalf("read %q", data)
	}
	watching(t, v, "watch")
	if err := syscall.Mount("tmpfs", filepath.Join(dir, "m"), "tmpfs", 0, ""); err != nil {
		t.Skipf("cannot mount here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(filepath.Join(dir, "m"), syscall.MNT_DETACH) })
	if !v.Refresh() {
		t.Fatal("Refresh did not see the mount")
	}
	if _, err := v.ReadFile(filepath.Join(dir, "m", "f")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after the mount and Refresh: %v, want the file missing", err)
	}
}

// One watcher serves every View of the process: an event read by one
// View's Refresh still reaches another that depends on the same file, and
// a View that sets its answers aside leaves the watches another holds.
func TestViewsShareTheWatcher(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	shared, own := filepath.Join(dir, "shared"), filepath.Join(dir, "own")
	write(t, shared, "one")
	write(t, own, "one")
	settle(t)
	v1, v2 := newView(t, "watch"), newView(t, "watch")
	v1.ReadFile(shared)
	v1.ReadFile(own)
	v2.ReadFile(shared)
	watching(t, v1, "watch")
	watching(t, v2, "watch")

	// v1 alone depends on own: it sets its answers aside, v2 keeps its.
	write(t, own, "two")
	if !v1.Refresh() {
		t.Fatal("v1 did not see its own file change")
	}
	if v2.Refresh() {
		t.Fatal("v2 forgot after a change of a file it does not depend on")
	}
	// The shared file changes: v1's Refresh reads the event first.
	v1.ReadFile(shared)
	watching(t, v1, "watch")
	write(t, shared, "two")
	if !v1.Refresh() {
		t.Fatal("v1 did not see the shared file change")
	}
	if !v2.Refresh() {
		t.Fatal("v2 did not see the change v1's Refresh read")
	}
	if data, _ := v2.ReadFile(shared); string(data) != "two" {
		t.Errorf("v2 reads %q", data)
	}
}

// A View no longer reachable lets go of its watches (hookd and serve make
// and drop Views as policies come and go; the user's inotify watches are
// few).
func TestViewLetsGoOfItsWatches(t *testing.T) {
	dir := tempDir(t)
	f := filepath.Join(dir, "own-"+t.Name())
	write(t, f, "one")
	settle(t)
	held := func() int {
		w := theWatcher()
		w.mu.Lock()
		defer w.mu.Unlock()
		n := 0
		for _, sets := range w.subs {
			n += len(sets)
		}
		return n
	}
	func() {
		v := newView(t, "watch")
		v.ReadFile(f)
		watching(t, v, "watch")
	}()
	before := held()
	if before == 0 {
		t.Fatal("nothing watched")
	}
	for range 20 {
		runtime.GC()
		if held() < before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("the dropped View's watches are still held: %d, before %d", held(), before)
}

// Views refreshed at once from many goroutines, while the files they
// depend on change, each see their own file's change (run with -race).
func TestViewsRefreshAtOnce(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	const n = 8
	for i := range n {
		write(t, filepath.Join(dir, strconv.Itoa(i)), "one")
	}
	settle(t)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := filepath.Join(dir, strconv.Itoa(i))
			v := New()
			v.ReadFile(f)
			if v.Refresh() {
				t.Errorf("view %d forgot though nothing changed", i)
				return
			}
			write(t, f, "two")
			if !v.Refresh() {
				t.Errorf("view %d did not see its file change", i)
				return
			}
			if data, _ := v.ReadFile(f); string(data) != "two" {
				t.Errorf("view %d reads %q", i, data)
			}
		}()
	}
	wg.Wait()
}

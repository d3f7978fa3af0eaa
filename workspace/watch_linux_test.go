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

	"github.com/warden-run/warden/internal/exectest"
)

// A file system mounted on a folder on the way, which no inotify event
// tells, is seen through the mount table (where the test may mount).
//
// It runs in a process of its own with mounts of its own: a mount sets
// aside what every View of the process and of other processes remembers,
// which their tests would see as a forgetting.
func TestViewRefreshSeesAMount(t *testing.T) {
	if !exectest.InOwnMounts(t) {
		return
	}
	dir := tempDir(t)
	d := filepath.Join(dir, "m", "d")
	write(t, filepath.Join(d, "one"), "")
	settle(t)
	v := newView(t, "watch")
	if ents, _ := v.ReadDir(d); len(ents) != 1 {
		t.Fatalf("listed %d entries", len(ents))
	}
	watching(t, v, "watch")
	if err := syscall.Mount("tmpfs", filepath.Join(dir, "m"), "tmpfs", 0, ""); err != nil {
		t.Skipf("cannot mount here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(filepath.Join(dir, "m"), syscall.MNT_DETACH) })
	if !v.Refresh() {
		t.Fatal("Refresh did not see the mount")
	}
	if _, err := v.ReadDir(d); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after the mount and Refresh: %v, want the folder missing", err)
	}
}

// One watcher serves every View of the process: an event read by one
// View's Refresh still reaches another that depends on the same folder,
// and a View that sets its answers aside leaves the watches another holds.
func TestViewsShareTheWatcher(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	shared, own := filepath.Join(dir, "shared"), filepath.Join(dir, "own")
	write(t, filepath.Join(shared, "one"), "")
	write(t, filepath.Join(own, "one"), "")
	settle(t)
	v1, v2 := newView(t, "watch"), newView(t, "watch")
	v1.ReadDir(shared)
	v1.ReadDir(own)
	v2.ReadDir(shared)
	watching(t, v1, "watch")
	watching(t, v2, "watch")

	// v1 alone depends on own: it sets its answers aside, v2 keeps its.
	write(t, filepath.Join(own, "two"), "")
	if !v1.Refresh() {
		t.Fatal("v1 did not see its own folder change")
	}
	if v2.Refresh() {
		t.Fatal("v2 forgot after a change of a folder it does not depend on")
	}
	// The shared folder changes: v1's Refresh reads the event first.
	v1.ReadDir(shared)
	watching(t, v1, "watch")
	write(t, filepath.Join(shared, "two"), "")
	if !v1.Refresh() {
		t.Fatal("v1 did not see the shared folder change")
	}
	if !v2.Refresh() {
		t.Fatal("v2 did not see the change v1's Refresh read")
	}
	if ents, _ := v2.ReadDir(shared); len(ents) != 2 {
		t.Errorf("v2 lists %d entries, want 2", len(ents))
	}
}

// A View no longer reachable lets go of its watches (hookd and serve make
// and drop Views as policies come and go; the user's inotify watches are
// few).
func TestViewLetsGoOfItsWatches(t *testing.T) {
	dir := tempDir(t)
	d := filepath.Join(dir, "own-"+t.Name())
	write(t, filepath.Join(d, "one"), "")
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
		v.ReadDir(d)
		watching(t, v, "watch")
	}()
	before := held()
	if before == 0 {
		t.Fatal("nothing watched")
	}
	// The cleanup runs in the runtime's own goroutine after a collection:
	// looked for again and again, with a bound far past any load.
	for range 3000 {
		runtime.GC()
		if held() < before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("the dropped View's watches are still held: %d, before %d", held(), before)
}

// Views refreshed at once from many goroutines, while the folders they
// depend on change, each see their own folder's change (run with -race).
func TestViewsRefreshAtOnce(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	const n = 8
	for i := range n {
		write(t, filepath.Join(dir, strconv.Itoa(i), "one"), "")
	}
	settle(t)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := filepath.Join(dir, strconv.Itoa(i))
			v := New()
			v.ReadDir(d)
			if v.Refresh() {
				t.Errorf("view %d forgot though nothing changed", i)
				return
			}
			write(t, filepath.Join(d, "two"), "")
			if !v.Refresh() {
				t.Errorf("view %d did not see its folder change", i)
				return
			}
			if ents, _ := v.ReadDir(d); len(ents) != 2 {
				t.Errorf("view %d lists %d entries", i, len(ents))
			}
		}()
	}
	wg.Wait()
}

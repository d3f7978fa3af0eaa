package fsnotice

import "testing"

// /proc changes with no inotify event: never Local. A missing path is not
// either (nothing to tell). The test's own folder is on a local file
// system on the machines the tests run on (ext4, tmpfs, overlayfs).
func TestLocal(t *testing.T) {
	if Local("/proc/self") {
		t.Error("/proc counted as local")
	}
	if Local("/no/such/path") {
		t.Error("a missing path counted as local")
	}
	if dir := t.TempDir(); !Local(dir) {
		t.Errorf("the test's folder %s is not local", dir)
	}
}

// A mount table just opened has not changed.
func TestMountsOpened(t *testing.T) {
	m, err := OpenMounts()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Changed() {
		t.Error("the mount table changed as it was opened")
	}
}

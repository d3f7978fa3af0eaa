package engine_test

import "testing"

// Class 9 of issue 31, paths: /dev/fd/.. is /proc/self, and
// /proc/self/cwd the command's own folder, so /dev/fd/../cwd/.env is the
// workspace's .env (bash confirms: cat /dev/fd/../cwd/.env prints it), and
// ~+ is $PWD; both were asked about as computed paths. They are now
// spellings checked beside the path (engine/paths.go procAlias, the ~+
// prefix in shell/parse.go), so one that lands on a protected or private
// path is denied as such. A glob whose literal prefix leaves the
// workspace or names a private folder is a listing of that folder.
func TestPathSpellings(t *testing.T) {
	t.Parallel()
	checkAllowDefault(t, []soundCase{
		{"/dev/fd/../cwd to a private file", sh("cat /dev/fd/../cwd/.env"), "deny"},
		{"/dev/fd/../cwd to a protected file", sh("echo x > /dev/fd/../cwd/.git/config"), "deny"},
		{"/proc/self/cwd after a cd", sh("cd src && cat /proc/self/cwd/.env"), "deny"},
		{"/proc/thread-self/cwd", sh("cat /proc/thread-self/cwd/.env"), "deny"},
		{"/proc/self/root", sh("cat /proc/self/root/etc/hostname"), "deny"},
		{"~+ to a private file", sh("cat ~+/.env"), "deny"},
		{"~+ to a protected file", sh("echo x > ~+/.git/config"), "deny"},
		{"~+/.. leaves the workspace", sh("cat ~+/../x"), "deny"},
		{"a glob under a private folder", sh("cat ~/.ssh/*"), "deny"},
		{"a glob outside", sh("cat /etc/**"), "deny"},
		{"a glob above the workspace", sh("cat ../**/*.pem"), "deny"},
		// Still computed: where another process's folder is.
		{"another process's cwd", sh("cat /proc/1/cwd/x"), "notAllow"},
		// Controls.
		{"~+ inside", sh("cat ~+/src/a.go"), "allow"},
		{"a glob inside", sh("cat src/*.go"), "allow"},
	})
}

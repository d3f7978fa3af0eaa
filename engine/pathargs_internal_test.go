package engine

import "testing"

// TestHasPathArgs: every name of the path argument lists is seen, through
// the hint and the map, and other names are not.
func TestHasPathArgs(t *testing.T) {
	n := 0
	for _, ks := range [][]string{pathKeys, {pathListKey}, moveKeys[:], patchKeys, nestedKeys[:]} {
		for _, k := range ks {
			n++
			if !hasPathArgs(map[string]any{"command": "ls", k: "x"}) {
				t.Errorf("%s is not seen as a path argument", k)
			}
		}
	}
	if n != len(pathArgs) {
		t.Errorf("%d names in the lists, %d in pathArgs", n, len(pathArgs))
	}
	for _, k := range []string{"", "command", "description", "content", "old_string", "pathx", "Path", "url", "destinatio"} {
		if hasPathArgs(map[string]any{k: "x"}) {
			t.Errorf("%q is seen as a path argument", k)
		}
	}
}

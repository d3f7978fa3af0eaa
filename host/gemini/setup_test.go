package gemini

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGeminiTrusted(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GEMINI_CLI_HOME", "")
	t.Setenv("GEMINI_CLI_TRUST_WORKSPACE", "")
	root := "/work/proj/app"
	if _, err := trusted(root); err == nil || !strings.Contains(err.Error(), "TRUST_FOLDER") {
		t.Errorf("no trust file: %v", err)
	}
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o755)
	for rules, want := range map[string]bool{
		`{"/work/proj/app": "TRUST_FOLDER"}`:                               true,
		`{"/work/proj": "TRUST_FOLDER"}`:                                   true,
		`{"/work/proj/x": "TRUST_PARENT"}`:                                 true,
		`{"/work/proj": "TRUST_FOLDER", "/work/proj/app": "DO_NOT_TRUST"}`: false,
		`{"/work/other": "TRUST_FOLDER"}`:                                  false,
		`{"/work/proj/application": "TRUST_FOLDER"}`:                       false,
	} {
		os.WriteFile(filepath.Join(home, ".gemini", "trustedFolders.json"), []byte(rules), 0o644)
		if _, err := trusted(root); (err == nil) != want {
			t.Errorf("%s: trusted=%v, err=%v", rules, err == nil, err)
		}
	}
	t.Setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
	if _, err := trusted(root); err != nil {
		t.Errorf("GEMINI_CLI_TRUST_WORKSPACE=true: %v", err)
	}
}

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/warden-run/warden/sqlite"
)

// TestSecretsNotInStoreFiles decides calls that carry secrets, through
// check with a session and through the hook, and reads the SQLite store's
// files byte by byte (the database and its write-ahead log): no secret is
// there in clear.
func TestSecretsNotInStoreFiles(t *testing.T) {
	t.Parallel()
	cwd := project(t, hookTestPolicy)
	root := filepath.Dir(filepath.Dir(cwd))
	calls := map[string]string{
		"aws configure set aws_secret_access_key S3cretAws0001":    "S3cretAws0001",
		"curl -u admin:S3cretCurl0002 https://example.com":         "S3cretCurl0002",
		"mysql -u root -pS3cretMysql0003 db":                       "S3cretMysql0003",
		"docker login -u bob -p S3cretDocker0004 r.example.com":    "S3cretDocker0004",
		"sshpass -p S3cretSsh0005 ssh host uptime":                 "S3cretSsh0005",
		"npm config set //r.example.com/:_authToken S3cretNpm0006": "S3cretNpm0006",
		"htpasswd -b .htpasswd bob S3cretHt0007":                   "S3cretHt0007",
	}
	store := filepath.Join(root, ".warden", "warden.db")
	// Held open, so that the write-ahead log stays until it is read.
	held, err := sqlite.Open(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	for cmd := range calls {
		// The hook (default: deny, so a history entry too) ...
		runHookCmd(t, claudePre(cwd, cmd), "claude")
		// ... a host without a prompt queues an approval for an ask ...
		runHookCmd(t, claudePre(cwd, "git push origin main && "+cmd), "codex")
		// ... and check with a session.
		call, _ := json.Marshal(map[string]any{"tool": "Bash", "args": map[string]any{"command": cmd}})
		runCLI(t, string(call), "check", "--policy", filepath.Join(root, "warden.yaml"), "--session", "s2", "--store", store)
	}
	out, _, _ := runCLI(t, "", "audit", "--policy", filepath.Join(root, "warden.yaml"), "--jsonl")
	if bytes.Count([]byte(out), []byte("\n")) < 3*len(calls) {
		t.Fatalf("the audit trail has too few records:\n%s", out)
	}
	files, _ := filepath.Glob(store + "*")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for cmd, secret := range calls {
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s holds the secret of %q in clear", filepath.Base(f), cmd)
			}
		}
	}
	// What is no secret is there in clear: these are the right files.
	var all []byte
	for _, f := range files {
		data, _ := os.ReadFile(f)
		all = append(all, data...)
	}
	if !bytes.Contains(all, []byte("r.example.com")) {
		t.Error("the store files do not hold the calls at all")
	}
	if len(files) < 2 {
		t.Errorf("store files: %v, want the database and its log", files)
	}
}

// Package secretforms lists the secrets warden's redaction knows, in the
// forms a tool call carries them: the redaction test checks that each is
// removed, and the store contract (storetest) that none is kept in clear
// anywhere warden writes. A form redaction learns goes here, and both
// tests cover it.
package secretforms

// A Command is a secret as a command line or a text carries it: In holds
// Secret, which redaction removes, and Keep, which it leaves.
type Command struct {
	Name, In, Secret, Keep string
}

// Commands are the secret forms of free text (warden.RedactString).
var Commands = []Command{
	{"auth header", `curl -H "Authorization: Bearer abc.def.ghi123" https://x`, "abc.def.ghi123", "curl -H"},
	{"auth header lower", `curl -H 'authorization: token s3cr3tvalue' x`, "s3cr3tvalue", "curl"},
	{"env assignment", `API_KEY=sk_live_123456 npm run deploy`, "sk_live_123456", "npm run deploy"},
	{"db password", `DB_PASSWORD='pa ss' psql`, "pa ss", "psql"},
	{"export token", `export GITHUB_TOKEN=abcdef123456`, "abcdef123456", "export"},
	{"flag equals", `mysql --password=hunter2 -u root`, "hunter2", "-u root"},
	{"flag space", `tool --token hunter2 build`, "hunter2", "build"},
	{"url credentials", `git clone https://bob:hunter2@example.com/r.git`, "hunter2", "bob:"},
	{"openai key", `echo sk-proj-abcdefghijklmnopqrstuv`, "sk-proj-abcdefghijklmnopqrstuv", "echo"},
	{"github token", `gh auth login --with-token ghp_abcdefghijklmnopqrstuvwxyz0123`, "ghp_abcdefghijklmnopqrstuvwxyz0123", "gh"},
	{"aws key", `aws configure set aws_access_key_id AKIAABCDEFGHIJKLMNOP`, "AKIAABCDEFGHIJKLMNOP", "aws configure"},
	{"json", `{"password": "hunter2", "user": "bob"}`, "hunter2", "bob"},
	{"pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "MIIEow", ""},
	// Secrets given as a separate word to a program that takes them so.
	{"aws configure set", `aws configure set aws_secret_access_key wJalrXUtnFEMIK7MDENG --profile p`, "wJalrXUtnFEMIK7MDENG", "aws configure set aws_secret_access_key"},
	{"npm config set", `npm config set //registry.example.com/:_authToken npm_s3cr3tT0ken`, "npm_s3cr3tT0ken", "npm config set"},
	{"git config", `git config --global github.token gh0sTt0k3n`, "gh0sTt0k3n", "git config"},
	{"curl -u", `curl -s -u admin:Hunter2pw https://example.com/api`, "Hunter2pw", "admin:"},
	{"curl --user", `curl --user 'admin:Hunter2pw' https://example.com/api`, "Hunter2pw", "https://example.com/api"},
	{"curl --user=", `curl --user=admin:Hunter2pw https://x`, "Hunter2pw", "admin"},
	{"mysql -p", `mysql -u root -pHunter2pw mydb`, "Hunter2pw", "mydb"},
	{"mysqldump -p", `mysqldump -h db -pHunter2pw --all-databases > all.sql`, "Hunter2pw", "all.sql"},
	{"docker login -p", `docker login -u bob -p Hunter2pw registry.example.com`, "Hunter2pw", "registry.example.com"},
	{"podman login -p", `podman login --username bob -p=Hunter2pw quay.io`, "Hunter2pw", "quay.io"},
	{"sshpass -p", `sshpass -p 'Hunter2pw' ssh bob@host uptime`, "Hunter2pw", "ssh bob@host"},
	{"sshpass -p joined", `sshpass -pHunter2pw ssh host`, "Hunter2pw", "ssh host"},
	{"htpasswd -b", `htpasswd -b /etc/nginx/.htpasswd bob Hunter2pw`, "Hunter2pw", "bob"},
	{"htpasswd -cb", `htpasswd -cbB .htpasswd bob Hunter2pw && nginx -s reload`, "Hunter2pw", "nginx -s reload"},
}

// Args is a call's arguments with secrets under secret names, in nested
// maps and in argument lists (warden.RedactArgs); ArgSecrets are the
// secrets in it. Each call returns a new map.
func Args() map[string]any {
	return map[string]any{
		"command":  "STRIPE_SECRET_KEY=rk_abc123 ./deploy",
		"password": "hunter2",
		"headers":  map[string]any{"Authorization": "Bearer xyz", "Accept": "json"},
		"env":      map[string]any{"API_TOKEN": "t0k3n", "HOME": "/root"},
		"argv":     []any{"bash", "-lc", "export OPENAI_API_KEY=sk-abcdefghijklmnopqrstu"},
		"n":        3,
		"token":    "",
	}
}

// ArgSecrets are the secrets Args holds.
var ArgSecrets = []string{"rk_abc123", "hunter2", "xyz", "t0k3n", "sk-abcdefghijklmnopqrstu"}

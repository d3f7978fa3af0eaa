package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/warden-run/warden"
)

// The third red-team pass: options of programs an allow-list rule names,
// which warden's tables (shell/progs) read otherwise than the programs
// do. Under progsPolicy every program is allowed by a plain rule and any
// file may be written or removed except the protected and private ones:
// each finding was allowed before its fix; the cases marked "handled"
// were refused already (some only because the old table did not know an
// option) and guard the new entries. The "allow" cases keep the common
// forms allowed. checkSoundPolicy's workspace holds src/a.go,
// .env, src/.env, .git/config, .git/hooks/ and src/hooks, a link to
// .git/hooks.

const progsPolicy = `version: 1
default: {safe: allow, destructive: deny}
protected: [".git/**"]
private: ["**/.env"]
rules:
  - id: allow
    effect: allow
    tool: shell
    command: ["sed *", "tar *", "awk *", "xxd *", "curl *", "wget *", "find *", "grep *", "less *", "more *"]
  - id: edit
    effect: allow
    tool: [write, edit, delete]
    path: ["**"]
`

func checkProgs(t *testing.T, cases []soundCase) {
	t.Helper()
	checkSoundPolicy(t, progsPolicy, cases)
}

// sed's script however its option is spelled: clustered with other short
// options, abbreviated, or read from a file.
func TestRedteam3SedScript(t *testing.T) {
	t.Parallel()
	checkProgs(t, []soundCase{
		// Findings.
		{"sed -ne e command", sh("sed -ne '1e touch x' pkg/app/x"), "notAllow"},
		{"sed -se e command", sh("sed -se '1e touch x' pkg/app/x"), "notAllow"},
		{"sed -Ee e command", sh("sed -Ee '1e touch x' pkg/app/x"), "notAllow"},
		{"sed --expr VALUE", sh("sed --expr 'e id' pkg/app/x"), "notAllow"},
		{"sed --expr=", sh("sed --expr='e id' pkg/app/x"), "notAllow"},
		{"sed --e=", sh("sed --e='e id' pkg/app/x"), "notAllow"},
		{"sed -ne w .git/config", sh("sed -ne 'w .git/config' pkg/app/x"), "notAllow"},
		{"sed -nf script file", sh("sed -nf s.sed pkg/app/x"), "notAllow"},
		{"sed --fi= script file", sh("sed --fi=s.sed pkg/app/x"), "notAllow"},
		// Handled.
		{"handled: sed -e e command", sh("sed -e '1e touch x' pkg/app/x"), "notAllow"},
		{"handled: sed -f script file", sh("sed -f s.sed pkg/app/x"), "notAllow"},
		// Allowed.
		{"sed -n p", sh("sed -n p pkg/app/x"), "allow"},
		{"sed -ne p", sh("sed -ne 1p pkg/app/x"), "allow"},
		{"sed --expression=p", sh("sed --expression=1p pkg/app/x"), "allow"},
	})
}

// sed -i's backup, named by a suffix given in a cluster or an abbreviated
// option: the original is renamed to it.
func TestRedteam3SedBackup(t *testing.T) {
	t.Parallel()
	checkProgs(t, []soundCase{
		// Findings.
		{"sed -ni backup into .git/hooks", sh("sed -ni'.git/hooks/*' p pre-commit"), "deny"},
		{"sed -Ei backup into .git/hooks", sh("sed -Ei'.git/hooks/*' p pre-commit"), "deny"},
		{"sed --in= backup", sh("sed --in='.git/hooks/*' p pre-commit"), "deny"},
		{"sed --in-pl= backup", sh("sed --in-pl='.git/hooks/*' p pre-commit"), "deny"},
		{"sed -ni backup outside", sh("sed -ni'../*' p src/a.go"), "notAllow"},
		{"sed -ni backup in /tmp", sh("sed -ni'/tmp/*' p src/a.go"), "notAllow"},
		// Handled.
		{"handled: sed -i backup into .git/hooks", sh("sed -i'.git/hooks/*' p pre-commit"), "deny"},
		{"handled: sed --in-place= backup", sh("sed --in-place='.git/hooks/*' p pre-commit"), "deny"},
		// Allowed.
		{"sed -i.bak", sh("sed -i.bak s/a/b/ src/a.go"), "allow"},
		{"sed -ni.bak", sh("sed -ni.bak 1p src/a.go"), "allow"},
		{"sed -i", sh("sed -i 1d src/a.go"), "allow"},
	})
}

// tar's abbreviated modes, --remove-files, and remote archives.
func TestRedteam3Tar(t *testing.T) {
	t.Parallel()
	checkProgs(t, []soundCase{
		// Findings.
		{"tar --cre", sh("tar --cre --file=.git/config pkg/app"), "deny"},
		{"tar --creat", sh("tar --creat --file=.git/config pkg/app"), "deny"},
		{"tar --app", sh("tar --app --file=.git/config pkg/app"), "deny"},
		{"tar --upd", sh("tar --upd --file=.git/config pkg/app"), "deny"},
		{"tar --conc", sh("tar --conc --file=.git/config pkg/app"), "deny"},
		{"tar --dele", sh("tar --dele --file=.git/config x"), "deny"},
		{"handled: tar --fil abbreviated", sh("tar -c --fil .git/config pkg/app"), "deny"},
		{"tar --remove-files", sh("tar -cf x.tar --remove-files .git/hooks"), "deny"},
		{"tar --remove-f", sh("tar -cf x.tar --remove-f .git/hooks"), "deny"},
		{"tar remote archive", sh("tar -cf a:b pkg/app"), "notAllow"},
		{"tar --file= remote archive", sh("tar -c --file=host:x.tar pkg/app"), "notAllow"},
		// Handled.
		{"handled: tar --create", sh("tar --create --file=.git/config src"), "deny"},
		// Allowed.
		{"tar -cf", sh("tar -cf x.tar pkg/app"), "allow"},
		{"tar --create --file", sh("tar --create --file x.tar pkg/app"), "allow"},
		{"tar -tf", sh("tar -tf x.tar"), "allow"},
		{"tar --force-local", sh("tar --force-local -cf a:b pkg/app"), "allow"},
		{"tar --remove-files of a source file", sh("tar -cf x.tar --remove-files src/a.go"), "allow"},
	})
}

// awk's program however its option is spelled, and what a program can do
// that the text shows only indirectly.
func TestRedteam3Awk(t *testing.T) {
	t.Parallel()
	checkProgs(t, []soundCase{
		// Findings.
		{"awk --sou=", sh(`awk --sou='BEGIN{system("id")}'`), "notAllow"},
		{"awk -be", sh(`awk -be 'BEGIN{system("id")}'`), "notAllow"},
		{"awk -Pe", sh(`awk -Pe 'BEGIN{system("id")}'`), "notAllow"},
		{"awk -bf program file", sh("awk -bf prog.awk pkg/app/x"), "notAllow"},
		{"awk @load", sh(`awk '@load "./evil"; BEGIN{}'`), "notAllow"},
		{"awk @include", sh(`awk '@include "x"; BEGIN{}'`), "notAllow"},
		{"awk indirect call", sh(`awk 'BEGIN{f="sys" "tem"; @f("id")}'`), "notAllow"},
		{"awk ARGV reads .env", sh(`awk 'BEGIN{ARGV[1]=".e" "nv"; ARGC=2} {print}'`), "notAllow"},
		{"awk SYMTAB", sh(`awk 'BEGIN{SYMTAB["ARGC"]=2} {print}' pkg/app/x`), "notAllow"},
		// Handled.
		{"handled: awk system", sh(`awk 'BEGIN{system("id")}'`), "notAllow"},
		{"handled: awk -f", sh("awk -f prog.awk pkg/app/x"), "notAllow"},
		// Allowed.
		{"awk print", sh("awk '{print $1}' src/a.go"), "allow"},
		{"awk -F -e", sh("awk -F: -e '{print $1}' src/a.go"), "allow"},
		{"awk --source=", sh("awk --source='{print $1}' src/a.go"), "allow"},
	})
}

// grep -r narrowed by --include and --exclude only as grep narrows it.
func TestRedteam3GrepFilter(t *testing.T) {
	t.Parallel()
	checkProgs(t, []soundCase{
		// Findings.
		{"grep --include POSIX class", sh("grep -r --include='.en[[:alpha:]]' SECRET ."), "deny"},
		{"grep --include [!a]", sh("grep -r --include='[!a]env' SECRET ."), "deny"},
		{"grep --exclude after --", sh("grep -r -e SECRET -- --exclude=.env ."), "deny"},
		{"grep --exclude as a pattern", sh("grep -r -e --exclude=.env -e SECRET ."), "deny"},
		{"grep --exclude as the value of -f", sh("grep -r -f --exclude=.env ."), "deny"},
		// Handled.
		{"handled: grep -r", sh("grep -r SECRET ."), "deny"},
		{"handled: grep --include .env", sh("grep -r --include=.env SECRET ."), "deny"},
		// Allowed.
		{"grep --exclude=.env", sh("grep -r --exclude=.env SECRET ."), "allow"},
		{"grep --include=*.go", sh("grep -r --include='*.go' SECRET ."), "allow"},
		{"grep --exclude=?env", sh("grep -r --exclude='?env' SECRET ."), "allow"},
		{"grep --exclude= abbreviated --incl", sh("grep -r --incl='*.go' SECRET ."), "allow"},
	})
}

// xxd's operands: the second is the file written.
func TestRedteam3Xxd(t *testing.T) {
	t.Parallel()
	checkProgs(t, []soundCase{
		// Findings.
		{"xxd writes its second operand", sh("xxd src/a.go .git/hooks/pre-commit"), "deny"},
		{"handled: xxd -r", sh("xxd -r src/a.go .git/hooks/pre-commit"), "deny"},
		{"handled: xxd -ps", sh("xxd -ps src/a.go .git/hooks/pre-commit"), "deny"},
		{"handled: xxd -pc: one option a word", sh("xxd -pc src/a.go .git/hooks/pre-commit"), "deny"},
		{"handled: xxd --revert", sh("xxd --revert src/a.go .git/hooks/pre-commit"), "deny"},
		{"handled: xxd reads .env", sh("xxd -c 8 .env"), "deny"},
		// Allowed.
		{"xxd a file", sh("xxd src/a.go"), "allow"},
		{"xxd -c 8", sh("xxd -c 8 -g 1 src/a.go"), "allow"},
		{"xxd -c8", sh("xxd -c8 src/a.go"), "allow"},
		{"xxd -ps", sh("xxd -ps src/a.go"), "allow"},
		{"xxd -r -p into a source file", sh("xxd -r -p src/x.hex src/x.bin"), "allow"},
		{"xxd -r from the input", sh("xxd -r - src/x.bin"), "allow"},
	})
}

// Downloads whose file names the server, a file or a glob decide.
func TestRedteam3DownloadNames(t *testing.T) {
	t.Parallel()
	checkProgs(t, []soundCase{
		// Findings.
		{"curl -OJ", sh("curl -OJ https://x/a"), "notAllow"},
		{"curl -O -J", sh("curl -O -J https://x/a"), "notAllow"},
		{"curl -O --remote-header-name", sh("curl -O --remote-header-name https://x/a"), "notAllow"},
		{"curl -O of a glob", sh("curl -O 'https://x/{warden.yaml,a}'"), "notAllow"},
		{"curl -o #1 of a glob", sh("curl -o '#1' 'https://x/{warden.yaml,a}'"), "notAllow"},
		{"curl -O --url", sh("curl -O --url https://x/warden.yaml"), "deny"},
		{"curl -O of a URL without a scheme", sh("curl -O x.com/warden.yaml"), "deny"},
		{"wget -i", sh("wget -i urls.txt"), "notAllow"},
		{"wget --input-file", sh("wget --input-file=urls.txt"), "notAllow"},
		{"wget --input abbreviated", sh("wget --input urls.txt"), "notAllow"},
		{"wget -i -P", sh("wget -i urls.txt -P dl"), "notAllow"},
		{"handled: wget -i --content-disposition", sh("wget -i urls.txt --content-disposition"), "notAllow"},
		// Handled.
		{"handled: wget --content-disposition", sh("wget --content-disposition https://x/a"), "notAllow"},
		{"handled: curl -O of the policy", sh("curl -O https://x/warden.yaml"), "deny"},
		// Allowed.
		{"curl -O", sh("curl -O https://x/a"), "allow"},
		{"curl -g -O", sh("curl -g -O 'https://x/a[1]'"), "allow"},
		{"curl -o", sh("curl -o out.txt https://x/a"), "allow"},
		{"wget", sh("wget https://x/a"), "allow"},
		{"wget -i -O", sh("wget -i urls.txt -O out.txt"), "allow"},
	})
}

// find -L and -follow delete through the links of the folders they walk
// (lk/hooks leads to .git/hooks; lk holds nothing protected).
func TestRedteam3FindFollowDelete(t *testing.T) {
	t.Parallel()
	e, dir := newEngine(t, progsPolicy)
	os.MkdirAll(filepath.Join(dir, ".git/hooks"), 0o755)
	os.WriteFile(filepath.Join(dir, ".git/hooks/pre-commit.sample"), []byte("x\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "lk"), 0o755)
	os.Symlink("../.git/hooks", filepath.Join(dir, "lk/hooks"))
	for _, c := range []struct{ cmd, want string }{
		// Findings.
		{"find -L lk -name '*.sample' -delete", "notAllow"},
		{"find lk -follow -name '*.sample' -delete", "notAllow"},
		// Handled.
		{"find -L lk -name '*.sample' -exec rm {} +", "notAllow"},
		{"find -H lk/hooks -name '*.sample' -delete", "notAllow"},
		// Allowed: without -L the link itself is what find sees.
		{"find lk -name '*.sample' -delete", "allow"},
		{"find -L lk -name '*.sample'", "allow"},
	} {
		d := e.Decide(sh(c.cmd), nil).Decision
		if ok := (d.Decision == warden.Allow) == (c.want == "allow"); !ok {
			t.Errorf("%s: %s %s (%s), want %s", c.cmd, d.Decision, d.Code, d.Reason, c.want)
		}
	}
}

// less's + commands and -p patterns are typed as keys: ! and | run
// programs, s writes a file, :e reads another.
func TestRedteam3LessCommands(t *testing.T) {
	t.Parallel()
	checkProgs(t, []soundCase{
		// Findings.
		{"less +!", sh("less '+!touch x\nq' src/a.go"), "notAllow"},
		{"less ++!", sh("less '++!touch x' src/a.go"), "notAllow"},
		{"less +|", sh("less '+|touch x' src/a.go"), "notAllow"},
		{"less +s log file", sh("less '+sout.log\nq' src/a.go"), "notAllow"},
		{"less +:e .env", sh("less '+:e .env' src/a.go"), "notAllow"},
		{"less +/ then !", sh("less '+/x\n!touch x\nq' src/a.go"), "notAllow"},
		{"less -p with a newline", sh("less -p 'x\n!touch x\nq' src/a.go"), "notAllow"},
		{"handled: less --pattern with a newline", sh("less --pattern='x\n!id' src/a.go"), "notAllow"},
		{"more +!", sh("more '+!touch x' src/a.go"), "notAllow"},
		{"more -p takes no value", sh("more -p .env"), "deny"},
		// Allowed.
		{"less", sh("less src/a.go"), "allow"},
		{"less +G", sh("less +G src/a.go"), "allow"},
		{"less +100", sh("less +100 src/a.go"), "allow"},
		{"less +/pattern", sh("less '+/func main' src/a.go"), "allow"},
		{"less -p", sh("less -N -p 'func main' src/a.go"), "allow"},
		{"more +/pattern", sh("more -p '+/func main' src/a.go"), "allow"},
	})
}

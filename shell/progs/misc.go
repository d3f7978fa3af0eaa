package progs

import (
	"net/url"
	"path"
	"strings"
)

// findutils 4.9.0, GNU tar 1.34, curl 7.88.1, GNU Wget 1.21.3, OpenSSH 9.2,
// rsync 3.2.7, Docker 2x, kubectl 1.3x, and the wrappers of coreutils 9.1
// and sudo 1.9 (Debian 12).

func initMisc() {
	register(
		// find's expression words are single-dash word options. -exec and
		// friends are read by the shell package (the command they run is a
		// part of its own); -fprint and friends write; -delete removes.
		&Spec{Name: "find", Source: "GNU findutils 4.9.0 (Debian 12), find --help and man find; with -L or -follow, -delete removes files through the links of the folders walked", Operands: "L...",
			Opts: "-H -L -P -D= -O0 -O1 -O2 -O3 " +
				"-d -depth -follow -help -ignore_readdir_race -maxdepth= -mindepth= -mount -noignore_readdir_race -noleaf -regextype= -version -warn -nowarn -xdev -daystart " +
				"-amin= -anewer=L -atime= -cmin= -cnewer=L -ctime= -empty -executable -false -fstype= -gid= -group= -ilname= -iname= -inum= -ipath= -iregex= -iwholename= -links= -lname= -mmin= -mtime= -name= -newer=L -newerXY= -neweraa= -newerat= -newerac= -newerma= -newermt= -newermm= -newerct= -nogroup -nouser -path= -perm= -readable -regex= -samefile=L -size= -true -type= -uid= -used= -user= -wholename= -writable -xtype= -context= " +
				"-delete -exec=Y -execdir=Y -ok=Y -okdir=Y -fls=W -fprint=W -fprint0=W -fprintf=W -ls -print -print0 -printf= -prune -quit -not -and -or -a -o -files0-from=R",
			Special: findSpecial},
		&Spec{Name: "xargs", Source: "GNU findutils 4.9.0 (Debian 12), xargs --help and xargs.c (getopt \"+0a:E:e::i::I:l::L:n:prs:txP:d:\": -e, -i and -l take a value only attached)", Style: "posix", Operands: "X -...", Rest: 1, Special: wrapperOpts,
			Opts: "-0|--null -a=R|--arg-file=R -d=|--delimiter= -E= -e[=]|--eof[=] -I= -i[=]|--replace[=] -L=|--max-lines= -l[=] -n=|--max-args= -o|--open-tty -P=|--max-procs= -p|--interactive --process-slot-var= -r|--no-run-if-empty -s=|--max-chars= --show-limits -t|--verbose -x|--exit --help --version"},
		&Spec{Name: "tar", Source: "GNU tar 1.34 (Debian 12), tar --help and info tar (TAR_OPTIONS holds options read before the command line's; TAPE names the archive when -f does not; long options may be abbreviated (--cre, --app); --remove-files removes what is archived; an archive HOST:FILE is remote unless --force-local)", Operands: "-...", Special: tarSpecial,
			Env: "TAR_OPTIONS=Ftar TAPE=!",
			Opts: "-A|--catenate|--concatenate -c|--create -d|--diff|--compare --delete -r|--append -t|--list --test-label -u|--update -x|--extract|--get:E " +
				"-C=C|--directory=C -f=|--file= -z|--gzip|--gunzip|--ungzip -j|--bzip2 -J|--xz --lzip --lzma --lzop --zstd -Z|--compress|--uncompress -a|--auto-compress -I=X|--use-compress-program=X " +
				"-v|--verbose -k|--keep-old-files --keep-newer-files --keep-directory-symlink --skip-old-files --overwrite --overwrite-dir --recursive-unlink --remove-files --no-overwrite-dir -U|--unlink-first -O|--to-stdout --to-command=S --ignore-command-error --no-ignore-command-error " +
				"-p|--preserve-permissions|--same-permissions --no-same-permissions --same-owner --no-same-owner --numeric-owner --owner= --group= --mode= --mtime= --atime-preserve[=] --delay-directory-restore --no-delay-directory-restore -m|--touch --sort= --format= -H= --posix -V=|--label= -W|--verify --exclude= --exclude-from=R -X=R --exclude-vcs --exclude-vcs-ignores --exclude-caches --exclude-backups --anchored --no-anchored --wildcards --no-wildcards --wildcards-match-slash --ignore-case --no-ignore-case " +
				"-T=R|--files-from=R --null --no-null --unquote --no-unquote -P|--absolute-names -h|--dereference --hard-dereference -l|--check-links --one-file-system --strip-components= --transform=|--xform= -S|--sparse --sparse-version= -b=|--blocking-factor= -B|--read-full-records -i|--ignore-zeros -M|--multi-volume -L=|--tape-length= -F=X|--info-script=X|--new-volume-script=X --rsh-command=X --rmt-command=X --force-local --checkpoint[=] --checkpoint-action=! --totals[=] --show-transformed-names --show-stored-names --show-defaults --show-omitted-dirs --index-file=W --no-recursion --recursion -N=|--newer=|--after-date= --newer-mtime= --backup[=] --suffix= -w|--interactive|--confirmation -g=W|--listed-incremental=W -G|--incremental --level= --warning= -R|--block-number -K=|--starting-file= --utc --full-time -s|--preserve-order --quoting-style= --quote-chars= --no-quote-chars --acls --no-acls --xattrs --no-xattrs --selinux --no-selinux --xattrs-include= --xattrs-exclude= --help --usage --version -?"},

		&Spec{Name: "curl", Source: "curl 7.88.1 (Debian 12), curl --help all and man curl; CURL_HOME and HOME hold .curlrc, which can set any option; a URL's scheme is read without case, file:/PATH and file://HOST/PATH read PATH after %XX decoding, {a,b} and [a-z] are globs unless -g; --data-urlencode NAME@FILE and -w @FILE read FILE; -O names each file after its URL (a glob's matches; http when the scheme is left out), -J after the server's Content-Disposition, and -o FILE's #N is the Nth glob's match", Operands: "-...", Special: curlSpecial, EnvPrefix: "CURL_", Env: "CURL_HOME=!",
			Opts: "-o=W|--output=W --output-dir=C -O|--remote-name:U --remote-name-all:U -J|--remote-header-name:U -D=W|--dump-header=W -c=W|--cookie-jar=W --trace=W --trace-ascii=W --stderr=W --libcurl=W -K=!|--config=! -q|--disable --create-dirs --create-file-mode= -T=R|--upload-file=R -b=|--cookie= " +
				"-s|--silent -S|--show-error -f|--fail --fail-with-body --fail-early -L|--location --max-redirs= -v|--verbose -i|--include -I|--head -X=|--request= -H=@|--header=@ -d=@|--data=@ --data-raw= --data-binary=@ --data-ascii=@ --data-urlencode= --json=@ -F=@|--form=@ --form-string= -G|--get -u=|--user= -A=|--user-agent= -e=|--referer= -k|--insecure --cacert=R --capath=R -E=|--cert= --cert-type= --key=R --key-type= --pass= --compressed -m=|--max-time= --connect-timeout= --retry= --retry-delay= --retry-max-time= --retry-all-errors --retry-connrefused -w=@|--write-out=@ -x=|--proxy= --noproxy= -U=|--proxy-user= --http1.1 --http2 --http1.0 --http3 -4|--ipv4 -6|--ipv6 -#|--progress-bar --no-progress-meter -Z|--parallel --parallel-max= --resolve= --connect-to= -r=|--range= -C=|--continue-at= -z=|--time-cond= -n|--netrc --netrc-file=R --netrc-optional --oauth2-bearer= --basic --digest --negotiate --ntlm --anyauth --tlsv1.2 --tlsv1.3 --ssl --ssl-reqd --url= --path-as-is -N|--no-buffer --raw --tcp-nodelay -l|--list-only -a|--append -Q=|--quote= -y=|--speed-time= -Y=|--speed-limit= --limit-rate= -g|--globoff -h|--help -V|--version -M|--manual"},
		&Spec{Name: "wget", Source: "GNU Wget 1.21.3 (Debian 12), wget --help and man wget; WGETRC and SYSTEM_WGETRC name startup files that can set any option; --default-page names the file a URL ending in / is saved as, --content-disposition saves under the server's name, -i FILE downloads the URLs FILE lists under their names", Operands: "U...", Special: wgetSpecial, EnvPrefix: "WGET", Env: "WGETRC=! SYSTEM_WGETRC=!",
			Opts: "-V|--version -h|--help -b|--background -e=!|--execute=! -o=W|--output-file=W -a=W|--append-output=W -d|--debug -q|--quiet -v|--verbose -nv|--no-verbose --report-speed= -i=R|--input-file=R -F|--force-html -B=|--base= --config=! --no-config --rejected-log=W " +
				"-t=|--tries= --retry-connrefused --retry-on-host-error --retry-on-http-error= -O=W|--output-document=W -nc|--no-clobber --no-netrc -c|--continue --start-pos= --progress= --show-progress -N|--timestamping --no-if-modified-since --no-use-server-timestamps -S|--server-response --spider -T=|--timeout= --dns-timeout= --connect-timeout= --read-timeout= -w=|--wait= --waitretry= --random-wait --no-proxy -Q=|--quota= --bind-address= --limit-rate= --no-dns-cache --restrict-file-names= --ignore-case -4|--inet4-only -6|--inet6-only --prefer-family= --user= --password= --ask-password --use-askpass=X --no-iri --local-encoding= --remote-encoding= --unlink " +
				"-nd|--no-directories -x|--force-directories -nH|--no-host-directories --protocol-directories -P=C|--directory-prefix=C --cut-dirs= --default-page= -E|--adjust-extension --http-user= --http-password= --no-http-keep-alive --no-cache --no-cookies --load-cookies=R --save-cookies=W --keep-session-cookies --ignore-length --header= --compression= --max-redirect= --proxy-user= --proxy-password= --referer= --save-headers -U=|--user-agent= --content-disposition --content-on-error --auth-no-challenge --post-data= --post-file=R --method= --body-data= --body-file=R " +
				"--secure-protocol= --https-only --no-check-certificate --certificate=R --certificate-type= --private-key=R --private-key-type= --ca-certificate=R --ca-directory=R --crl-file=R --pinnedpubkey= --random-file=R --egd-file=R --ciphers= --hsts-file=W --no-hsts --warc-file=W --warc-header= --warc-max-size= --warc-cdx --warc-dedup=R --no-warc-compression --no-warc-digests --no-warc-keep-log --warc-tempdir=W " +
				"-r|--recursive -l=|--level= --delete-after -k|--convert-links --convert-file-only --backups= -K|--backup-converted -m|--mirror -p|--page-requisites --strict-comments -A=|--accept= -R=|--reject= --accept-regex= --reject-regex= --regex-type= -D=|--domains= --exclude-domains= --follow-ftp --follow-tags= --ignore-tags= -H|--span-hosts -L|--relative -I=|--include-directories= -X=|--exclude-directories= -np|--no-parent"},
		// ssh runs a command on another machine; -o options such as
		// ProxyCommand and LocalCommand run programs here. The remote
		// command is the first operand after the host.
		&Spec{Name: "ssh", Source: "OpenSSH 9.2 (Debian 12), man ssh, man ssh_config and ssh.c (after the host, options are read again up to the command: ssh HOST -oProxyCommand=CMD)", Style: "posix", OptsUntil: 2, Operands: "- -...", Special: sshSpecial,
			Opts: "-4 -6 -A -a -C -f -G -g -K -k -M -N -n -q -s -T -t -V -v -X -x -Y -B= -b= -c= -D= -E=W -e= -F=! -I=! -i=R -J= -L= -l= -m= -O= -o=! -P= -p= -Q= -R= -S=W -W= -w="},
		&Spec{Name: "scp", Source: "OpenSSH 9.2 (Debian 12), man scp (a source HOST:PATH is copied into the destination folder under PATH's last name, and with -r the files below it are named by the other machine)", Operands: "R... W", Special: remoteSources,
			Opts: "-3 -4 -6 -A -B -C -O -p -q -R -r -s -T -v -c= -D=! -F=! -i=R -J= -l= -o=! -P= -S=X -X="},
		&Spec{Name: "rsync", Source: "rsync 3.2.7 (Debian 12), rsync --help and man rsync (ENVIRONMENT VARIABLES: RSYNC_RSH and RSYNC_CONNECT_PROG run programs; -M passes options to the receiving rsync, which is local in a local copy; --delete and friends remove what the source lacks from the destination)", Operands: "R... W", Special: rsyncSpecial,
			EnvPrefix: "RSYNC_", Env: "RSYNC_RSH=S RSYNC_CONNECT_PROG=S RSYNC_SHELL=X RSYNC_PARTIAL_DIR=! RSYNC_PROXY RSYNC_PASSWORD RSYNC_OLD_ARGS RSYNC_PROTECT_ARGS RSYNC_ICONV RSYNC_COMPRESS_LIST RSYNC_CHECKSUM_LIST RSYNC_MAX_ALLOC",
			Opts: "-v|--verbose --info= --debug= --stderr= -q|--quiet --no-motd -c|--checksum -a|--archive --no-OPTION -r|--recursive -R|--relative --no-implied-dirs -b|--backup --backup-dir=W --suffix= -u|--update --inplace --append --append-verify -d|--dirs --old-dirs -l|--links -L|--copy-links --copy-unsafe-links --safe-links --munge-links -k|--copy-dirlinks -K|--keep-dirlinks -H|--hard-links -p|--perms -E|--executability --chmod= -A|--acls -X|--xattrs -o|--owner -g|--group --devices --copy-devices --write-devices --specials -D -t|--times -U|--atimes --open-noatime -N|--crtimes -O|--omit-dir-times -J|--omit-link-times --super --fake-super -S|--sparse --preallocate -n|--dry-run -W|--whole-file --checksum-choice= --cc= -x|--one-file-system -B=|--block-size= -e=X|--rsh=X --rsync-path=! --existing --ignore-existing --remove-source-files:D --del --delete --delete-before --delete-during --delete-delay --delete-after --delete-excluded --ignore-missing-args --delete-missing-args --ignore-errors --force --max-delete= --max-size= --min-size= --max-alloc= --partial --partial-dir= --delay-updates -m|--prune-empty-dirs --numeric-ids --usermap= --groupmap= --chown= --timeout= --contimeout= -I|--ignore-times --size-only -@=|--modify-window= -T=W|--temp-dir=W -y|--fuzzy --compare-dest=R --copy-dest=R --link-dest=R -z|--compress --compress-choice= --zc= --compress-level= --zl= --skip-compress= -C|--cvs-exclude -f=|--filter= -F --exclude= --exclude-from=R --include= --include-from=R --files-from=R -0|--from0 --old-args --secluded-args -s --trust-sender --copy-as= --address= --port= --sockopts= --blocking-io --outbuf= --stats -8|--8-bit-output -h|--human-readable --progress -P -i|--itemize-changes -M=!|--remote-option=! --out-format= --log-file=W --log-file-format= --password-file=R --early-input=R --list-only --bwlimit= --stop-after= --stop-at= --fsync --write-batch=W --only-write-batch=W --read-batch=R --protocol= --iconv= --checksum-seed= -4|--ipv4 -6|--ipv6 -V|--version -h|--help"},

		// Container and cluster tools: the rule for docker run or kubectl
		// exec vouches for what runs inside; options that mount or change
		// the host are listed as unsafe.
		&Spec{Name: "docker podman", Source: "Docker 2x (docker --help, docker run --help), Podman 4.3", SubsOnly: true, EnvPrefix: "DOCKER_ CONTAINERS_",
			Opts: "--config=! -c=|--context= -D|--debug -H=|--host= -l=|--log-level= --tls --tlscacert=R --tlscert=R --tlskey=R --tlsverify -v|--version -h|--help",
			Env:  "DOCKER_HOST=! DOCKER_CONTEXT DOCKER_CONFIG=! DOCKER_BUILDKIT DOCKER_DEFAULT_PLATFORM",
			Subs: []*Spec{
				{Name: "ps", Opts: "-a|--all -f=|--filter= --format= -n=|--last= -l|--latest --no-trunc -q|--quiet -s|--size", Operands: ""},
				{Name: "images", Opts: "-a|--all --digests -f=|--filter= --format= --no-trunc -q|--quiet", Operands: "-..."},
				{Name: "logs", Opts: "--details -f|--follow --since= -n=|--tail= -t|--timestamps --until=", Operands: "-"},
				{Name: "inspect", Opts: "-f=|--format= -s|--size --type=", Operands: "-..."},
				{Name: "version info", Opts: "-f=|--format=", Operands: ""},
				{Name: "pull", Opts: "-a|--all-tags --disable-content-trust --platform= -q|--quiet", Operands: "-"},
				{Name: "build", Opts: "--add-host= --build-arg= --build-context=! --cache-from= --cache-to= --cgroup-parent= -f=R|--file=R --iidfile=W --label= --load --network= --no-cache --platform= --progress= --pull --push -q|--quiet --secret=! --ssh=! -t=|--tag= --target= -o=!|--output=!", Operands: "R"},
				{Name: "run", Rest: 1, Opts: "-d|--detach -i|--interactive -t|--tty --rm --name= -e=|--env= --env-file=R -p=|--publish= -P|--publish-all -w=|--workdir= -u=|--user= --network= --platform= --pull= --entrypoint= -l=|--label= --init -m=|--memory= --cpus= --read-only --restart= -h=|--hostname= --add-host= -v=!|--volume=! --mount=! --privileged:X --cap-add=! --device=! --pid=! --ipc=! --userns=! --security-opt=! --cidfile=W", Operands: "- -..."},
				{Name: "exec", Rest: 1, Opts: "-d|--detach -e=|--env= --env-file=R -i|--interactive --privileged:X -t|--tty -u=|--user= -w=|--workdir=", Operands: "- -..."},
				{Name: "stop start restart kill rm rmi pause unpause", Opts: "-t=|--time= -s=|--signal= -f|--force -v|--volumes -a|--attach -i|--interactive", Operands: "-..."},
				{Name: "compose", SubsOnly: true, Opts: "-f=R|--file=R -p=|--project-name= --profile= --env-file=R --project-directory=C", Subs: []*Spec{
					{Name: "ps config ls images", Opts: "-a|--all -q|--quiet --format= --services", Operands: "-..."},
					{Name: "logs", Opts: "-f|--follow -t|--timestamps --tail= --since= --no-color", Operands: "-..."},
					{Name: "up", Opts: "-d|--detach --build --no-build --force-recreate --no-deps --remove-orphans --wait -V|--renew-anon-volumes --pull=", Operands: "-..."},
					{Name: "down stop restart", Opts: "-v|--volumes --remove-orphans --rmi= -t=|--timeout=", Operands: "-..."},
					{Name: "build pull", Opts: "--no-cache --pull -q|--quiet", Operands: "-..."},
				}},
			}},
		&Spec{Name: "kubectl", Source: "kubectl 1.3x (kubectl --help, kubectl options)", SubsOnly: true, Inherit: true, EnvPrefix: "KUBE",
			Opts: "-n=|--namespace= --context= --cluster= --user= --kubeconfig=! --token= --as=! --as-group=! --insecure-skip-tls-verify --request-timeout= -v= -h|--help -A|--all-namespaces -o=|--output= -l=|--selector= --field-selector= -w|--watch --show-labels --no-headers -f=R|--filename=R -R|--recursive -c=|--container= --tail= --since= --previous -p -i|--stdin -t|--tty --dry-run= --force --grace-period= --timeout= --sort-by= --template= -k=R|--kustomize=R -s=|--server=",
			Env:  "KUBECONFIG=!",
			Subs: []*Spec{
				{Name: "get describe logs top explain api-resources api-versions version cluster-info diff", Operands: "-..."},
				{Name: "apply create delete replace patch edit scale rollout label annotate", Operands: "-...", Opts: "--replicas= --current-replicas= --resource-version= --overwrite --all"},
				{Name: "exec", Operands: "- -...", Rest: 1},
				{Name: "port-forward", Operands: "-..."},
				{Name: "cp", Operands: "R W"},
				{Name: "config", Operands: "-..."},
			}},

		// Wrappers: the command they run is read by the shell package and is
		// a part of its own; the entries list the wrappers' own options.
		&Spec{Name: "env", Source: "GNU coreutils 9.1 (Debian 12), env --help", Style: "posix", Operands: "X -...", Rest: 1, Special: wrapperOpts,
			Opts: "-a=|--argv0= -i|--ignore-environment -0|--null -u=|--unset= -C=C|--chdir=C -S=S|--split-string=S --block-signal[=] --default-signal[=] --ignore-signal[=] --list-signal-handling -v|--debug --help --version"},
		&Spec{Name: "sudo", Source: "sudo 1.9.13 (Debian 12), sudo --help", Style: "posix", Operands: "X -...", Rest: 1, Special: wrapperOpts,
			Opts: "-A|--askpass -b|--background -B|--bell -C=|--close-from= -D=C|--chdir=C -E|--preserve-env[=] -e|--edit -g=|--group= -H|--set-home -h=|--host= -i|--login -K|--remove-timestamp -k|--reset-timestamp -l|--list -n|--non-interactive -P|--preserve-groups -p=|--prompt= -R=C|--chroot=C -r=|--role= -S|--stdin -s|--shell -t=|--type= -T=|--command-timeout= -U=|--other-user= -u=|--user= -V|--version -v|--validate -h|--help"},
		&Spec{Name: "timeout", Source: "GNU coreutils 9.1 (Debian 12), timeout --help", Style: "posix", Operands: "- X -...", Rest: 2, Special: wrapperOpts,
			Opts: "--preserve-status --foreground -k=|--kill-after= -s=|--signal= -v|--verbose --help --version"},
		&Spec{Name: "nice", Source: "GNU coreutils 9.1 (Debian 12), nice --help", Style: "posix", Operands: "X -...", Rest: 1, Special: wrapperOpts, Digits: true,
			Opts: "-n=|--adjustment= --help --version"},
		&Spec{Name: "nohup", Source: "GNU coreutils 9.1 (Debian 12), nohup --help", Style: "posix", Operands: "X -...", Rest: 1, Special: wrapperOpts,
			Opts: "--help --version"},
		&Spec{Name: "stdbuf", Source: "GNU coreutils 9.1 (Debian 12), stdbuf --help", Style: "posix", Operands: "X -...", Rest: 1, Special: wrapperOpts,
			Opts: "-i=|--input= -o=|--output= -e=|--error= --help --version"},
		// busybox and toybox run the applet named by their first operand;
		// the shell package reads the applet as a command of its own.
		&Spec{Name: "busybox toybox", Source: "BusyBox 1.35 (Debian 12), busybox --help", Style: "posix", Operands: "X -...", Rest: 1,
			Opts: "--list --list-full --install --help"},
	)
}

// findSpecial: -delete removes the starting points recursively. With -L
// or -follow find walks through the links of the folders it reads, and
// -delete removes files wherever they lead (find -L src -delete with
// src/lnk leading to .git/hooks empties .git/hooks): warden does not look
// for such links, so the call is not vouched for.
//
// find ends the command of -exec and -execdir at ";", or at "+" only right
// after a word holding "{}" (find -exec rm -rf + .git ";" runs rm -rf +
// .git), and that of -ok and -okdir at ";" alone; the shell package reads
// it so. A "+" after a computed word may or may not end it: not vouched
// for. Without a starting point find walks "." (find -name x -delete), and
// with -files0-from it walks the folders that file names.
func findSpecial(r *Result, args []string) {
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a != "-exec" && a != "-execdir" && a != "-ok" && a != "-okdir" {
			continue
		}
		for j := i + 2; j < len(args) && args[j] != ";"; j++ {
			if args[j] == "+" && (a == "-exec" || a == "-execdir") && IsDyn(args[j-1]) {
				r.risk("find %s takes a + after a word computed at run time (%s), which may or may not end its command", a, args[j-1][1:])
				break
			}
		}
	}
	for _, f := range r.Flags {
		if f == "-delete" {
			if hasFlag(r, "-L", "-follow") {
				r.risk("find -L (or -follow) with -delete removes files through the links of the folders it walks, wherever they lead")
			}
			if v := r.Values("-files0-from"); len(v) > 0 {
				r.Effects = append(r.Effects, Effect{Arg: Delete, Val: "\x00(the folders " + strings.TrimPrefix(v[0], "\x00") + " names)", Via: "find -delete"})
			}
			starts := 0
			for _, op := range r.Ops {
				if op == "!" || op == "(" || op == ")" || op == "," {
					break // the expression has begun
				}
				starts++
				r.Effects = append(r.Effects, Effect{Arg: Delete, Val: op, Via: "find -delete"})
			}
			if starts == 0 && len(r.Values("-files0-from")) == 0 {
				r.Effects = append(r.Effects, Effect{Arg: Delete, Val: ".", Via: "find -delete"})
			}
			return
		}
	}
}

// tarSpecial: the archive named by -f is written when tar creates or
// updates one, and read otherwise; extraction writes files the archive
// names (computed). The modes and the archive are taken from the options
// as Parse read them (--cre, --app, --fil= are abbreviations). With
// --remove-files the files archived are removed. An archive name with a
// ":" before any "/" is HOST:FILE on another machine, reached through rsh
// or ssh, unless --force-local.
func tarSpecial(r *Result, args []string) {
	create := hasFlag(r, "-c", "-r", "-u", "-A", "--delete")
	archive := ""
	if v := r.Values("-f"); len(v) > 0 {
		archive = v[len(v)-1]
	}
	letters := ""
	lists := r.Values("-T")
	if w := args[1:]; len(w) > 0 && len(w[0]) > 0 && w[0][0] != '-' && !IsDyn(w[0]) {
		letters = w[0]
		// Old style: tar cf ARCHIVE ... (the first word is the options;
		// each letter that takes a value takes the next word in turn:
		// tar cfI x.tar PROG runs PROG as the compressor).
		k := 2
		val := func() string {
			if k < len(args) {
				k++
				return args[k-1]
			}
			return ""
		}
		for j := 0; j < len(w[0]); j++ {
			switch w[0][j] {
			case 'c', 'r', 'u', 'A':
				create = true
			case 'x':
				r.Effects = append(r.Effects, Effect{Flag: Extract, Via: "tar x"})
			case 'f':
				archive = val()
			case 'I', 'F':
				r.risk("option %c of tar runs a program (%s)", w[0][j], strings.TrimPrefix(val(), "\x00"))
			case 'C':
				r.Effects = append(r.Effects, Effect{Arg: Dir, Val: val(), Via: "tar C"})
			case 'T', 'X':
				v := val()
				r.Effects = append(r.Effects, Effect{Arg: Read, Val: v, Via: "tar " + string(w[0][j])})
				if w[0][j] == 'T' {
					lists = append(lists, v)
				}
			case 'g':
				r.Effects = append(r.Effects, Effect{Arg: Write, Val: val(), Via: "tar g"})
			case 'b', 'H', 'K', 'L', 'N', 'V':
				val()
			}
		}
	}
	if archive != "" && archive != "-" {
		a := Read
		if create {
			a = Write
		}
		r.Effects = append(r.Effects, Effect{Arg: a, Val: archive, Via: "tar -f"})
		if i := strings.IndexByte(archive, ':'); i > 0 && !strings.Contains(archive[:i], "/") && !hasFlag(r, "--force-local") {
			r.risk("tar -f %s names an archive on another machine (HOST:FILE), reached through a remote shell", strings.TrimPrefix(archive, "\x00"))
		}
	}
	if create {
		r.Tree = true
		r.Follow = hasFlag(r, "-h")
		remove := hasFlag(r, "--remove-files")
		// -T F (--files-from): the files F names are archived (and
		// removed): paths warden cannot see.
		for _, l := range lists {
			names := "\x00(the files " + strings.TrimPrefix(l, "\x00") + " names)"
			r.Effects = append(r.Effects, Effect{Arg: Read, Val: names, Via: "tar"})
			if remove {
				r.Effects = append(r.Effects, Effect{Arg: Delete, Val: names, Via: "tar --remove-files"})
			}
		}
		for _, op := range r.Ops {
			if op != archive {
				r.Effects = append(r.Effects, Effect{Arg: Read, Val: op, Via: "tar"})
				if remove && op != letters {
					r.Effects = append(r.Effects, Effect{Arg: Delete, Val: op, Via: "tar --remove-files"})
				}
			}
		}
	}
}

// curlSpecial: -O writes each URL's last path segment in the output folder.
func curlSpecial(r *Result, args []string) {
	// A file: URL reads a local file.
	globs := !hasFlag(r, "-g")
	for _, op := range append(r.Ops, r.Values("--url")...) {
		if p, ok := fileURL(op, globs); ok {
			r.Effects = append(r.Effects, Effect{Arg: Read, Val: p, Via: "curl file://"})
		}
	}
	// --data-urlencode NAME@FILE and @FILE send FILE's content.
	for _, v := range r.Values("--data-urlencode") {
		if i := strings.IndexByte(v, '@'); i >= 0 && !strings.Contains(v[:i], "=") {
			r.Effects = append(r.Effects, Effect{Arg: Read, Val: v[i+1:], Via: "--data-urlencode"})
		} else if IsDyn(v) {
			r.risk("option --data-urlencode of curl is computed at run time and could name a file to send")
		}
	}
	// -b/--cookie names a file to read when its value has no "=", however
	// the option is written (-b.env, -sb .env).
	for _, v := range r.Values("-b") {
		if !strings.Contains(v, "=") {
			r.Effects = append(r.Effects, Effect{Arg: Read, Val: v, Via: "-b"})
		}
	}
	// -E/--cert CERT[:PASSWORD] reads CERT (a colon in its name is
	// escaped with a backslash).
	for _, v := range r.Values("-E") {
		r.Effects = append(r.Effects, Effect{Arg: Read, Val: v, Via: "--cert"})
		if i := strings.IndexByte(v, ':'); i > 0 && !IsDyn(v) {
			r.Effects = append(r.Effects, Effect{Arg: Read, Val: v[:i], Via: "--cert"})
		}
	}
	// -w '%output{FILE}' (curl 8.3 and later) writes the rest of the
	// write-out text to FILE, or appends it with %output{>>FILE}.
	for _, v := range r.Values("-w") {
		rest := v
		for {
			i := strings.Index(rest, "%output{")
			if i < 0 {
				break
			}
			rest = rest[i+len("%output{"):]
			name, _, _ := strings.Cut(rest, "}")
			if IsDyn(v) {
				name = "\x00" + name
			}
			r.Effects = append(r.Effects, Effect{Arg: Write, Val: strings.TrimPrefix(name, ">>"), Via: "-w %output"})
		}
		if IsDyn(v) && !strings.HasPrefix(v, "\x00@") {
			r.risk("option -w of curl is computed at run time and could write a file (%%output{FILE})")
		}
	}
	// A URL with a glob ({a,b}, [1-3]) is several URLs: -O names each
	// file after its match, and -o FILE replaces #N with the Nth glob's.
	urls := append(append([]string(nil), r.Ops...), r.Values("--url")...)
	glob := func(u string) bool { return globs && strings.ContainsAny(u, "{}[]") }
	for _, v := range r.Values("-o") {
		if i := strings.IndexByte(v, '#'); i >= 0 && i+1 < len(v) && v[i+1] >= '0' && v[i+1] <= '9' {
			for _, u := range urls {
				if glob(u) {
					r.Effects = append(r.Effects, Effect{Arg: Write, Val: "\x00(the files " + v + " names after the matches of a glob)", Via: "curl -o"})
					break
				}
			}
		}
	}
	remote := false
	for _, e := range r.Effects {
		if e.Flag == Remote {
			remote = true
		}
	}
	if !remote {
		return
	}
	// -O writes each URL's last path segment (a URL without a scheme is
	// http); with -J the server's Content-Disposition names the file.
	for _, op := range urls {
		name := urlFile(op, "")
		if glob(op) && !IsDyn(name) {
			name = "\x00(the names of the matches of " + op + ")"
		}
		r.Effects = append(r.Effects, Effect{Arg: Write, Val: name, Via: "curl -O"})
	}
	if hasFlag(r, "-J") {
		r.Effects = append(r.Effects, Effect{Arg: Write, Val: "\x00(the file name the server sends)", Via: "curl -J"})
	}
}

// fileURL returns the path a file: URL reads (curl takes the scheme in
// any case, file:/PATH and file://HOST/PATH, decodes %XX, and drops the
// query and fragment); a URL with a glob ({a,b}, [a-z]) curl expands, or
// one computed at run time, reads a path warden cannot name.
func fileURL(u string, globs bool) (string, bool) {
	if IsDyn(u) {
		// A computed URL may be a file: URL (curl -- "$U"), unless its
		// scheme is written and is another one (https://x/$ID).
		t := strings.TrimLeft(u[1:], `"'`)
		if i := strings.Index(t, "://"); i > 0 && strings.Trim(strings.ToLower(t[:i]), "abcdefghijklmnopqrstuvwxyz0123456789+.-") == "" && !strings.EqualFold(t[:i], "file") {
			return "", false
		}
		return u, true
	}
	if len(u) < 5 || !strings.EqualFold(u[:5], "file:") {
		return "", false
	}
	p := u[5:]
	if rest, ok := strings.CutPrefix(p, "//"); ok {
		p = rest
		if i := strings.IndexByte(p, '/'); i >= 0 {
			p = p[i:] // file://host/path
		} else {
			p = "/"
		}
	}
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if d, err := url.PathUnescape(p); err == nil {
		p = d
	} else {
		return "\x00" + u, true
	}
	if globs && strings.ContainsAny(p, "{}[]") {
		return "\x00" + u, true
	}
	return p, true
}

// wgetSpecial: without -O, wget writes each URL's last path segment (or
// index.html) in the current folder, or below -P's folder.
func wgetSpecial(r *Result, args []string) {
	named := false
	for _, e := range r.Effects {
		if e.Via == "-O" || e.Via == "--output-document" {
			named = true
		}
	}
	// --default-page names the file a URL ending in "/" is saved as;
	// --content-disposition saves under the name the server sends.
	def := "index.html"
	if v := r.Values("--default-page"); len(v) > 0 {
		def = v[len(v)-1]
	}
	for i := range r.Effects {
		if r.Effects[i].Arg == URL {
			r.Effects[i].Arg = Write
			if named {
				r.Effects[i].Arg = Plain
				continue
			}
			r.Effects[i].Val = urlFile(r.Effects[i].Val, def)
		}
	}
	if !named && hasFlag(r, "--content-disposition") {
		r.Effects = append(r.Effects, Effect{Arg: Write, Val: "\x00(the file name the server sends)", Via: "wget --content-disposition"})
	}
	// -i FILE (--input-file) reads the URLs from FILE (or from the web):
	// their names are the files written, unless -O names the one file.
	if !named && len(r.Values("-i")) > 0 {
		r.Effects = append(r.Effects, Effect{Arg: Write, Val: "\x00(the files named by the URLs of " + r.Values("-i")[0] + ")", Via: "wget -i"})
	}
	for _, f := range r.Flags {
		switch f {
		case "-r", "-m", "-p", "-x":
			r.Effects = append(r.Effects, Effect{Flag: Extract, Via: "wget " + f})
		}
	}
}

// urlFile returns the file name a download of u is saved as: the last
// segment of its path, or def. A computed URL gives a computed name.
func urlFile(u, def string) string {
	if IsDyn(u) {
		return u
	}
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	i := strings.IndexByte(u, '/')
	if i < 0 {
		return def
	}
	p := u[i:]
	name := p[strings.LastIndexByte(p, '/')+1:]
	if name == "" {
		if def == "" {
			return "\x00(remote name)"
		}
		return def
	}
	return name
}

// wrapperOpts: the shell package reads the command a wrapper runs with
// the wrapper's own grammar (shell/wrap.go: abbreviated long options,
// values that are optional and only attached, as xargs -i and sudo
// --preserve-env take them). sudo -R (--chroot) runs the command found
// inside another root folder, where its name may stand for another
// program: not vouched for.
func wrapperOpts(r *Result, _ []string) {
	if r.Spec.Name == "sudo" && hasFlag(r, "-R") {
		r.risk("sudo -R runs the command inside another root folder, where its name may stand for another program")
	}
}

// rsyncSpecial: backups (-b, --suffix), and the --delete options, which
// remove from the destination what the source lacks: rsync -a --delete
// empty/ . removes .git. The destination is a folder removed whole (what
// is inside it is checked).
func rsyncSpecial(r *Result, args []string) {
	backups(r, args)
	// --files-from=F: the files F names (below the source) are copied.
	for _, v := range r.Values("--files-from") {
		r.Effects = append(r.Effects, Effect{Arg: Read, Val: "\x00(the files " + strings.TrimPrefix(v, "\x00") + " names)", Via: "rsync --files-from"})
	}
	remoteSources(r, args)
	del := ""
	for _, f := range r.Flags {
		switch f {
		case "--del", "--delete", "--delete-before", "--delete-during", "--delete-delay", "--delete-after", "--delete-excluded", "--delete-missing-args":
			del = f
		}
	}
	if del == "" {
		return
	}
	for i := len(r.Effects) - 1; i >= 0; i-- {
		if e := r.Effects[i]; e.Via == "rsync" && e.Arg == Write {
			r.Effects = append(r.Effects, Effect{Arg: Delete, Val: e.Val, Via: "rsync " + del})
			return
		}
	}
}

// dockerBuild: docker build sends its context folder whole to the daemon
// (a Dockerfile's COPY . or COPY .env puts a private file in the image,
// .dockerignore is the agent's to write); a local cache (--cache-to
// type=local,dest=DIR, --cache-from type=local,src=DIR) writes or reads a
// folder.
func dockerBuild(r *Result, _ []string) {
	r.Tree = true
	for _, o := range []string{"--cache-to", "--cache-from"} {
		for _, v := range r.Values(o) {
			if IsDyn(v) {
				r.risk("option %s of docker build is computed at run time", o)
				continue
			}
			for _, kv := range strings.Split(v, ",") {
				k, p, ok := strings.Cut(kv, "=")
				switch {
				case !ok:
				case k == "dest" && o == "--cache-to":
					r.Effects = append(r.Effects, Effect{Arg: Write, Val: p, Via: o})
				case k == "src" && o == "--cache-from":
					r.Effects = append(r.Effects, Effect{Arg: Read, Val: p, Via: o})
				case k == "dest" || k == "src":
					r.risk("option %s of docker build names a local folder in an unexpected place", o)
				}
			}
		}
	}
}

// kubectlOutput: kubectl -o go-template-file=FILE (jsonpath-file,
// custom-columns-file, templatefile) reads FILE as the template, whose
// text outside {{ }} is printed as it is: kubectl create configmap x
// --dry-run=client -o go-template-file=.env prints .env. With such a
// format, --template names the file.
func kubectlOutput(r *Result, _ []string) {
	file := false
	for _, v := range r.Values("-o") {
		format, f, ok := strings.Cut(v, "=")
		if IsDyn(v) {
			r.risk("option -o of kubectl is computed at run time and could name a template file")
			continue
		}
		if strings.HasSuffix(format, "-file") || format == "templatefile" {
			file = true
			if ok {
				r.Effects = append(r.Effects, Effect{Arg: Read, Val: f, Via: "-o " + format})
			}
		}
	}
	if file {
		for _, v := range r.Values("--template") {
			r.Effects = append(r.Effects, Effect{Arg: Read, Val: v, Via: "--template"})
		}
	}
}

func initMiscSpecial() {
	table["docker"].Sub("build").Special = dockerBuild
	for _, sub := range table["kubectl"].subs {
		sub.Special = kubectlOutput
	}
	table["kubectl"].Sub("config").Special = kubectlConfig
	var all func(s *Spec)
	all = func(s *Spec) {
		prev := s.Special
		s.Special = func(r *Result, args []string) {
			pflagShort(r)
			dockerHost(r)
			if prev != nil {
				prev(r, args)
			}
		}
		seen := map[*Spec]bool{}
		for _, sub := range s.subs {
			if !seen[sub] {
				seen[sub] = true
				all(sub)
			}
		}
	}
	all(table["docker"])
	all(table["kubectl"])
	done := map[*Spec]bool{}
	for _, sub := range table["docker"].Sub("compose").subs {
		if done[sub] {
			continue
		}
		done[sub] = true
		prev := sub.Special
		sub.Special = func(r *Result, args []string) {
			prev(r, args)
			composeEnv(r)
		}
	}
}

// pflagShort: docker and kubectl read their options with pflag, which
// takes "-f=FILE" as -f with the value FILE (the "=" dropped), where
// getopt would take "=FILE": kubectl get -o=go-template-file=.env reads
// .env, docker build -f=.env reads .env. The values and the paths of the
// short options are read without it.
func pflagShort(r *Result) {
	for i, v := range r.Vals {
		if len(v.Opt) == 2 && strings.HasPrefix(v.Val, "=") {
			r.Vals[i].Val = v.Val[1:]
		}
	}
	for i, e := range r.Effects {
		if len(e.Via) == 2 && e.Via[0] == '-' && strings.HasPrefix(e.Val, "=") {
			r.Effects[i].Val = e.Val[1:]
		}
	}
}

// dockerHost: docker -H HOST talks to the daemon at HOST and kubectl -s
// SERVER to the API server at SERVER, with the credentials of the
// configuration: docker build and docker pull send the registry
// credentials (config.json's auths) to the daemon, kubectl the current
// user's token or client certificate; ssh:// runs ssh. Only a local
// socket (unix://) is vouched for. kubectl apply --dry-run=none (or
// false) is no dry run at all: a rule written for a dry run would allow a
// real change, since rules compare options and not their values.
func dockerHost(r *Result) {
	kubectl := r.Spec != nil && strings.HasPrefix(r.Spec.Source, "kubectl")
	for _, o := range []string{"-H", "-s"} {
		if (o == "-s") != kubectl {
			continue // docker's -s is a signal or --size
		}
		for _, v := range r.Values(o) {
			if !strings.HasPrefix(v, "unix://") {
				r.risk("option %s %s sends the call and the credentials of the configuration to another server", o, strings.TrimPrefix(v, "\x00"))
			}
		}
	}
	for _, v := range r.Values("--dry-run") {
		switch v {
		case "client", "server":
		default:
			r.risk("--dry-run=%s of kubectl is not a dry run", strings.TrimPrefix(v, "\x00"))
		}
	}
	// kubectl -k DIR builds the kustomization in DIR, whose generators
	// read any file below it (secretGenerator envs: [.env]) and print or
	// send its content: DIR is read whole.
	if kubectl {
		for _, v := range r.Values("-k") {
			for i, e := range r.Effects {
				if e.Arg == Read && e.Val == v && e.Via != r.Spec.Name {
					r.Effects[i].Via = r.Spec.Name
				}
			}
			r.Tree, r.Follow = true, true
		}
	}
}

// composeEnv: docker compose reads the .env file of the project folder
// (--project-directory, else the first -f file's folder, else the
// working folder) to fill in the compose file's variables, unless
// --env-file names another; docker compose config prints them.
func composeEnv(r *Result) {
	if len(r.Values("--env-file")) > 0 {
		return
	}
	dir := "."
	if f := r.Values("-f"); len(f) > 0 {
		dir = path.Dir(f[0])
	}
	if d := r.Values("--project-directory"); len(d) > 0 {
		dir = d[len(d)-1]
	}
	r.Effects = append(r.Effects, Effect{Arg: Read, Val: path.Join(dir, ".env"), Via: "docker compose"})
}

// kubectlConfig: kubectl config set-credentials, set-cluster, set,
// use-context and the like write the kubeconfig, which every later
// kubectl reads; a user entry's exec plugin (--exec-command) is a program
// each later kubectl get runs. Only the commands that print it are
// vouched for.
func kubectlConfig(r *Result, args []string) {
	kubectlOutput(r, args)
	i := indexOf(r.Ops, "config")
	if i < 0 || i+1 >= len(r.Ops) {
		return
	}
	switch r.Ops[i+1] {
	case "view", "get-contexts", "get-clusters", "get-users", "current-context":
	default:
		r.risk("kubectl config %s changes the configuration every later kubectl reads", strings.TrimPrefix(r.Ops[i+1], "\x00"))
	}
}

// remoteSources: scp and rsync copy a source on another machine
// (HOST:PATH, rsync://...) into the destination under PATH's last name
// (scp -r host:.git . writes ./.git), and the files below a folder copied
// whole (-r, -a; rsync's HOST:DIR/ copies DIR's content) are named by the
// other machine: computed writes.
func remoteSources(r *Result, _ []string) {
	var ops []string
	dest := ""
	for _, e := range r.Effects {
		if e.Via == r.Spec.Name && e.Flag == NoEffect && (e.Arg == Read || e.Arg == Write || e.Arg == Delete) {
			ops = append(ops, e.Val)
		}
		if e.Arg == Target {
			dest = e.Val
		}
	}
	if dest == "" && len(ops) > 0 {
		dest, ops = ops[len(ops)-1], ops[:len(ops)-1]
	}
	if dest == "" || remotePath(dest) {
		return
	}
	whole := hasFlag(r, "-r", "-a")
	for _, src := range ops {
		if !remotePath(src) {
			continue
		}
		p := src
		if strings.HasPrefix(p, "rsync://") {
			p = strings.TrimPrefix(p, "rsync://")
			p = p[strings.IndexByte(p, '/')+1:]
		} else {
			p = p[strings.IndexByte(p, ':')+1:]
		}
		name := strings.TrimSuffix(p, "/")
		name = name[strings.LastIndexByte(name, '/')+1:]
		if IsDyn(src) || name == "" || name == "." || name == ".." || strings.ContainsAny(name, "*?[{") {
			r.Effects = append(r.Effects, Effect{Arg: Write, Val: "\x00(the files " + r.Spec.Name + " copies from " + strings.TrimPrefix(src, "\x00") + ")", Via: r.Spec.Name + " " + src})
			continue
		}
		r.Effects = append(r.Effects, Effect{Arg: Write, Val: strings.TrimSuffix(dest, "/") + "/" + name, Via: r.Spec.Name + " " + src})
		if whole {
			r.Effects = append(r.Effects, Effect{Arg: Write, Val: "\x00(the files " + r.Spec.Name + " copies from " + src + ")", Via: r.Spec.Name + " " + src})
		}
	}
}

// remotePath reports whether a copy operand names a file on another
// machine: HOST:PATH with the colon before any slash, or rsync://.
func remotePath(p string) bool {
	if IsDyn(p) {
		return false
	}
	if strings.HasPrefix(p, "rsync://") {
		return true
	}
	i := strings.IndexByte(p, ':')
	return i > 0 && !strings.Contains(p[:i], "/")
}

// sshLocal are the ssh_config keywords whose value is a command line ssh
// runs on this machine with the user's shell (ProxyCommand with exec).
var sshLocal = map[string]bool{"proxycommand": true, "localcommand": true, "knownhostscommand": true}

// sshSpecial takes the command lines of ssh -o ProxyCommand=CMD (and
// LocalCommand, KnownHostsCommand) as lines the shell package judges: -o
// keeps its risk (ssh's %-tokens and the rest of its configuration stay
// unread), and the literal command still meets deny rules and protected
// paths.
func sshSpecial(r *Result, _ []string) {
	for _, v := range r.Values("-o") {
		if IsDyn(v) {
			continue
		}
		k, cmd, ok := strings.Cut(v, "=")
		if i := strings.IndexAny(v, " \t"); i >= 0 && (!ok || i < len(k)) {
			k, cmd, ok = v[:i], strings.TrimLeft(v[i:], " \t="), true
		}
		k = strings.ToLower(strings.TrimSpace(k))
		cmd = strings.TrimSpace(cmd)
		if !ok || !sshLocal[k] || cmd == "" || strings.EqualFold(cmd, "none") {
			continue
		}
		r.Effects = append(r.Effects, Effect{Arg: Shell, Val: cmd, Via: "-o " + k})
	}
}

package progs

import (
	"regexp"
	"strings"
)

// GNU coreutils 9.1, findutils 4.9.0, sed 4.9, gawk 5.2.1, grep 3.8 as
// shipped by Debian 12 (bookworm); each entry from the program's --help and
// manual page. Every option is listed, so an unknown option is a mistake or
// a trick.

const coreSrc = "GNU coreutils 9.1 (Debian 12), %s --help and man %s"

func src(prog, pkg string) string {
	return strings.NewReplacer("%s", prog).Replace(pkg)
}

var commonGNU = " --help --version"

func initCoreutils() {
	register(
		&Spec{Name: "ls dir vdir", Source: src("ls", coreSrc), Operands: "L...",
			Opts: "-a|--all -A|--almost-all --author -b|--escape --block-size= -B|--ignore-backups -c -C --color[=] -d|--directory -D|--dired -f -F|--classify[=] --file-type --format= --full-time -g --group-directories-first -G|--no-group -h|--human-readable --si -H|--dereference-command-line --dereference-command-line-symlink-to-dir --hide= --hyperlink[=] --indicator-style= -i|--inode -I=|--ignore= -k|--kibibytes -l -L|--dereference -m -n|--numeric-uid-gid -N|--literal -o -p -q|--hide-control-chars --show-control-chars -Q|--quote-name --quoting-style= -r|--reverse -R|--recursive -s|--size -S --sort= --time= --time-style= -t -T=|--tabsize= -u -U -v -w=|--width= -x -X -Z|--context --zero -1" + commonGNU},
		&Spec{Name: "cat", Source: src("cat", coreSrc), Operands: "R...",
			Opts: "-A|--show-all -b|--number-nonblank -e -E|--show-ends -n|--number -s|--squeeze-blank -t -T|--show-tabs -u -v|--show-nonprinting" + commonGNU},
		&Spec{Name: "tac", Source: src("tac", coreSrc), Operands: "R...",
			Opts: "-b|--before -r|--regex -s=|--separator=" + commonGNU},
		&Spec{Name: "nl", Source: src("nl", coreSrc), Operands: "R...",
			Opts: "-b=|--body-numbering= -d=|--section-delimiter= -f=|--footer-numbering= -h=|--header-numbering= -i=|--line-increment= -l=|--join-blank-lines= -n=|--number-format= -p|--no-renumber -s=|--number-separator= -v=|--starting-line-number= -w=|--number-width=" + commonGNU},
		&Spec{Name: "head", Source: src("head", coreSrc), Operands: "R...", Digits: true,
			Opts: "-c=|--bytes= -n=|--lines= -q|--quiet|--silent -v|--verbose -z|--zero-terminated" + commonGNU},
		&Spec{Name: "tail", Source: src("tail", coreSrc), Operands: "R...", Digits: true,
			Opts: "-c=|--bytes= -f|--follow[=] -F --max-unchanged-stats= -n=|--lines= --pid= -q|--quiet|--silent --retry -s=|--sleep-interval= -v|--verbose -z|--zero-terminated" + commonGNU},
		&Spec{Name: "wc", Special: listedReads, Source: src("wc", coreSrc), Operands: "R...",
			Opts: "-c|--bytes -m|--chars -l|--lines --files0-from=R -L|--max-line-length -w|--words --total=" + commonGNU},
		&Spec{Name: "sort", Special: listedReads, Source: src("sort", coreSrc), Operands: "R...",
			Opts: "-b|--ignore-leading-blanks -d|--dictionary-order -f|--ignore-case -g|--general-numeric-sort -i|--ignore-nonprinting -M|--month-sort -h|--human-numeric-sort -n|--numeric-sort -R|--random-sort --random-source=R -r|--reverse --sort= -V|--version-sort --batch-size= -c|--check[=] -C --compress-program=X --debug --files0-from=R -k=|--key= -m|--merge -o=W|--output=W -s|--stable -S=|--buffer-size= -t=|--field-separator= -T=W|--temporary-directory=W --parallel= -u|--unique -z|--zero-terminated" + commonGNU},
		&Spec{Name: "uniq", Source: src("uniq", coreSrc), Operands: "R W",
			Opts: "-c|--count -d|--repeated -D --all-repeated[=] -f=|--skip-fields= --group[=] -i|--ignore-case -s=|--skip-chars= -u|--unique -z|--zero-terminated -w=|--check-chars=" + commonGNU},
		&Spec{Name: "cut", Source: src("cut", coreSrc), Operands: "R...",
			Opts: "-b=|--bytes= -c=|--characters= -d=|--delimiter= -f=|--fields= -n --complement -s|--only-delimited --output-delimiter= -z|--zero-terminated" + commonGNU},
		&Spec{Name: "tr", Source: src("tr", coreSrc), Operands: "-...",
			Opts: "-c|-C|--complement -d|--delete -s|--squeeze-repeats -t|--truncate-set1" + commonGNU},
		&Spec{Name: "paste", Source: src("paste", coreSrc), Operands: "R...",
			Opts: "-d=|--delimiters= -s|--serial -z|--zero-terminated" + commonGNU},
		&Spec{Name: "join", Source: src("join", coreSrc), Operands: "R R",
			Opts: "-a= -e= -i|--ignore-case -j= -o= -t= -v= -1= -2= --check-order --nocheck-order --header -z|--zero-terminated" + commonGNU},
		&Spec{Name: "comm", Source: src("comm", coreSrc), Operands: "R R",
			Opts: "-1 -2 -3 --check-order --nocheck-order --output-delimiter= --total -z|--zero-terminated" + commonGNU},
		&Spec{Name: "fold fmt", Source: src("fold", coreSrc), Operands: "R...",
			Opts: "-b|--bytes -s|--spaces -w=|--width= -c|--crown-margin -p=|--prefix= -t|--tagged-paragraph -u|--uniform-spacing -g=|--goal=" + commonGNU},
		&Spec{Name: "expand unexpand", Source: src("expand", coreSrc), Operands: "R...",
			Opts: "-i|--initial -t=|--tabs= -a|--all --first-only" + commonGNU},
		&Spec{Name: "od hexdump", Source: src("od", coreSrc), Operands: "R...",
			Opts: "-A=|--address-radix= --endian= -j=|--skip-bytes= -N=|--read-bytes= -S=|--strings[=] -t=|--format= -v|--output-duplicates -w|--width[=] -a -b -c -d -f -i -l -o -s -x" + commonGNU},
		// xxd reads its words itself (xxd.c main): one option a word, known
		// by its first letter after "-" or "--" (-ps, -cols, --revert), a
		// value attached or in the next word, options up to the first
		// operand; the second operand is the file written (xxd -r patches
		// it). xxdOperands checks that Parse found the operands xxd finds.
		&Spec{Name: "xxd", Source: "xxd 2022-01-14 (vim 9.0.1378, Debian 12), xxd -h, man xxd and xxd.c: INFILE then OUTFILE, written (truncated, or patched with -r)", Style: "posix", Operands: "R W", Special: xxdOperands,
			Opts: "-a|-autoskip -b|-bits -C|-capitalize -c=|-cols= -d -E|-EBCDIC -e -g=|-groupsize= -h|-help -i|-include -l=|-len= -n=|-name= -o=|-offset= -p|-ps|-postscript|-plain -r|-revert -s=|-seek=|-skip= -u -v|-version"},
		&Spec{Name: "md5sum sha1sum sha256sum sha512sum b2sum cksum sum", Source: src("sha256sum", coreSrc) + "; -c reads the files its operands list", Operands: "R...", Special: func(r *Result, args []string) {
			if hasFlag(r, "-c") {
				r.Effects = append(r.Effects, Effect{Arg: Read, Val: "\x00(the files the lists of " + args[0] + " -c name)", Via: "-c"})
			}
		},
			Opts: "-b|--binary -c|--check --tag -t|--text -z|--zero --ignore-missing --quiet --status --strict -w|--warn -a=|--algorithm= -l=|--length= --untagged --base64 --raw -r -s|--sysv" + commonGNU},
		&Spec{Name: "base64 base32 basenc", Source: src("base64", coreSrc), Operands: "R",
			Opts: "-d|--decode -i|--ignore-garbage -w=|--wrap= --base64 --base64url --base32 --base32hex --base16 --base2msbf --base2lsbf --z85" + commonGNU},
		&Spec{Name: "echo", Source: "bash 5.2 builtin echo (help echo); GNU coreutils 9.1 echo: a word that is not an option is printed", Operands: "-...", Style: "posix",
			Opts: "-n -e -E", Special: func(r *Result, _ []string) { r.Risk = "" }},
		&Spec{Name: "printf", Source: "bash 5.2 builtin printf (help printf)", Operands: "-...", Style: "posix",
			Opts: "-v="},
		&Spec{Name: "pwd", Source: src("pwd", coreSrc), Opts: "-L|--logical -P|--physical" + commonGNU},
		&Spec{Name: "true false :", Source: "bash 5.2 builtins", Operands: "-...", Words: true},
		&Spec{Name: "test [", Source: "bash 5.2 builtin test (help test)", Operands: "-...", Words: true},
		&Spec{Name: "date", Source: src("date", coreSrc), Operands: "-",
			Opts: "-d=|--date= --debug -f=R|--file=R -I|--iso-8601[=] -R|--rfc-email --rfc-3339= -r=L|--reference=L -u|--utc|--universal -s=!|--set=!" + commonGNU},
		&Spec{Name: "basename", Source: src("basename", coreSrc), Operands: "-...",
			Opts: "-a|--multiple -s=|--suffix= -z|--zero" + commonGNU},
		&Spec{Name: "dirname", Source: src("dirname", coreSrc), Operands: "-...", Opts: "-z|--zero" + commonGNU},
		&Spec{Name: "realpath readlink", Source: src("realpath", coreSrc), Operands: "L...",
			Opts: "-e|--canonicalize-existing -m|--canonicalize-missing -L|--logical -P|--physical -q|--quiet --relative-to= --relative-base= -s|--strip|--no-symlinks -z|--zero -f|--canonicalize -n|--no-newline -v|--verbose" + commonGNU},
		&Spec{Name: "stat", Source: src("stat", coreSrc), Operands: "L...",
			Opts: "-L|--dereference -f|--file-system --cached= -c=|--format= --printf= -t|--terse" + commonGNU},
		&Spec{Name: "du", Special: listedReads, Source: src("du", coreSrc), Operands: "L...",
			Opts: "-0|--null -a|--all --apparent-size -B=|--block-size= -b|--bytes -c|--total -D|--dereference-args -d=|--max-depth= --files0-from=R -H -h|--human-readable --inodes -k -L|--dereference -l|--count-links -m -P|--no-dereference -S|--separate-dirs --si -s|--summarize -t=|--threshold= --time[=] --time-style= -X=R|--exclude-from=R --exclude= -x|--one-file-system" + commonGNU},
		&Spec{Name: "df", Source: src("df", coreSrc), Operands: "L...",
			Opts: "-a|--all -B=|--block-size= -h|--human-readable -H|--si -i|--inodes -k -l|--local --no-sync --output[=] -P|--portability --sync --total -t=|--type= -T|--print-type -x=|--exclude-type=" + commonGNU},
		&Spec{Name: "file", Special: listedReads, Source: "file 5.44 (Debian 12), man file; -C writes NAME.mgc in the working folder for each magic file -m names (magic.mgc without -m); MAGIC names the magic files, whose lines its warnings print", Operands: "L...", Env: "MAGIC=R",
			Opts: "-b|--brief -C|--compile:W -c|--checking-printout -d -E -e=|--exclude= --exclude-quiet= -F=|--separator= -f=R|--files-from=R -h|--no-dereference -i|--mime --mime-type --mime-encoding -k|--keep-going -l|--list -L|--dereference -m=R|--magic-file=R -N|--no-pad -n|--no-buffer -p|--preserve-date -P=|--parameter= -r|--raw -s|--special-files -S|--no-sandbox -v -z|--uncompress -Z|--uncompress-noreport -0|--print0" + commonGNU},
		&Spec{Name: "diff", Source: "GNU diffutils 3.8 (Debian 12), diff --help and info diff (Comparing Directories: without -r, diff compares the files two folders share, and with -N every file of either)", Operands: "R...", Special: diffTree,
			Opts: "--normal -q|--brief -s|--report-identical-files -c -C=|--context[=] -u -U=|--unified[=] -e|--ed -n|--rcs -y|--side-by-side -W=|--width= --left-column --suppress-common-lines -p|--show-c-function -F=|--show-function-line= --label= --expand-tabs -t -T|--initial-tab --tabsize= --suppress-blank-empty -l|--paginate -r|--recursive --no-dereference -N|--new-file --unidirectional-new-file --ignore-file-name-case --no-ignore-file-name-case -x=|--exclude= -X=R|--exclude-from=R -S=|--starting-file= --from-file=R --to-file=R -i|--ignore-case -E|--ignore-tab-expansion -Z|--ignore-trailing-space -b|--ignore-space-change -w|--ignore-all-space -B|--ignore-blank-lines -I=|--ignore-matching-lines= -a|--text --strip-trailing-cr -D=|--ifdef= --GTYPE-group-format= --line-format= --LTYPE-line-format= -d|--minimal --horizon-lines= --speed-large-files --color[=] --palette=" + commonGNU},
		&Spec{Name: "cmp", Source: "GNU diffutils 3.8 (Debian 12), cmp --help", Operands: "R R - -",
			Opts: "-b|--print-bytes -i=|--ignore-initial= -l|--verbose -n=|--bytes= -s|--quiet|--silent" + commonGNU},
		&Spec{Name: "which", Source: "debianutils 5.7 which", Operands: "-...", Opts: "-a -s"},
		&Spec{Name: "whoami id groups uname hostname nproc arch tty uptime", Source: src("id", coreSrc), Operands: "-...",
			Opts: "-a|--all -g|--group -G|--groups -n|--name -r|--real -u|--user -z|--zero -Z|--context -s|--kernel-name -m|--machine -o|--operating-system -p|--processor -i|--hardware-platform -v|--kernel-version --ignore= -f|--fqdn -d|--domain -I|--all-ip-addresses -p|--pretty -S|--since" + commonGNU},
		&Spec{Name: "printenv", Source: src("printenv", coreSrc), Operands: "-...", Opts: "-0|--null" + commonGNU},
		&Spec{Name: "seq", Source: src("seq", coreSrc), Operands: "-...", Opts: "-f=|--format= -s=|--separator= -w|--equal-width" + commonGNU},
		&Spec{Name: "sleep", Source: src("sleep", coreSrc), Operands: "-...", Opts: commonGNU},
		&Spec{Name: "tree", Source: "tree 2.1.0 (Debian 12), man tree; -R runs tree again in each folder it lists, adding -o 00Tree.html (a file written in every folder, .git too with -a)", Operands: "L...",
			Opts: "-a -d -l -f -x -L= -R:W -P= -I= --gitignore --gitfile=R --ignore-case --matchdirs --metafirst --prune --info --infofile=R --noreport --charset= --filelimit= -o=W -q -N -Q -p -u -g -s -h --si --du -D --timefmt= -F --inodes --device -v -t -c -U -r --dirsfirst --filesfirst --sort= -i -A -S -n -C -X -J -H= -T= --nolinks --fromfile --fromtabfile" + commonGNU},

		// Programs that write through their operands.
		&Spec{Name: "rm", Source: src("rm", coreSrc), Operands: "D...",
			Opts: "-f|--force -i -I --interactive[=] --one-file-system --no-preserve-root --preserve-root[=] -r|-R|--recursive -d|--dir -v|--verbose" + commonGNU},
		&Spec{Name: "rmdir", Source: src("rmdir", coreSrc), Operands: "D...",
			Opts: "--ignore-fail-on-non-empty -p|--parents -v|--verbose" + commonGNU},
		&Spec{Name: "unlink", Source: src("unlink", coreSrc), Operands: "D", Opts: commonGNU},
		&Spec{Name: "shred", Source: src("shred", coreSrc), Operands: "W...",
			Opts: "-f|--force -n=|--iterations= --random-source=R -s=|--size= -u:D --remove[=]:D -v|--verbose -x|--exact -z|--zero" + commonGNU},
		&Spec{Name: "touch", Source: src("touch", coreSrc), Operands: "W...",
			Opts: "-a -c|--no-create -d=|--date= -f -h|--no-dereference -m -r=L|--reference=L -t= --time=" + commonGNU},
		&Spec{Name: "mkdir", Source: src("mkdir", coreSrc), Operands: "W...",
			Opts: "-m=|--mode= -p|--parents -v|--verbose -Z --context[=]" + commonGNU},
		&Spec{Name: "mkfifo mknod", Source: src("mkfifo", coreSrc), Operands: "W -...",
			Opts: "-m=|--mode= -Z --context[=]" + commonGNU},
		&Spec{Name: "truncate", Source: src("truncate", coreSrc), Operands: "W...",
			Opts: "-c|--no-create -o|--io-blocks -r=L|--reference=L -s=|--size=" + commonGNU},
		&Spec{Name: "tee", Source: src("tee", coreSrc), Operands: "W...",
			Opts: "-a|--append -i|--ignore-interrupts -p --output-error[=]" + commonGNU},
		&Spec{Name: "mv", Source: src("mv", coreSrc) + backupSrc, Operands: "D... W", Special: backups, Env: backupEnv,
			Opts: "--backup[=] -b -f|--force -i|--interactive -n|--no-clobber --no-copy --strip-trailing-slashes -S=|--suffix= -t=T|--target-directory=T -T|--no-target-directory -u|--update[=] -v|--verbose -Z|--context" + commonGNU},
		&Spec{Name: "cp", Source: src("cp", coreSrc) + "; -l and -s make links, not copies: the sources are written through them (cp -l .git/config src/cfg, then a write of src/cfg); -L follows the links of the folders it copies; -T copies a folder's content onto the destination (cp -rT d . writes ./.git from d/.git)" + backupSrc, Operands: "R... W", Env: backupEnv, Special: func(r *Result, a []string) {
			treeIf("-r", "-a")(r, a)
			r.Follow = hasFlag(r, "-L")
			if hasFlag(r, "-T") {
				// The source's content lands on the destination, as with
				// cp -r SRC/. DEST.
				for i, e := range r.Effects {
					if e.Via == "cp" && e.Arg == Read && !IsDyn(e.Val) {
						r.Effects[i].Val = strings.TrimSuffix(e.Val, "/") + "/."
					}
				}
			}
			backups(r, a)
		},
			Opts: "-a|--archive --attributes-only --backup[=] -b --copy-contents -d -f|--force -i|--interactive -H -l|--link:I -L|--dereference -n|--no-clobber -P|--no-dereference -p --preserve[=] --no-preserve= --parents -r|-R|--recursive --reflink[=] --remove-destination --sparse= --strip-trailing-slashes -s|--symbolic-link:I -S=|--suffix= -t=T|--target-directory=T -T|--no-target-directory -u|--update[=] -v|--verbose -x|--one-file-system -Z --context[=]" + commonGNU},
		&Spec{Name: "install", Source: src("install", coreSrc) + "; -d creates (or sets the mode of) every operand as a folder" + backupSrc, Operands: "R... W", Env: backupEnv, Special: func(r *Result, a []string) {
			if hasFlag(r, "-d") {
				for i, e := range r.Effects {
					if e.Via == "install" && e.Arg == Read {
						r.Effects[i].Arg = Write
					}
				}
			}
			backups(r, a)
		},
			Opts: "--backup[=] -b -c -C|--compare -d|--directory -D -g=|--group= -m=|--mode= -o=|--owner= -p|--preserve-timestamps -s|--strip --strip-program=X -S=|--suffix= -t=T|--target-directory=T -T|--no-target-directory -v|--verbose --preserve-context -Z --context[=]" + commonGNU},
		// A link's target is written through the link: every operand counts
		// as written (ln -s .git g makes g/config .git/config).
		&Spec{Name: "ln", Source: src("ln", coreSrc) + backupSrc, Operands: "W... W", Special: backups, Env: backupEnv,
			Opts: "--backup[=] -b -d|-F|--directory -f|--force -i|--interactive -L|--logical -n|--no-dereference -P|--physical -r|--relative -s|--symbolic -S=|--suffix= -t=T|--target-directory=T -T|--no-target-directory -v|--verbose" + commonGNU},
		&Spec{Name: "chmod", Source: src("chmod", coreSrc), Operands: "- W...", Special: chmodModes,
			Opts: "-c|--changes -f|--silent|--quiet -v|--verbose --no-preserve-root --preserve-root --reference=L -R|--recursive" + commonGNU},
		&Spec{Name: "chown chgrp", Source: src("chown", coreSrc), Operands: "- W...", Special: referenceOperands,
			Opts: "-c|--changes -f|--silent|--quiet -v|--verbose --dereference -h|--no-dereference --from= --no-preserve-root --preserve-root --reference=L -R|--recursive -H -L -P" + commonGNU},
		&Spec{Name: "dd", Source: src("dd", coreSrc), Operands: "-...", Special: ddOperands, Opts: commonGNU},

		// Text tools whose first operand is a pattern or a script.
		&Spec{Name: "grep egrep fgrep", Source: "GNU grep 3.8 (Debian 12), grep --help; BSD grep 2.6 (macOS) reads GREP_OPTIONS as options placed first; --include, --exclude and --exclude-dir match base names with fnmatch(3), without FNM_PERIOD", Operands: "- R...", Special: grepTree, Env: "GREP_OPTIONS=!",
			Opts: "-E|--extended-regexp -F|--fixed-strings -G|--basic-regexp -P|--perl-regexp -e=P|--regexp=P -f=Q|--file=Q -i|-y|--ignore-case --no-ignore-case -w|--word-regexp -x|--line-regexp -z|--null-data -s|--no-messages -v|--invert-match -V|--version --help -m=|--max-count= -b|--byte-offset -n|--line-number --line-buffered -H|--with-filename -h|--no-filename --label= -o|--only-matching -q|--quiet|--silent --binary-files= -a|--text -I -d=|--directories= -D=|--devices= -r|--recursive -R|--dereference-recursive --include= --exclude= --exclude-from=R --exclude-dir= -L|--files-without-match -l|--files-with-matches -c|--count -T|--initial-tab -Z|--null -A=|--after-context= -B=|--before-context= -C=|--context= -NUM --group-separator= --no-group-separator --color[=] --colour[=] -U|--binary", Digits: true},
		&Spec{Name: "rg", Source: "ripgrep 13.0.0 (Debian 12), rg --help; RIPGREP_CONFIG_PATH names a file of options (--pre runs a program)", Operands: "- R...", Special: rgTree, Env: "RIPGREP_CONFIG_PATH=!",
			Opts: "-e=P|--regexp=P -f=Q|--file=Q -A=|--after-context= -B=|--before-context= -C=|--context= -c|--count --count-matches --color= --colors= --column -E=|--encoding= -F|--fixed-strings -L|--follow -g=|--glob= --iglob= -h|--help --hidden -i|--ignore-case --ignore-file=R -l|--files-with-matches --files-without-match -M=|--max-columns= -m=|--max-count= --max-depth= --max-filesize= -n|--line-number -N|--no-line-number --no-heading --no-ignore --no-ignore-vcs --no-ignore-dot --no-ignore-global --no-ignore-parent --no-messages -o|--only-matching -p|--pretty -q|--quiet -s|--case-sensitive -S|--smart-case --sort= --sortr= -t=|--type= -T=|--type-not= --type-list -u|--unrestricted -v|--invert-match -V|--version -w|--word-regexp -x|--line-regexp --json --files --trim --vimgrep -U|--multiline --multiline-dotall -P|--pcre2 -a|--text -z|--search-zip:X --pre=X --pre-glob= --heading --stats -0|--null --null-data --passthru -r=|--replace= --max-columns-preview -j=|--threads= --no-config --debug --trace"},
		&Spec{Name: "sed", Source: "GNU sed 4.9 (Debian 12), sed --help and info sed; the w/W/e commands and the s///w and s///e flags of a script write files or run commands; -i[SUFFIX] renames each file to its backup (SUFFIX, each * the file's name as given), options clustered (-ne, -ni.bak) or abbreviated (--expr, --in=)", Operands: "- R...", Special: sedScript,
			Opts: "-n|--quiet|--silent --debug -e=P|--expression=P -f=Q|--file=Q --follow-symlinks -i[=]:I --in-place[=]:I -l=|--line-length= --posix -E|-r|--regexp-extended -s|--separate --sandbox -u|--unbuffered -z|--null-data" + commonGNU},
		&Spec{Name: "awk gawk mawk", Source: "GNU Awk 5.2.1 (Debian 12), gawk --help and gawk(1); system(), | getline and print > file run programs and write files; @load and @include load code, @f() calls the function f names (system too), and ARGV, ARGC (or SYMTAB) name the files read", Operands: "- R...", Special: awkScript,
			Opts: "-f=Q|--file=Q -F=|--field-separator= -v=|--assign= -b|--characters-as-bytes -c|--traditional -C|--copyright -d|--dump-variables[=W] -D|--debug[=] -e=P|--source=P -E=Q|--exec=Q -g|--gen-pot -h|--help -i=!|--include=! -I|--trace -k|--csv -l=!|--load=! -L|--lint[=] -M|--bignum -N|--use-lc-numeric -n|--non-decimal-data -o|--pretty-print[=W] -O|--optimize -p|--profile[=W] -P|--posix -r|--re-interval -s|--no-optimize -S|--sandbox -t|--lint-old -V|--version"},
		&Spec{Name: "jq", Source: "jq 1.6 (Debian 12), man jq (MODULES: import and include read files from the search path, ~/.jq, $ORIGIN/../lib/jq and $ORIGIN/../lib, whose first component may be ..)", Operands: "- R...", Special: jqScript,
			Opts: "--seq --stream --stream-errors --slurp -s --raw-input -R --null-input -n --compact-output -c --tab --indent= --color-output -C --monochrome-output -M --ascii-output -a --unbuffered --sort-keys -S --raw-output -r --join-output -j -f=Q --from-file=Q -L=R -e --exit-status --arg=V --argjson=V --slurpfile=2 --rawfile=2 --args --jsonargs --run-tests[=R]" + commonGNU},
		// util-linux more takes other options than less (-p takes no
		// value there: more -p .env reads .env).
		&Spec{Name: "more", Source: "util-linux 2.38.1 (Debian 12), more --help and man more: +NUM and +/PATTERN start the display (lessCommands)", Operands: "R...", Digits: true, Special: lessCommands,
			Opts: "-d|--silent -f|--logical -l|--no-pause -c|--print-over -p|--clean-print -e|--exit-on-eof -s|--squeeze -u|--plain -n=|--lines= -h|--help -V|--version"},
		&Spec{Name: "less most", Source: "less 590 (Debian 12), man less; its ! and | commands run programs, s and -o write a log file, :e and E read other files: typed, or given as +CMD (++CMD) and -p/--pattern (+/PATTERN), whose keys less runs when its output is a terminal (lessCommands); -t opens the file a tags file names; a lesskey file (-k) can set LESSOPEN; LESS_IS_MORE makes -p a command", Operands: "R...", Special: lessCommands,
			Env:  "LESS_IS_MORE=! LESSHISTFILE=W LESSHISTSIZE LESSSECURE LESSCHARSET",
			Opts: "-N -S -R -r -F -X -i -I -n -s -M -m -e -E -f -g -G -q -Q -w -W -K -c -C -~ -+= -p=|--pattern= -x= -y= -z= -j= -h= -b= -P= -o=W -O=W -T=R -t=! -k=! --no-init --quit-if-one-screen --RAW-CONTROL-CHARS --chop-long-lines --LINE-NUMBERS --ignore-case --IGNORE-CASE"},
	)
}

// chmodModes: chmod's first operand is the mode unless --reference gives
// it; a mode may begin with "-" (chmod -w FILE), so words made only of mode
// letters are the mode, not options.
func chmodModes(r *Result, args []string) {
	redo(r, args, "R", func(ops []string, ref bool) []string {
		if !ref && len(ops) > 0 {
			return ops[1:]
		}
		return ops
	})
}

// referenceOperands: chown OWNER FILE..., or chown --reference=RFILE FILE...
func referenceOperands(r *Result, args []string) {
	redo(r, args, "", func(ops []string, ref bool) []string {
		if !ref && len(ops) > 0 {
			return ops[1:]
		}
		return ops
	})
}

// redo recomputes chmod/chown operands: the words that are modes are
// operands, and with --reference every operand is a file.
func redo(r *Result, args []string, _ string, files func(ops []string, ref bool) []string) {
	ref := false
	for _, f := range r.Flags {
		if f == "--reference" {
			ref = true
		}
	}
	// Drop the operand effects roleOps made; compute them again.
	kept := r.Effects[:0]
	for _, e := range r.Effects {
		if e.Via != r.Spec.Name || e.Flag != NoEffect {
			kept = append(kept, e)
		}
	}
	r.Effects = kept
	// Modes like -w, -rwx, -x+X were read as unknown options; take them
	// back as operands.
	var ops []string
	flags := r.Flags[:0]
	for _, f := range r.Flags {
		if !isMode(f) {
			flags = append(flags, f)
		}
	}
	r.Flags = flags
	dd := false
	for _, w := range args[1:] {
		switch {
		case dd:
			ops = append(ops, w)
		case w == "--":
			dd = true
		case isMode(w):
			ops = append(ops, w)
		case len(w) > 1 && w[0] == '-' && !IsDyn(w):
		default:
			ops = append(ops, w)
		}
	}
	if r.Risk != "" && strings.Contains(r.Risk, "is not an option of chmod") {
		r.Risk = ""
		for _, w := range args[1:] {
			if len(w) > 1 && w[0] == '-' && !isMode(w) && !strings.HasPrefix(w, "--") {
				for j := 1; j < len(w); j++ {
					if strings.IndexByte("cfvR", w[j]) < 0 {
						r.risk("-%c is not an option of chmod warden knows", w[j])
					}
				}
			}
		}
	}
	r.Ops = ops
	for _, op := range files(ops, ref) {
		r.Effects = append(r.Effects, Effect{Arg: Write, Val: op, Via: r.Spec.Name})
	}
	// chmod -R and chown -R change every file below a folder: chmod -R 777
	// src makes src/.env world-readable.
	r.TreeWrite = hasFlag(r, "-R")
}

// isMode reports whether w is a symbolic chmod mode that starts with "-"
// (-w, -rwx, -x,u+w).
func isMode(w string) bool {
	if len(w) < 2 || w[0] != '-' || w[1] == '-' {
		return false
	}
	for i := 1; i < len(w); i++ {
		if strings.IndexByte("rwxXst,+-=ugoa01234567", w[i]) < 0 {
			return false
		}
	}
	return true
}

// ddOperands: dd reads if=FILE and writes of=FILE.
func ddOperands(r *Result, args []string) {
	for _, w := range args[1:] {
		switch {
		case strings.HasPrefix(w, "of="):
			r.Effects = append(r.Effects, Effect{Arg: Write, Val: w[3:], Via: "dd of="})
		case strings.HasPrefix(w, "if="):
			r.Effects = append(r.Effects, Effect{Arg: Read, Val: w[3:], Via: "dd if="})
		case IsDyn(w):
			r.risk("a word computed at run time could be an operand of dd")
		}
	}
}

// sedScript: a sed script can write files (w FILE, s///w FILE) and run
// commands (e, s///e). A script that might is not vouched for. The script
// and the backup suffix are taken from the options as Parse read them, so
// every spelling counts: -ne SCRIPT, -se, --expr=SCRIPT, --e=SCRIPT,
// -ni'SUFFIX', --in=SUFFIX.
func sedScript(r *Result, _ []string) {
	// sed -iSUFFIX renames each file to a backup before writing it anew:
	// FILE+SUFFIX, or SUFFIX with each * replaced by the file's name as
	// given, which may lead into another folder (sed -i'.git/hooks/*' ...
	// f renames f to .git/hooks/f).
	for _, suffix := range append(r.Values("-i"), r.Values("--in-place")...) {
		if suffix == "" {
			continue
		}
		for _, e := range r.Effects {
			if e.Arg != Write || e.Via != r.Spec.Name+" -i" {
				continue
			}
			backup := e.Val + suffix
			if strings.Contains(suffix, "*") {
				backup = strings.ReplaceAll(suffix, "*", e.Val)
			}
			if IsDyn(e.Val) && !IsDyn(backup) {
				backup = "\x00" + backup // a computed name inside
			}
			r.Effects = append(r.Effects, Effect{Arg: Write, Val: backup, Via: "sed -i backup"})
		}
	}
	for _, s := range scripts(r, "-e", "-f") {
		if IsDyn(s) {
			r.risk("the sed script is computed at run time or read from a file")
			continue
		}
		if sedRisky(s) {
			r.risk("the sed script may write a file or run a command (w, W, e, r or R commands)")
			if !sedEffects(r, s) {
				r.Effects = append(r.Effects, Effect{Arg: Write, Val: "\x00(the files of a sed script warden cannot read)", Via: "sed"})
			}
		}
	}
}

// sedRisky is a conservative test: any w, W, e, r or R that could be a
// command or an s/// flag makes the script risky.
func sedRisky(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 'w', 'W', 'e', 'r', 'R':
			return true
		}
	}
	return false
}

// awkScript: an awk program can run commands (system(), | getline, print |)
// and write files (print > f). gawk also loads code (@load, @include),
// calls a function named by a string (@f(), which reaches system), and
// reads the files ARGV names: a program that assigns ARGV or ARGC (or
// reaches them through SYMTAB) reads files the call does not name.
func awkScript(r *Result, _ []string) {
	for _, s := range scripts(r, "-e", "-f", "-E") {
		if IsDyn(s) {
			r.risk("the awk program is computed at run time or read from a file")
			continue
		}
		// A > or | outside print and printf compares or is logical.
		n := len(r.Effects)
		awkEffects(r, s)
		if strings.Contains(s, "system") || strings.Contains(s, "getline") || len(r.Effects) > n || strings.Contains(s, "|&") {
			r.risk("the awk program may run a command or write a file (system, |, >, getline)")
		}
		if strings.Contains(s, "@") || strings.Contains(s, "ARGV") || strings.Contains(s, "ARGC") || strings.Contains(s, "SYMTAB") {
			r.risk("the awk program may load code, call a function by name or change the files it reads (@load, @include, @f(), ARGV, ARGC, SYMTAB)")
		}
	}
}

// scripts returns the script texts of a sed or awk call as Parse read the
// options (canonical spellings: clusters and abbreviations included): the
// values of the script option, a computed marker for each script read from
// a file, or the first operand when neither was given.
func scripts(r *Result, script string, files ...string) []string {
	out := r.Values(script)
	for _, f := range files {
		for range r.Values(f) {
			// The script is read from a file: not literal in the call.
			out = append(out, "\x00file")
		}
	}
	if len(out) == 0 && (hasFlag(r, script) || hasFlag(r, files...)) {
		// The option was given without its value: sed fails.
		return nil
	}
	if len(out) == 0 && len(r.Ops) > 0 {
		// The first operand of the entry's own operands is the script.
		out = append(out, r.Ops[0])
	}
	return out
}

// hasFlag reports whether the call used one of the options (canonical
// spellings).
func hasFlag(r *Result, fs ...string) bool {
	for _, f := range r.Flags {
		for _, g := range fs {
			if f == g {
				return true
			}
		}
	}
	return false
}

// treeIf marks the reads of a program as whole folders when one of the
// options is used (diff -r, cp -r).
func treeIf(flags ...string) func(*Result, []string) {
	return func(r *Result, _ []string) {
		if hasFlag(r, flags...) {
			r.Tree = true
		}
	}
}

// diffTree: diff -r reads the folders it compares whole. Without -r a
// folder operand is still read one level deep: diff . pkg prints the
// differences of every file the two folders share (with -N or
// --unidirectional-new-file, every file of either), ./.env included. The
// files of --from-file and --to-file are compared with every operand in
// the same way.
func diffTree(r *Result, _ []string) {
	r.Tree = true
	r.Follow = !hasFlag(r, "--no-dereference")
	if !hasFlag(r, "-r") {
		r.Filter = func(_ string, dir bool) bool { return !dir }
	}
	for _, o := range []string{"--from-file", "--to-file"} {
		for _, v := range r.Values(o) {
			r.Effects = append(r.Effects, Effect{Arg: Read, Val: v, Via: r.Spec.Name})
		}
	}
}

// jqScript: a jq program can read files the call does not name: import
// "PATH" as $NAME; reads PATH.json and import "PATH" as NAME; and include
// read PATH.jq, looked up in the search path (the working folder, ~/.jq,
// $ORIGIN/../lib/jq, $ORIGIN/../lib, -L). jq 1.6 lets the first component
// be "..": with a ~/.jq folder, import "../.docker/config" as $c; reads
// ~/.docker/config.json. A program that may import, or one read from a
// file, is not vouched for.
func jqScript(r *Result, _ []string) {
	if hasFlag(r, "-f", "--from-file") {
		r.risk("the jq program is read from a file and may import modules or data files")
		return
	}
	if len(r.Ops) == 0 {
		return
	}
	p := r.Ops[0]
	switch {
	case IsDyn(p):
		r.risk("the jq program is computed at run time")
	case jqImport.MatchString(p):
		r.risk("the jq program imports modules or data files, which read files the call does not name")
	}
}

// jqImport finds an import or include directive in a jq program: the
// keyword, then the path as a string (a field named .include is not one).
var jqImport = regexp.MustCompile(`(^|[^.$\w])(import|include)\s*"`)

// grepTree: grep -r, -R, -d recurse and --directories=recurse read the
// folders they are given whole, and the working folder when given none.
//
// grep reads the ACTION of -d as getopt_long reads the option itself: any
// unambiguous prefix (-d rec, --dir=rec, -nd recurse), so the values are
// taken from the parsed options, and any ACTION that is not a prefix of
// read or skip alone counts as recurse.
func grepTree(r *Result, _ []string) {
	rec := hasFlag(r, "-r", "-R")
	for _, v := range r.Values("-d") {
		if IsDyn(v) || v == "" || !strings.HasPrefix("read", v) && !strings.HasPrefix("skip", v) || v == "r" {
			rec = true
		}
	}
	if !rec {
		return
	}
	r.Tree = true
	r.Follow = hasFlag(r, "-R")
	r.Filter = grepFilter(r)
	for _, e := range r.Effects {
		if e.Arg == Read && e.Via == r.Spec.Name {
			return
		}
	}
	r.Effects = append(r.Effects, Effect{Arg: Read, Val: ".", Via: r.Spec.Name})
}

// grepFilter reads grep's --include, --exclude and --exclude-dir as grep
// 3.8 applies them in a recursive search: for a file, the last of the
// --include and --exclude globs that matches its base name decides, and a
// file no glob matches is read unless the first of them is an --include;
// a folder is skipped when an --exclude-dir glob matches its name. Only the
// options Parse read as options count (not a word after "--", nor the
// value of -e or -f), abbreviations included. grep matches with fnmatch
// (no FNM_PERIOD: * matches a leading dot): a glob warden cannot match
// exactly as fnmatch does (a computed word, a bracket expression such as
// [[:alpha:]] or [!a], a backslash, ? against a name that is not ASCII)
// matches every name for --include and no name for the exclusions, so the
// filter never leaves out more than grep does. nil when the call has none
// of them.
func grepFilter(r *Result) func(string, bool) bool {
	type glob struct {
		pat     string
		include bool
	}
	var files, dirs []glob
	for _, v := range r.Vals {
		switch v.Opt {
		case "--exclude-dir":
			dirs = append(dirs, glob{pat: v.Val})
		case "--include", "--exclude":
			files = append(files, glob{pat: v.Val, include: v.Opt == "--include"})
		}
	}
	if len(files) == 0 && len(dirs) == 0 {
		return nil
	}
	match := func(g glob, name string) bool {
		ok, sure := fnmatchName(g.pat, name)
		if !sure {
			return g.include
		}
		return ok
	}
	return func(name string, dir bool) bool {
		if dir {
			for _, g := range dirs {
				if match(g, name) {
					return false
				}
			}
			return true
		}
		for i := len(files) - 1; i >= 0; i-- {
			if match(files[i], name) {
				return files[i].include
			}
		}
		return len(files) == 0 || !files[0].include
	}
}

// fnmatchName matches a base name against a glob of literal characters, *
// and ?, as fnmatch(3) does without FNM_PERIOD. sure is false for a glob
// it cannot match exactly so: a computed word, a bracket expression or a
// backslash, or ? against a name with bytes that are not ASCII (a
// character of several bytes in fnmatch's locale).
func fnmatchName(pat, name string) (ok, sure bool) {
	if IsDyn(pat) || strings.ContainsAny(pat, "[]\\") {
		return false, false
	}
	if strings.Contains(pat, "?") {
		for i := 0; i < len(name); i++ {
			if name[i] >= 0x80 {
				return false, false
			}
		}
	}
	// Iterative matching with backtracking to the last *.
	p, n, star, mark := 0, 0, -1, 0
	for n < len(name) {
		switch {
		case p < len(pat) && (pat[p] == '?' || pat[p] == name[n]):
			p++
			n++
		case p < len(pat) && pat[p] == '*':
			star, mark = p, n
			p++
		case star >= 0:
			p = star + 1
			mark++
			n = mark
		default:
			return false, true
		}
	}
	for p < len(pat) && pat[p] == '*' {
		p++
	}
	return p == len(pat), true
}

// rgTree: ripgrep always searches folders whole, the working folder when
// given none; without --hidden (or -uu) it leaves out hidden entries.
func rgTree(r *Result, _ []string) {
	r.Tree = true
	r.Follow = hasFlag(r, "-L")
	r.SkipHidden = !hasFlag(r, "--hidden", "-u", "--files")
	if hasFlag(r, "--files") {
		r.SkipHidden = false
	}
	for _, e := range r.Effects {
		if e.Arg == Read && e.Via == r.Spec.Name {
			return
		}
	}
	r.Effects = append(r.Effects, Effect{Arg: Read, Val: ".", Via: r.Spec.Name})
}

// xxdOperands finds the operands as xxd 2022 does (xxd.c main), and stops
// an allow when Parse found others (xxd -pc IN OUT is -p, not -p -c IN):
// the effects of xxd's own reading are recorded then. "-" is the standard
// input or output.
func xxdOperands(r *Result, args []string) {
	ops, ok := xxdOps(args)
	same := ok && len(ops) == len(r.Ops)
	for i := 0; same && i < len(ops); i++ {
		same = ops[i] == r.Ops[i]
	}
	if !same {
		r.risk("xxd reads its options otherwise than warden: one option a word, known by its first letter")
		for i, op := range ops {
			if i < 2 {
				r.Effects = append(r.Effects, Effect{Arg: [2]Arg{Read, Write}[i], Val: op, Via: "xxd"})
			}
		}
	}
	// "-" is the standard input or output, not a file.
	out := r.Effects[:0]
	for _, e := range r.Effects {
		if !(e.Via == "xxd" && e.Val == "-") {
			out = append(out, e)
		}
	}
	r.Effects = out
}

// xxdOps reads the words as xxd.c's main does; ok is false when a word it
// would read as an option is computed.
func xxdOps(args []string) (ops []string, ok bool) {
	// The letters whose value is attached or, when the rest of the word is
	// empty or spells the long name, the next word.
	long := map[byte][]string{'c': {"ols"}, 'g': {"roup"}, 'o': {"ffset"}, 's': {"kip", "eek"}, 'l': {"en"}, 'n': {"ame"}}
	i := 1
	for ; i < len(args); i++ {
		w := args[i]
		if IsDyn(w) {
			return nil, false
		}
		pp := w
		if strings.HasPrefix(w, "--") && len(w) > 2 {
			pp = w[1:]
		}
		if pp == "--" {
			i++
			break
		}
		if len(pp) < 2 || pp[0] != '-' {
			break
		}
		switch pp[1] {
		case 'a', 'b', 'e', 'u', 'p', 'i', 'C', 'd', 'r', 'E':
			continue
		case 'c', 'g', 'o', 's', 'l', 'n':
			rest := pp[2:]
			if pp[1] == 'c' && strings.HasPrefix(rest, "apitalize") {
				continue
			}
			next := rest == ""
			for _, l := range long[pp[1]] {
				next = next || strings.HasPrefix(rest, l)
			}
			if next {
				if i+1 >= len(args) {
					return nil, true // usage: nothing is read or written
				}
				if IsDyn(args[i+1]) {
					return nil, false
				}
				i++
			}
			continue
		}
		return nil, true // -v, -h or an unknown option: xxd exits
	}
	return args[i:], true
}

// lessCommands: less types the words of +CMD (and ++CMD) as keys when it
// starts, and -p PATTERN as /PATTERN: a newline ends a command and starts
// the next, so any command may follow (less '+/x\n!cmd'). Only the
// commands that move in the file or search it are vouched for: +N, +Ng,
// +G, +F, +g, +p and +/PATTERN or +?PATTERN of printable characters.
func lessCommands(r *Result, args []string) {
	for _, v := range r.Values("-p") {
		if !lessPrintable(v) {
			r.risk("option -p of %s holds keys other than a search pattern, which less runs as commands", r.Spec.label())
		}
	}
	for _, w := range args[1:] {
		if w == "--" {
			break
		}
		cmd, ok := strings.CutPrefix(w, "+")
		if !ok {
			continue
		}
		cmd = strings.TrimPrefix(cmd, "+")
		if !lessSafeCommand(cmd) {
			r.risk("%s runs the keys of %s as commands, which can run a program or read or write another file", r.Spec.label(), strings.TrimPrefix(w, "\x00"))
		}
	}
}

func lessSafeCommand(cmd string) bool {
	if cmd != "" && (cmd[0] == '/' || cmd[0] == '?') {
		return lessPrintable(cmd[1:])
	}
	cmd = strings.TrimLeft(cmd, "0123456789")
	switch cmd {
	case "", "g", "G", "F", "p", "%":
		return true
	}
	return false
}

// lessPrintable: only printable ASCII characters, none of which ends a
// command or is an editing key of less's command line.
func lessPrintable(s string) bool {
	if IsDyn(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// backupSrc, backupEnv and backups: cp, mv, ln, install (and rsync) -b or
// --backup move the file a destination replaces to a backup named
// DEST+SUFFIX (-S, which implies -b, --suffix, SIMPLE_BACKUP_SUFFIX; "~"
// by default): cp -S .yaml NEW warden renames ./warden to ./warden.yaml.
// A suffix with a "/" is replaced by "~" (gnulib backupfile.c); numbered
// backups are DEST.~N~. When the destination is a folder, the backup is
// of the file inside it.
const backupSrc = "; -b/--backup renames the file a destination replaces to DEST+SUFFIX (-S; SIMPLE_BACKUP_SUFFIX), or DEST.~N~ (VERSION_CONTROL)"

const backupEnv = "SIMPLE_BACKUP_SUFFIX=! VERSION_CONTROL"

func backups(r *Result, _ []string) {
	// -S alone implies a backup (cp -S .yaml NEW warden); rsync's
	// --suffix does not, --backup-dir does.
	if !hasFlag(r, "-b", "--backup", "--backup-dir") && (r.Spec.Name == "rsync" || !hasFlag(r, "-S")) {
		return
	}
	suffix := "~"
	for _, v := range append(r.Values("-S"), r.Values("--suffix")...) {
		suffix = v
	}
	if IsDyn(suffix) {
		r.risk("the backup suffix of %s is computed at run time", r.Spec.label())
		return
	}
	if strings.Contains(suffix, "/") && r.Spec.Name != "rsync" {
		suffix = "~"
	}
	name := r.Spec.Name
	var dests, sources []string
	for _, e := range r.Effects {
		if e.Arg == Target {
			dests = append(dests, e.Val+"/")
			continue
		}
		if e.Via != name || e.Flag != NoEffect {
			continue
		}
		switch e.Arg {
		case Plain:
		default:
			sources = append(sources, e.Val)
		}
	}
	if len(dests) == 0 && len(sources) > 0 {
		dests, sources = sources[len(sources)-1:], sources[:len(sources)-1]
	}
	add := func(p string) {
		for _, s := range []string{p + suffix, p + ".~1~"} {
			r.Effects = append(r.Effects, Effect{Arg: Write, Val: s, Via: name + " --backup"})
		}
	}
	for _, d := range dests {
		if !strings.HasSuffix(d, "/") {
			add(d)
		}
		for _, s := range sources {
			if IsDyn(s) || IsDyn(d) {
				continue
			}
			b := strings.TrimSuffix(s, "/")
			b = b[strings.LastIndexByte(b, '/')+1:]
			add(strings.TrimSuffix(d, "/") + "/" + b)
		}
	}
}

// listedReads: --files0-from=F (sort, wc, du) and file -f F read F, then
// every file F names: reads warden cannot see, so computed ones (asked
// for when the policy has private paths).
func listedReads(r *Result, _ []string) {
	for _, c := range []string{"--files0-from", "-f"} {
		if c == "-f" && r.Spec.Name != "file" {
			continue
		}
		for _, v := range r.Values(c) {
			r.Effects = append(r.Effects, Effect{Arg: Read, Val: "\x00(the files " + strings.TrimPrefix(v, "\x00") + " names)", Via: c})
		}
	}
}

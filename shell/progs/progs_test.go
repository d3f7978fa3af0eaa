package progs_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/warden-run/warden/shell/progs"
)

// TestEveryTableNamesItsSource: every program the tables know parses (the
// package would not load otherwise: register panics on a malformed entry)
// and cites where its facts come from, with a version, so that a reviewer
// can check an entry against the program it describes.
func TestEveryTableNamesItsSource(t *testing.T) {
	names := progs.Names()
	if len(names) < 100 {
		t.Fatalf("the tables know %d programs; a table file is not registered", len(names))
	}
	version := regexp.MustCompile(`[0-9]`)
	for _, n := range names {
		s := progs.Lookup(n)
		if s == nil {
			t.Errorf("%s: listed by Names but not found by Lookup", n)
			continue
		}
		if strings.TrimSpace(s.Source) == "" {
			t.Errorf("%s: no Source", n)
		} else if !version.MatchString(s.Source) {
			t.Errorf("%s: Source %q names no version", n, s.Source)
		}
		for _, sub := range s.Subcommands() {
			if s.Sub(sub) == nil {
				t.Errorf("%s %s: listed by Subcommands but not found by Sub", n, sub)
			}
		}
	}
}

// TestPackageDocNamesTheTableFiles: the package comment lists the files
// that hold the tables, and every one of them exists; every file of the
// package is listed there.
func TestPackageDocNamesTheTableFiles(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "progs.go", nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatal("progs.go has no package comment")
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`[a-z]+\.go`).FindAllString(f.Doc.Text(), -1) {
		listed[m] = true
		if _, err := os.Stat(m); err != nil {
			t.Errorf("the package comment names %s, which does not exist", m)
		}
	}
	files, _ := filepath.Glob("*.go")
	var missing []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "progs.go" || listed[name] {
			continue
		}
		missing = append(missing, name)
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the package comment does not name %s", strings.Join(missing, ", "))
	}
}

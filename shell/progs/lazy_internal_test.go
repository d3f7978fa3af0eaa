package progs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// TestLoadersCoverTableFiles: the tables are compiled at first use by the
// functions in loaders; a table file's registration function missing from
// the list would leave its programs unknown (every call to them asked
// about). Every top-level function of the package named initXxx is a
// loader, and no table file registers from an init function (it would
// run before the tables it may read are loaded).
func TestLoadersCoverTableFiles(t *testing.T) {
	listed := map[string]bool{}
	for _, f := range loaders {
		name := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
		listed[name[strings.LastIndex(name, ".")+1:]] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil {
				continue
			}
			name := fn.Name.Name
			if name == "init" {
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					if id, ok := n.(*ast.Ident); ok && (id.Name == "register" || id.Name == "table") {
						t.Errorf("%s: an init function uses %s; make it a loader (initXxx, listed in loaders)", file, id.Name)
						return false
					}
					return true
				})
				continue
			}
			if len(name) > 4 && strings.HasPrefix(name, "init") && name[4] >= 'A' && name[4] <= 'Z' {
				found++
				if !listed[name] {
					t.Errorf("%s: %s is not in loaders: its programs would never be registered", file, name)
				}
			}
		}
	}
	if found != len(loaders) {
		t.Errorf("%d loader functions in the files, %d in loaders", found, len(loaders))
	}
}

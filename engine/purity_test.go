package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The engine decides without reading the disk: what it knows of the file
// system comes from the Workspace view its caller built (package
// workspace). These tests read the engine's source (and that of the
// packages it decides with) and fail on a call that would reach the disk,
// the system or another process.

// ioImports are the packages whose functions touch files, processes, the
// network or the system.
var ioImports = map[string]bool{
	"os": true, "os/exec": true, "os/user": true, "os/signal": true, "syscall": true, "io/ioutil": true,
	"net": true, "net/http": true, "plugin": true, "golang.org/x/sys/unix": true,
}

// ioFuncs are the functions of pure packages that read the disk.
var ioFuncs = map[string][]string{
	"path/filepath": {"EvalSymlinks", "Walk", "WalkDir", "Glob", "Abs"},
}

// impure lists the uses of I/O in one Go file: a use of an I/O package
// (but the names in allowed, as "os.Getenv") and a call of an I/O function
// of a pure one, each as "file:line: pkg.Name".
func impure(fset *token.FileSet, f *ast.File, allowed []string) []string {
	byName := map[string]string{} // local name -> import path
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name := path[strings.LastIndexByte(path, '/')+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		byName[name] = path
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok || x.Obj != nil {
			return true // a field or method of a local value
		}
		path, ok := byName[x.Name]
		if !ok {
			return true
		}
		short := path[strings.LastIndexByte(path, '/')+1:]
		use := short + "." + sel.Sel.Name
		if ioImports[path] && !slices.Contains(allowed, use) || slices.Contains(ioFuncs[path], sel.Sel.Name) {
			out = append(out, fset.Position(sel.Pos()).String()+": "+use)
		}
		return true
	})
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		if ioImports[path] && len(allowed) == 0 {
			out = append(out, fset.Position(im.Pos()).String()+": import "+path)
		}
	}
	return out
}

// impureDir runs impure over the non-test Go files of a folder.
func impureDir(t *testing.T, dir string, allowed []string) []string {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	var out []string
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, impure(fset, f, allowed)...)
	}
	return out
}

// TestEngineIsPure: package engine reads the file system only through its
// Workspace view, and the packages it decides with read none (the shell
// package reads the locale's variables, which are not files, and looks up
// a user's home for a ~NAME word).
func TestEngineIsPure(t *testing.T) {
	root := ".." // go test runs a package's tests in its folder
	for _, c := range []struct {
		dir     string
		allowed []string
	}{
		{"engine", nil},
		// The shell expands ~NAME through the user database, not the
		// workspace (left as it is: see the engine's Workspace.UserHome
		// for the file tools' paths).
		{"shell", []string{"os.Getenv", "os.LookupEnv", "user.Lookup"}},
		{"shell/progs", nil},
		{"internal/glob", nil},
		{"internal/fold", nil},
	} {
		if found := impureDir(t, filepath.Join(root, c.dir), c.allowed); len(found) > 0 {
			t.Errorf("%s reaches the disk or the system on the decision path (read it through engine.Workspace):\n%s", c.dir, strings.Join(found, "\n"))
		}
	}
}

// TestPurityCheckFindsIO: the check above finds each kind of call it is
// for, so that its silence means something.
func TestPurityCheckFindsIO(t *testing.T) {
	src := `package engine

import (
	"os"
	"os/exec"
	fp "path/filepath"
	"syscall"
	"strings"
)

type view struct{}

func (view) Lstat(string) {}

func f(v view) {
	os.Lstat("/x")
	fp.EvalSymlinks("/x")
	fp.Join("a", "b")
	exec.Command("git")
	var st syscall.Stat_t
	_ = st
	v.Lstat("/x")
	strings.Cut("a", "b")
	_ = os.Getenv("HOME")
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var uses []string
	for _, s := range impure(fset, f, nil) {
		uses = append(uses, s[strings.LastIndex(s, ": ")+2:])
	}
	want := []string{"os.Lstat", "filepath.EvalSymlinks", "exec.Command", "syscall.Stat_t", "os.Getenv",
		"import os", "import os/exec", "import syscall"}
	if !slices.Equal(uses, want) {
		t.Errorf("found %q, want %q", uses, want)
	}
	uses = nil
	for _, s := range impure(fset, f, []string{"os.Getenv"}) {
		uses = append(uses, s[strings.LastIndex(s, ": ")+2:])
	}
	if slices.Contains(uses, "os.Getenv") || !slices.Contains(uses, "os.Lstat") {
		t.Errorf("with os.Getenv allowed: %q", uses)
	}
}

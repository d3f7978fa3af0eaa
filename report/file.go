package report

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// PluginFile is a declarative plugin loaded from a YAML or JSON file:
//
//	name: support                # the plugin attribute of its META block
//	schema: {type: object, ...}  # JSON Schema of the metadata
//	long_instruction: |          # full guidance, for the system prompt
//	  ...
//	short_instruction: ...       # one line, for reminders, examples, retries
//	example: {...}               # optional: a valid value shown to the model
//	on_complete:                 # optional
//	  command: [./notify.sh, --verbose]   # or one string, run by /bin/sh -c
//	  timeout: 10s                        # default 30s
//	spawn:                       # optional: a follow-up session after each completion
//	  host: claude                        # claude, codex, gemini or opencode
//	  prompt: "Check this answer: {{final_report}}"
//	  role: reviewer                      # optional; default the parent's role
//	  cwd: sub/folder                     # optional, relative to the project
//
// The on-complete command runs in the plugin file's folder and reads the
// [Completion] as JSON on its standard input. What it prints may ask for
// follow-up sessions ([ParseResult]). A PluginFile is immutable after
// loading and safe for concurrent use.
type PluginFile struct {
	// Path is the path as configured (relative, slash-separated); File is
	// the file that was read.
	Path string
	File string
	Name string
	// Requirements holds the schema (as JSON), the instructions, the
	// example and the on-complete timeout.
	Requirements Requirements
	// OnComplete is the command to run, nil when there is none.
	OnComplete []string
	// Spawn is the follow-up session asked for after each completion, nil
	// when there is none ([SpawnTemplate]).
	Spawn *SpawnTemplate

	content []byte
	dir     string // absolute folder of the file, where OnComplete runs
}

// PluginFiles is a set of loaded plugin files, in configuration order.
type PluginFiles []*PluginFile

// LoadPlugins loads declarative plugin files. Paths are relative to dir (the
// agent file's folder) and may use '/' or the OS separator; an absolute path
// or one with a ".." element is rejected. Every problem is a configuration
// error that names the file and, where known, the field and line: a missing
// file, an unsupported extension (.yaml, .yml and .json are supported), a
// syntax error, an unknown or missing field, an invalid name or schema, an
// example that fails the schema, an on-complete program that cannot be found,
// a name used twice. Symbolic links are followed.
func LoadPlugins(dir string, paths []string) (PluginFiles, error) {
	var out PluginFiles
	seen := map[string]string{}
	for _, p := range paths {
		f, err := loadPlugin(dir, p)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[f.Name]; dup {
			return nil, fmt.Errorf("plugin file %s: plugin name %q is already used by %s", p, f.Name, prev)
		}
		seen[f.Name] = p
		out = append(out, f)
	}
	return out, nil
}

// Factories returns one factory per file, for [Config].Plugins.
func (fs PluginFiles) Factories() []Factory {
	out := make([]Factory, len(fs))
	for i, f := range fs {
		out[i] = f.Factory()
	}
	return out
}

// Hash is a content hash over the plugin files, in order, for cache keys:
// it changes when any file's content, its path or
// the order changes. It has the form "sha256:<hex>".
func (fs PluginFiles) Hash() string {
	h := sha256.New()
	for _, f := range fs {
		sum := sha256.Sum256(f.content)
		fmt.Fprintf(h, "%d:%s\x00", len(f.Path), f.Path)
		h.Write(sum[:])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Factory returns a factory that makes a fresh plugin instance for each
// session.
func (f *PluginFile) Factory() Factory {
	return func() Plugin { return &filePlugin{f: f} }
}

type filePlugin struct{ f *PluginFile }

func (p *filePlugin) Name() string               { return p.f.Name }
func (p *filePlugin) Requirements() Requirements { return p.f.Requirements }

// OnComplete runs the file's command, if any, with the completion as JSON on
// its standard input, and asks for the follow-up sessions of the file's
// spawn key and of the command's output ([CreateSession]). The command is
// killed when ctx ends. A spawn that fails is an error of the call (logged
// by the session); the others are still asked for.
func (p *filePlugin) OnComplete(ctx context.Context, c Completion) error {
	var reqs []SpawnRequest
	if p.f.Spawn != nil {
		reqs = append(reqs, p.f.Spawn.Expand(c))
	}
	var errs []error
	if len(p.f.OnComplete) > 0 {
		out, err := runCommand(ctx, p.f.dir, p.f.OnComplete, c)
		if err != nil {
			errs = append(errs, err)
		} else if more, err := ParseResult(out); err != nil {
			errs = append(errs, &ResultError{Plugin: p.f.Name, Err: fmt.Errorf("command %s: %w", p.f.OnComplete[0], err)})
		} else {
			reqs = append(reqs, more...)
		}
	}
	for _, r := range reqs {
		r.Plugin, r.Parent = p.f.Name, c.SessionID
		if err := CreateSession(ctx, r); err != nil {
			errs = append(errs, fmt.Errorf("spawn a %s session: %w", r.Host, err))
		}
	}
	return errors.Join(errs...)
}

// CheckPluginPath applies the path rules of plugin files: relative, without
// a ".." element.
func CheckPluginPath(p string) error {
	if strings.TrimSpace(p) == "" {
		return errors.New("plugin path is empty")
	}
	slash := strings.ReplaceAll(p, `\`, "/")
	if filepath.IsAbs(p) || path.IsAbs(slash) || (len(p) >= 2 && p[1] == ':' && isLetter(p[0])) {
		return fmt.Errorf("plugin path %s is absolute; give it relative to the agent file", p)
	}
	for _, el := range strings.Split(slash, "/") {
		if el == ".." {
			return fmt.Errorf("plugin path %s contains \"..\"; plugin files must be inside the agent file's folder", p)
		}
	}
	return nil
}

const defaultFileTimeout = 30 * time.Second

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

func loadPlugin(dir, p string) (*PluginFile, error) {
	if err := CheckPluginPath(p); err != nil {
		return nil, err
	}
	rel := path.Clean(strings.ReplaceAll(p, `\`, "/"))
	file := filepath.Join(dir, filepath.FromSlash(rel))
	fail := func(line int, format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if line > 0 {
			return fmt.Errorf("plugin file %s: line %d: %s", p, line, msg)
		}
		return fmt.Errorf("plugin file %s: %s", p, msg)
	}
	ext := strings.ToLower(filepath.Ext(file))
	if ext != ".yaml" && ext != ".yml" && ext != ".json" {
		return nil, fail(0, "unsupported file type %q (use .yaml, .yml or .json)", ext)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fail(0, "file not found (looked for %s)", file)
		}
		return nil, fail(0, "%v", err)
	}
	if ext == ".json" && !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(string(data), int(se.Offset)-1)
			return nil, fail(line, "column %d: invalid JSON: %v", col, se)
		}
		return nil, fail(0, "invalid JSON: %v", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, fail(line, "invalid YAML: %s", m[2])
		}
		return nil, fail(0, "invalid YAML: %s", msg)
	}
	if len(doc.Content) == 0 {
		return nil, fail(0, "the file is empty")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fail(root.Line, "want a mapping with the fields name, schema, long_instruction, short_instruction")
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, fail(0, "%v", err)
	}
	f := &PluginFile{Path: p, File: file, content: data, dir: filepath.Dir(abs)}
	fields := map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "name", "schema", "long_instruction", "short_instruction", "example", "on_complete", "spawn":
		default:
			return nil, fail(k.Line, "unknown field %q (known: name, schema, long_instruction, short_instruction, example, on_complete, spawn)", k.Value)
		}
		if _, dup := fields[k.Value]; dup {
			return nil, fail(k.Line, "field %q is given twice", k.Value)
		}
		fields[k.Value] = v
	}
	for _, req := range []string{"name", "schema", "long_instruction", "short_instruction"} {
		if fields[req] == nil {
			return nil, fail(root.Line, "field %q is required", req)
		}
	}
	str := func(field string) (string, error) {
		n := fields[field]
		if n.Kind != yaml.ScalarNode || n.Tag != "!!str" && n.Tag != "" {
			return "", fail(n.Line, "field %q: want a string", field)
		}
		if strings.TrimSpace(n.Value) == "" {
			return "", fail(n.Line, "field %q: must not be empty", field)
		}
		return n.Value, nil
	}
	if f.Name, err = str("name"); err != nil {
		return nil, err
	}
	if !pluginName.MatchString(f.Name) {
		return nil, fail(fields["name"].Line, "field \"name\": %q is not a valid plugin name (1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit)", f.Name)
	}
	if f.Requirements.Instruction, err = str("long_instruction"); err != nil {
		return nil, err
	}
	if f.Requirements.ShortInstruction, err = str("short_instruction"); err != nil {
		return nil, err
	}
	sn := fields["schema"]
	if sn.Kind != yaml.MappingNode {
		return nil, fail(sn.Line, "field \"schema\": want a JSON Schema object")
	}
	raw, err := nodeJSON(sn)
	if err != nil {
		return nil, fail(sn.Line, "field \"schema\": %v", err)
	}
	f.Requirements.Schema = raw
	sch, err := compileSchema(f.Name, raw)
	if err != nil {
		return nil, fail(sn.Line, "field \"schema\": %s", strings.TrimPrefix(err.Error(), "schema: "))
	}
	f.Requirements.compiled = sch
	if en := fields["example"]; en != nil {
		raw, err := nodeJSON(en)
		if err != nil {
			return nil, fail(en.Line, "field \"example\": %v", err)
		}
		if _, st, det := checkJSON(sch, string(raw)); st != MetaValid {
			return nil, fail(en.Line, "field \"example\": does not satisfy the schema: %s", strings.Join(det, "; "))
		}
		f.Requirements.Example = raw
	}
	if on := fields["on_complete"]; on != nil {
		if err := f.loadOnComplete(on, fail); err != nil {
			return nil, err
		}
	}
	if sp := fields["spawn"]; sp != nil {
		if err := f.loadSpawn(sp, fail); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// loadSpawn reads the spawn key. The host's name is checked by the
// runtime (package report knows no hosts); here the fields, their types
// and the prompt's placeholders.
func (f *PluginFile) loadSpawn(n *yaml.Node, fail func(int, string, ...any) error) error {
	if n.Kind != yaml.MappingNode {
		return fail(n.Line, "field \"spawn\": want a mapping with host, prompt, role and cwd")
	}
	t := &SpawnTemplate{}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return fail(k.Line, "field \"spawn.%s\" is given twice", k.Value)
		}
		seen[k.Value] = true
		var dst *string
		switch k.Value {
		case "host":
			dst = &t.Host
		case "prompt":
			dst = &t.Prompt
		case "role":
			dst = &t.Role
		case "cwd":
			dst = &t.Cwd
		default:
			return fail(k.Line, "unknown field \"spawn.%s\" (known: host, prompt, role, cwd)", k.Value)
		}
		if v.Kind != yaml.ScalarNode || v.Tag != "!!str" && v.Tag != "" || strings.TrimSpace(v.Value) == "" {
			return fail(v.Line, "field \"spawn.%s\": want a non-empty string", k.Value)
		}
		*dst = v.Value
	}
	for _, req := range []string{"host", "prompt"} {
		if !seen[req] {
			return fail(n.Line, "field \"spawn.%s\" is required", req)
		}
	}
	if err := checkTemplate(t.Prompt); err != nil {
		return fail(n.Line, "field \"spawn.prompt\": %v", err)
	}
	f.Spawn = t
	return nil
}

func (f *PluginFile) loadOnComplete(on *yaml.Node, fail func(int, string, ...any) error) error {
	if on.Kind != yaml.MappingNode {
		return fail(on.Line, "field \"on_complete\": want a mapping with command and timeout")
	}
	f.Requirements.CompleteTimeout = defaultFileTimeout
	var cmdNode *yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(on.Content); i += 2 {
		k, v := on.Content[i], on.Content[i+1]
		if seen[k.Value] {
			return fail(k.Line, "field \"on_complete.%s\" is given twice", k.Value)
		}
		seen[k.Value] = true
		switch k.Value {
		case "command":
			cmdNode = v
			switch v.Kind {
			case yaml.ScalarNode:
				if strings.TrimSpace(v.Value) == "" {
					return fail(v.Line, "field \"on_complete.command\": must not be empty")
				}
				f.OnComplete = []string{"/bin/sh", "-c", v.Value}
			case yaml.SequenceNode:
				for _, a := range v.Content {
					if a.Kind != yaml.ScalarNode {
						return fail(a.Line, "field \"on_complete.command\": want a list of strings")
					}
					f.OnComplete = append(f.OnComplete, a.Value)
				}
				if len(f.OnComplete) == 0 || f.OnComplete[0] == "" {
					return fail(v.Line, "field \"on_complete.command\": must not be empty")
				}
			default:
				return fail(v.Line, "field \"on_complete.command\": want a string or a list of strings")
			}
		case "timeout":
			d, err := time.ParseDuration(v.Value)
			if err != nil || d <= 0 || v.Kind != yaml.ScalarNode {
				return fail(v.Line, "field \"on_complete.timeout\": %q is not a positive duration such as 10s or 2m", v.Value)
			}
			f.Requirements.CompleteTimeout = d
		default:
			return fail(k.Line, "unknown field \"on_complete.%s\" (known: command, timeout)", k.Value)
		}
	}
	if cmdNode == nil {
		return fail(on.Line, "field \"on_complete.command\" is required")
	}
	prog := f.OnComplete[0]
	if strings.ContainsAny(prog, `/\`) {
		if !filepath.IsAbs(prog) {
			prog = filepath.Join(f.dir, filepath.FromSlash(prog))
		}
		if st, err := os.Stat(prog); err != nil || st.IsDir() {
			return fail(cmdNode.Line, "field \"on_complete.command\": program %s not found (relative paths are resolved from the plugin file's folder)", f.OnComplete[0])
		}
		f.OnComplete[0] = prog
	} else if _, err := exec.LookPath(prog); err != nil {
		return fail(cmdNode.Line, "field \"on_complete.command\": program %q not found in PATH", prog)
	}
	return nil
}

// nodeJSON converts a YAML node to compact JSON, keeping the order of
// mapping keys as written.
func nodeJSON(n *yaml.Node) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := writeNodeJSON(&b, n, 0); err != nil {
		return nil, err
	}
	return json.RawMessage(b.Bytes()), nil
}

func writeNodeJSON(b *bytes.Buffer, n *yaml.Node, depth int) error {
	if depth > 100 {
		return errors.New("nested too deeply")
	}
	switch n.Kind {
	case yaml.AliasNode:
		return writeNodeJSON(b, n.Alias, depth+1)
	case yaml.MappingNode:
		b.WriteByte('{')
		seen := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
				return fmt.Errorf("line %d: key %s is not a string", k.Line, k.Value)
			}
			if first, dup := seen[k.Value]; dup {
				return fmt.Errorf("line %d: key %q is given twice (first at line %d)", k.Line, k.Value, first)
			}
			seen[k.Value] = k.Line
			if i > 0 {
				b.WriteByte(',')
			}
			kj, _ := json.Marshal(k.Value)
			b.Write(kj)
			b.WriteByte(':')
			if err := writeNodeJSON(b, n.Content[i+1], depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeNodeJSON(b, e, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		if t, ok := v.(time.Time); ok {
			v = t.Format(time.RFC3339Nano)
		}
		j, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("line %d: value %s has no JSON form", n.Line, n.Value)
		}
		b.Write(j)
	default:
		return fmt.Errorf("line %d: unsupported YAML node", n.Line)
	}
	return nil
}

// Changed reports whether any file's content on disk differs from what was
// loaded (or the file cannot be read any more): a runtime that keeps
// loaded plugin files between sessions loads them again.
func (fs PluginFiles) Changed() bool {
	for _, f := range fs {
		data, err := os.ReadFile(f.File)
		if err != nil || !bytes.Equal(data, f.content) {
			return true
		}
	}
	return false
}

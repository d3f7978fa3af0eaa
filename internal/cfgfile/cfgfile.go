// Package cfgfile edits other programs' configuration files the way warden
// must: a JSON object keeps its keys in their order (so that a merged file
// differs from the user's only where warden adds), a file is replaced
// atomically (a crash leaves the old file or the new one, never half of
// each), and a file warden changes is backed up first. `warden init`
// (through the host packages), the serve token file and `warden compile
// --write` use it.
package cfgfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Object is a JSON object that keeps its keys in order.
type Object struct {
	keys []string
	vals map[string]json.RawMessage
}

// NewObject returns an empty object.
func NewObject() *Object { return &Object{vals: map[string]json.RawMessage{}} }

// ParseObject reads a JSON object; empty data is an empty object.
func ParseObject(data []byte) (*Object, error) {
	o := NewObject()
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("value of %q: %w", key, err)
		}
		if _, dup := o.vals[key]; !dup {
			o.keys = append(o.keys, key)
		}
		o.vals[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON object")
	}
	return o, nil
}

// Keys returns the object's keys in order.
func (o *Object) Keys() []string { return slices.Clone(o.keys) }

// Len is the number of keys.
func (o *Object) Len() int { return len(o.keys) }

// Get returns the raw value of key.
func (o *Object) Get(key string) (json.RawMessage, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// Set sets key to v (a json.RawMessage is kept as it is), appending a new
// key at the end.
func (o *Object) Set(key string, v any) error {
	js, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = js
	return nil
}

// Delete removes key.
func (o *Object) Delete(key string) {
	delete(o.vals, key)
	o.keys = slices.DeleteFunc(o.keys, func(k string) bool { return k == key })
}

// MarshalJSON writes the object with its keys in order.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kj, _ := json.Marshal(k)
		b.Write(kj)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Indent is the object as a file: indented by two spaces, with a final
// newline.
func (o *Object) Indent() ([]byte, error) {
	raw, err := o.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// WriteAtomic replaces file with data, with permissions perm: it writes a
// temporary file in the same folder, syncs it and renames it over file, so
// a reader (or a crash) sees the old content or the new, never a part.
// The folder must exist.
func WriteAtomic(file string, data []byte, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// Write replaces another program's file atomically, creating its folder,
// and keeps the permissions of the file it replaces (0644 for a new one).
func Write(file string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	perm := fs.FileMode(0o644)
	if st, err := os.Stat(file); err == nil {
		perm = st.Mode().Perm()
	}
	return WriteAtomic(file, data, perm)
}

// BackupSuffix ends the name of the first backup of a file warden changed.
const BackupSuffix = ".warden-backup"

// Backup copies data to file.warden-backup, or to a timestamped name when
// that exists already, and returns the name.
func Backup(file string, data []byte) (string, error) {
	bak := file + BackupSuffix
	if _, err := os.Stat(bak); err == nil {
		bak = file + BackupSuffix + "-" + time.Now().UTC().Format("20060102T150405.000000000")
	}
	if err := os.WriteFile(bak, data, 0o600); err != nil {
		return "", fmt.Errorf("back up %s: %w", file, err)
	}
	return bak, nil
}

// HasBackup reports whether warden backed file up before: the file was
// the user's before warden changed it.
func HasBackup(file string) bool {
	_, err := os.Stat(file + BackupSuffix)
	return err == nil
}

// Rewrite writes out to file, backing up its old content data first when
// keep says so. It returns what it did, for the user.
func Rewrite(file string, data, out []byte, keep bool) ([]string, error) {
	var changes []string
	if keep {
		bak, err := Backup(file, data)
		if err != nil {
			return nil, err
		}
		changes = append(changes, "backed up "+file+" to "+bak)
	}
	return changes, Write(file, out)
}

// WriteManaged writes a file warden owns (a plugin). A file with other
// content is backed up first; the same content is left alone.
func WriteManaged(file string, content []byte) ([]string, error) {
	old, err := os.ReadFile(file)
	if err == nil && bytes.Equal(old, content) {
		return nil, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	changes, err := Rewrite(file, old, content, err == nil)
	if err != nil {
		return changes, err
	}
	return append(changes, "wrote "+file), nil
}

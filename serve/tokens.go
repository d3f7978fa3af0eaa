package serve

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/warden-run/warden/internal/cfgfile"
	"github.com/warden-run/warden/policy"
	"github.com/warden-run/warden/workspace"
)

// Token kinds. An agent token may decide calls and send the hooks' session
// events; a person token may answer approvals, manage grants, read the
// audit trail and sessions and try policies. Neither can do the other's
// part.
const (
	KindAgent  = "agent"
	KindPerson = "person"
)

// tokenPrefix starts every token, so that one is recognisable in a leak.
const tokenPrefix = "wdn_"

// Token is one entry of the tokens file: the token itself is never kept,
// only its SHA-256.
type Token struct {
	Name    string    `json:"name"`
	Kind    string    `json:"kind"`
	Hash    string    `json:"sha256"`
	Created time.Time `json:"created"`
	// Expires is when the token stops being taken (zero: never).
	Expires time.Time `json:"expires,omitzero"`
}

// Expired reports whether the token has expired at the time.
func (t Token) Expired(now time.Time) bool { return !t.Expires.IsZero() && !now.Before(t.Expires) }

// ExpiredError is Check's error for a token past its expiry.
type ExpiredError struct {
	Name, Kind string
	At         time.Time
}

func (e *ExpiredError) Error() string {
	return fmt.Sprintf("the %s token %s expired at %s: make a new one with `warden serve token add`", e.Kind, e.Name, e.At.UTC().Format(time.RFC3339))
}

// ParseExpiry reads when a token expires: a duration from now ("30d",
// "12h", as policy durations are written) or a time (RFC 3339). It must
// be in the future.
func ParseExpiry(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	var at time.Time
	if d, err := policy.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("expires %q: want a positive duration (30d, 12h) or a time (RFC 3339)", s)
		}
		at = now.Add(d)
	} else if t, err := time.Parse(time.RFC3339, s); err == nil {
		at = t
	} else {
		return time.Time{}, fmt.Errorf("expires %q: want a duration (30d, 12h) or a time (RFC 3339, such as 2026-12-31T18:00:00Z)", s)
	}
	if !at.After(now) {
		return time.Time{}, fmt.Errorf("expires %q: that is in the past", s)
	}
	return at.UTC(), nil
}

// Tokens is the tokens file of a service: JSON, written 0600, read again
// when it changes (a token added or revoked applies without a restart,
// also to every replica that shares the file).
type Tokens struct {
	file string
	// view tells whether the file changed, with no stat while the
	// system's watcher saw nothing (see workspace.View).
	view *workspace.View

	mu     sync.Mutex
	stamp  os.FileInfo // of the file last read
	byHash map[[sha256.Size]byte]Token
}

// DefaultTokensFile is the tokens file next to a policy:
// .warden/serve-tokens.json.
func DefaultTokensFile(policyFile string) string {
	abs, err := filepath.Abs(policyFile)
	if err != nil {
		abs = policyFile
	}
	return filepath.Join(filepath.Dir(abs), ".warden", "serve-tokens.json")
}

// OpenTokens returns the tokens kept in file (none yet when it does not
// exist).
func OpenTokens(file string) *Tokens { return &Tokens{file: file, view: workspace.New()} }

// File is the tokens file's path.
func (t *Tokens) File() string { return t.file }

func hashToken(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// read loads the file when it changed since it was last read.
func (t *Tokens) read() (map[[sha256.Size]byte]Token, error) {
	t.view.Refresh()
	fi, err := t.view.Stat(t.file)
	t.mu.Lock()
	defer t.mu.Unlock()
	if errors.Is(err, os.ErrNotExist) {
		t.byHash, t.stamp = map[[sha256.Size]byte]Token{}, nil
		return t.byHash, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tokens file %s: %w", t.file, err)
	}
	// The same file, size and modification time: read already. This
	// runs for every request, so it allocates nothing.
	if t.byHash != nil && t.stamp != nil && os.SameFile(fi, t.stamp) && fi.Size() == t.stamp.Size() && fi.ModTime().Equal(t.stamp.ModTime()) {
		return t.byHash, nil
	}
	list, err := t.load()
	if err != nil {
		return nil, err
	}
	m := make(map[[sha256.Size]byte]Token, len(list))
	for _, tk := range list {
		var sum [sha256.Size]byte
		hex.Decode(sum[:], []byte(tk.Hash)) // checked by load
		m[sum] = tk
	}
	t.byHash, t.stamp = m, fi
	return m, nil
}

func (t *Tokens) load() ([]Token, error) {
	data, err := os.ReadFile(t.file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tokens file %s: %w", t.file, err)
	}
	var list []Token
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("tokens file %s: not a JSON list of tokens: %w", t.file, err)
	}
	for i, tk := range list {
		if tk.Kind != KindAgent && tk.Kind != KindPerson {
			return nil, fmt.Errorf("tokens file %s: token %d (%s): kind %q: want agent or person", t.file, i+1, tk.Name, tk.Kind)
		}
		if _, err := hex.DecodeString(tk.Hash); err != nil || len(tk.Hash) != 64 {
			return nil, fmt.Errorf("tokens file %s: token %d (%s): sha256 is not a SHA-256 in hex", t.file, i+1, tk.Name)
		}
	}
	return list, nil
}

// Check returns the token tok names. A token the file does not hold, or a
// file that cannot be read, is an error: never a pass.
func (t *Tokens) Check(tok string) (Token, error) {
	if !strings.HasPrefix(tok, tokenPrefix) {
		return Token{}, errors.New("not a warden serve token")
	}
	m, err := t.read()
	if err != nil {
		return Token{}, err
	}
	// The map is keyed by the token's SHA-256: looking one up reveals
	// nothing of the tokens it holds.
	tk, ok := m[sha256.Sum256([]byte(tok))]
	if !ok {
		return Token{}, errors.New("unknown or revoked token")
	}
	if tk.Expired(time.Now()) {
		return Token{}, &ExpiredError{Name: tk.Name, Kind: tk.Kind, At: tk.Expires}
	}
	return tk, nil
}

// Add creates a token of a kind under a unique name and returns the token
// itself: it is shown once and never stored.
func (t *Tokens) Add(name, kind string) (string, error) {
	return t.AddExpiring(name, kind, time.Time{})
}

// AddExpiring is Add for a token that expires at a time (zero: never).
func (t *Tokens) AddExpiring(name, kind string, expires time.Time) (string, error) {
	if kind != KindAgent && kind != KindPerson {
		return "", fmt.Errorf("token kind %q: want agent or person", kind)
	}
	if strings.TrimSpace(name) == "" {
		return "", errors.New("a token needs a name (who or what uses it)")
	}
	list, err := t.load()
	if err != nil {
		return "", err
	}
	for _, tk := range list {
		if tk.Name == name {
			return "", fmt.Errorf("a token named %q exists already (revoke it first)", name)
		}
	}
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	tok := tokenPrefix + hex.EncodeToString(b[:])
	list = append(list, Token{Name: name, Kind: kind, Hash: hashToken(tok), Created: time.Now().UTC(), Expires: expires.UTC()})
	return tok, t.write(list)
}

// Revoke removes the token of a name.
func (t *Tokens) Revoke(name string) error {
	list, err := t.load()
	if err != nil {
		return err
	}
	out := list[:0]
	for _, tk := range list {
		if tk.Name != name {
			out = append(out, tk)
		}
	}
	if len(out) == len(list) {
		return fmt.Errorf("no token named %q in %s", name, t.file)
	}
	return t.write(out)
}

// List returns the tokens, by name.
func (t *Tokens) List() ([]Token, error) {
	list, err := t.load()
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return list, err
}

// write replaces the file atomically.
func (t *Tokens) write(list []Token) error {
	if list == nil {
		list = []Token{}
	}
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.file), 0o700); err != nil {
		return err
	}
	return cfgfile.WriteAtomic(t.file, append(data, '\n'), 0o600)
}

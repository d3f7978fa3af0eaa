package report

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
)

// DefaultPrefix is the tag prefix used when none is configured.
const DefaultPrefix = "warden"

// maxTagLen bounds the length of a tag, and with it the filter's look-ahead.
const maxTagLen = 256

// Tags names the blocks of one session: a prefix and a nonce. The zero value
// is not usable; build one with [NewTags] or [ParseTags].
type Tags struct {
	Prefix string
	Nonce  string
}

// NewTags returns tags with the given prefix ("" means [DefaultPrefix]) and a
// fresh random nonce of 8 hex digits read from r (nil means crypto/rand).
func NewTags(prefix string, r io.Reader) (Tags, error) {
	if r == nil {
		r = rand.Reader
	}
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return Tags{}, fmt.Errorf("report: nonce: %w", err)
	}
	return ParseTags(prefix, hex.EncodeToString(b[:]))
}

// ParseTags checks a prefix ("" means [DefaultPrefix]) and a nonce and returns
// the tags they make. Both must be 1 to 32 characters of ASCII letters and
// digits; the prefix may also contain '_' and '-' after its first letter.
func ParseTags(prefix, nonce string) (Tags, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if len(prefix) > 32 || !isLetter(prefix[0]) {
		return Tags{}, fmt.Errorf("report: tag prefix %q: want 1 to 32 characters starting with a letter", prefix)
	}
	for i := 0; i < len(prefix); i++ {
		if c := prefix[i]; !isAlnum(c) && c != '_' && c != '-' {
			return Tags{}, fmt.Errorf("report: tag prefix %q: character %q is not allowed (letters, digits, '_' and '-' only)", prefix, c)
		}
	}
	if nonce == "" || len(nonce) > 32 {
		return Tags{}, fmt.Errorf("report: nonce %q: want 1 to 32 letters or digits", nonce)
	}
	for i := 0; i < len(nonce); i++ {
		if !isAlnum(nonce[i]) {
			return Tags{}, fmt.Errorf("report: nonce %q: character %q is not allowed (letters and digits only)", nonce, nonce[i])
		}
	}
	return Tags{Prefix: prefix, Nonce: nonce}, nil
}

func (t Tags) base() string { return t.Prefix + "-" + t.Nonce + "-" }

// FinalName is the FINAL tag name, such as "warden-1f2e3d4c-FINAL".
func (t Tags) FinalName() string { return t.base() + "FINAL" }

// MetaName is the META tag name, such as "warden-1f2e3d4c-META".
func (t Tags) MetaName() string { return t.base() + "META" }

// OpenFinal is the opening FINAL tag.
func (t Tags) OpenFinal() string { return "<" + t.FinalName() + ">" }

// CloseFinal is the closing FINAL tag.
func (t Tags) CloseFinal() string { return "</" + t.FinalName() + ">" }

// OpenMeta is the opening META tag for a plugin.
func (t Tags) OpenMeta(plugin string) string {
	return "<" + t.MetaName() + ` plugin="` + plugin + `">`
}

// CloseMeta is the closing META tag.
func (t Tags) CloseMeta() string { return "</" + t.MetaName() + ">" }

// DetectTags looks for the first tag with the given prefix ("" means
// [DefaultPrefix]) in a response and returns the tags it uses. It reports
// false when there is none. It serves tools that inspect a saved response
// whose nonce is unknown; a runtime knows its nonce.
func DetectTags(prefix string, response []byte) (Tags, bool) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	p := []byte(prefix + "-")
	for i := 0; i < len(response); i++ {
		if response[i] != '<' {
			continue
		}
		j := i + 1
		if j < len(response) && response[j] == '/' {
			j++
		}
		if len(response)-j < len(p) || string(response[j:j+len(p)]) != string(p) {
			continue
		}
		k := j + len(p)
		e := k
		for e < len(response) && e-k < 33 && isAlnum(response[e]) {
			e++
		}
		if e == k || e >= len(response) || response[e] != '-' {
			continue
		}
		rest := response[e+1:]
		if hasPrefix(rest, "FINAL") || hasPrefix(rest, "META") {
			if t, err := ParseTags(prefix, string(response[k:e])); err == nil {
				return t, true
			}
		}
	}
	return Tags{}, false
}

func hasPrefix(b []byte, s string) bool { return len(b) >= len(s) && string(b[:len(s)]) == s }

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool  { return isLetter(c) || isDigit(c) }
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

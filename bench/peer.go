package bench

import "strings"

// Variant is how a warden command pattern is translated for an engine that
// matches the raw command string.
type Variant int

const (
	// Contains is what a careful Rego or Cedar user writes: a deny pattern
	// matches anywhere in the line ("*rm -rf*"), so it also catches
	// "echo hi; rm -rf x"; an allow pattern must match from the start
	// ("git status*"), since an allow that matched anywhere would vouch for
	// whatever else the line runs. The timing tables use this variant.
	Contains Variant = iota
	// Literal translates every pattern as written, anchored at the start
	// ("rm -rf *" is "rm -rf*"), as a user reading warden's or a
	// permission list's syntax would.
	Literal
)

func (v Variant) String() string {
	if v == Literal {
		return "literal"
	}
	return "contains"
}

// peerGlob translates a warden command pattern into a glob on the raw
// command string, where "*" matches any run of characters: a trailing " *"
// becomes "*" (so the bare command matches too), and in the Contains
// variant a deny or ask pattern may start anywhere.
func peerGlob(pattern, effect string, v Variant) string {
	g := pattern
	if s, ok := strings.CutSuffix(g, " *"); ok {
		g = s + "*"
	}
	if v == Contains && effect != "allow" {
		if !strings.HasPrefix(g, "*") {
			g = "*" + g
		}
		if !strings.HasSuffix(g, "*") {
			g += "*"
		}
	}
	return g
}

// globShape says what string test a glob is: an exact string, a prefix, a
// substring, or a general glob.
type globShape int

const (
	shapeExact globShape = iota
	shapePrefix
	shapeContains
	shapeGlob
)

// shape returns the glob's shape and its literal text (for all shapes but
// shapeGlob).
func shape(g string) (globShape, string) {
	inner := strings.Trim(g, "*")
	if strings.Contains(inner, "*") {
		return shapeGlob, ""
	}
	lead, trail := strings.HasPrefix(g, "*"), strings.HasSuffix(g, "*")
	switch {
	case lead && trail:
		return shapeContains, inner
	case trail:
		return shapePrefix, inner
	case lead:
		return shapeGlob, ""
	}
	return shapeExact, g
}

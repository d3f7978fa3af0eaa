package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run([]string{"-count", "1", "-benchtime", "5x", "-sizes", "20,200"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	s := out.String()
	for _, want := range []string{
		"### One decision", "| 20 | allow |", "| 200 | compound |", "### Scaling", "### Throughput",
		"| 200 | cedar |", "### Correctness", "opa-literal", "cedar-literal", "`rm -fr x`",
		"### Targets", "warden denies every dangerous spelling: **met**",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(s)
	}
}

func TestRunBadSizes(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run([]string{"-sizes", "5"}, &out, &errs); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if !strings.Contains(errs.String(), "-sizes") {
		t.Errorf("stderr %q does not name -sizes", errs.String())
	}
}

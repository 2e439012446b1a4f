package jqfilter

import (
	"strings"
	"testing"
)

// TestApply: strings print as text, other results as compact JSON, each
// on a line; big integers stay exact; every value of the input is
// filtered; a failing expression is an error; a bad one does not compile.
func TestApply(t *testing.T) {
	for _, c := range []struct{ expr, in, want string }{
		{".[].name", `[{"name":"a"},{"name":"b"}]`, "a\nb\n"},
		{"{ok}", `{"ok":true,"x":1}`, "{\"ok\":true}\n"},
		{".n", `{"n":123456789012345678901234567890}`, "123456789012345678901234567890\n"},
		{".n + 1", `{"n":1.5}`, "2.5\n"},
		{".", "1 2", "1\n2\n"},
	} {
		f, err := Compile(c.expr)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		var b strings.Builder
		if err := f.Apply(&b, strings.NewReader(c.in)); err != nil {
			t.Fatalf("%s on %s: %v", c.expr, c.in, err)
		}
		if b.String() != c.want {
			t.Errorf("%s on %s = %q, want %q", c.expr, c.in, b.String(), c.want)
		}
	}
	f, _ := Compile(`error("boom")`)
	if err := f.Apply(&strings.Builder{}, strings.NewReader("{}")); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("error(): %v", err)
	}
	if _, err := Compile(".[] |"); err == nil {
		t.Error("a broken expression compiled")
	}
	if err := f.Apply(&strings.Builder{}, strings.NewReader("{nope")); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("input that is not JSON: %v", err)
	}
}

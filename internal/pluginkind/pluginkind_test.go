package pluginkind

import "testing"

// TestRows: names are unique and not empty, each mark implies at most one
// kind, and List words the names as the messages do.
func TestRows(t *testing.T) {
	names := map[string]bool{}
	marks := map[Mark]string{}
	for _, r := range Rows {
		if r.Name == "" || names[r.Name] {
			t.Errorf("kind %q is empty or listed twice", r.Name)
		}
		names[r.Name] = true
		if r.ImpliedBy == 0 {
			continue
		}
		if other, dup := marks[r.ImpliedBy]; dup {
			t.Errorf("mark %d implies both %q and %q", r.ImpliedBy, other, r.Name)
		}
		marks[r.ImpliedBy] = r.Name
	}
	if got, want := List(), `"agenthost", "wasi_cli", "extism" or "component"`; got != want {
		t.Errorf("List() = %s, want %s", got, want)
	}
	if r, ok := Lookup(""); ok || r.Config || r.HTTP || r.Reuse {
		t.Errorf("Lookup(\"\") = %+v, %v; want the zero row, false", r, ok)
	}
	if Implied(MarkHeader) != Component || Implied(MarkToolBlocks) != WASICLI {
		t.Errorf("Implied: header %q, tool blocks %q", Implied(MarkHeader), Implied(MarkToolBlocks))
	}
}

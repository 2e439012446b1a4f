package provider

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

func TestSpliceMessages(t *testing.T) {
	body := []byte(`{"model":"m \"messages\":null","messages":null,"stream":true}`)
	parts, ok := spliceMessages(body, []byte(`[{"role":"user","content":"hi"}]`))
	got := bytes.Join(parts, nil)
	if !ok || string(got) != `{"model":"m \"messages\":null","messages":[{"role":"user","content":"hi"}],"stream":true}` {
		t.Errorf("spliceMessages = %s, %v", got, ok)
	}
	if _, ok := spliceMessages([]byte(`{"model":"m"}`), []byte(`[]`)); ok {
		t.Error("spliceMessages found a key that is not there")
	}
}

// TestPartsReader: a spliced body reads as its parts joined, in reads of
// any size, and reading it leaves the parts as they were, so GetBody can
// send it again (a redirect, a retried connection).
func TestPartsReader(t *testing.T) {
	parts := [][]byte{[]byte(`{"a":`), nil, []byte(`[1,2,3]`), []byte(``), []byte(`}`)}
	want := `{"a":[1,2,3]}`
	for range 2 {
		got, err := io.ReadAll(iotest.OneByteReader(newPartsReader(parts)))
		if err != nil || string(got) != want {
			t.Fatalf("read %q, %v; want %q", got, err, want)
		}
	}
	if got, _ := io.ReadAll(newPartsReader(parts)); string(got) != want {
		t.Fatalf("read %q after two readers, want %q", got, want)
	}
}

package provider

import (
	"bytes"
	"testing"
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

package provider

import (
	"bytes"
	"encoding/json"
	"testing"
)

// appendString must escape exactly as encoding/json does, so that the
// bytes on the wire are those go-openai's marshaller would have sent.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "plain", `quote " and \ backslash`, "tab\tnl\ncr\r\b\f\x00\x1f\x7f",
		"<html> & </html>", "ünïcödé 日本 🙂", "line\u2028sep\u2029para",
		"bad \xff utf8 \xe2\x82", "\xed\xa0\x80 surrogate",
	} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString(nil, s); string(got) != string(want) {
			t.Errorf("appendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("a<b>\"c\"\\\n\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); string(got) != string(want) {
			t.Errorf("appendString(%q) = %s, want %s", s, got, want)
		}
	})
}

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

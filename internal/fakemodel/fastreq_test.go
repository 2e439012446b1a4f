package fakemodel

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// checkRequest fails when readRequest takes a body that encoding/json does
// not decode to the same two fields.
func checkRequest(t *testing.T, body []byte) bool {
	t.Helper()
	model, stream, ok := readRequest(body)
	if !ok {
		return false
	}
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("readRequest took %q, encoding/json: %v", body, err)
	}
	if req.Model != model || req.Stream != stream {
		t.Fatalf("readRequest(%q) = %q, %v; encoding/json %q, %v", body, model, stream, req.Model, req.Stream)
	}
	return true
}

var requestSamples = []string{
	`{"model":"m","messages":[{"role":"user","content":"hi \"there\" \u00e9\n"}],"stream":true}`,
	`{"model":"fake-model","messages":[],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"n":{"type":"number","minimum":-1.5e3}}}}}],"stream":true,"stream_options":{"include_usage":true},"temperature":0.2,"n":null,"x":[true,false,null,0,-0,12,3.25,1E+2]}`,
	` { "stream" : false , "model" : "a" } `,
	`{}`,
	`{"stream":true,"stream":false,"model":"a","model":"b"}`,
}

// TestReadRequestMatchesEncodingJSON: on request bodies and 20,000
// mutations of them, whatever the fast path takes decodes the same with
// encoding/json; the usual bodies do take it.
func TestReadRequestMatchesEncodingJSON(t *testing.T) {
	for _, s := range requestSamples {
		if !checkRequest(t, []byte(s)) {
			t.Errorf("fast path gave up on %s", s)
		}
	}
	pieces := []string{`"`, `\`, `\u00`, `\x`, "\x01", `}`, `]`, `{`, `[`, `,`, `:`, `-`, `0`, `01`, `1.`, `.5`, `1e`, `e5`, `tru`, `nul`, `"Model"`, `"STREAM"`, `"mod\u0065l"`, "\"\u017ftream\"", ` `, "\xff", `"stream":1`, `"model":null`}
	r := rand.New(rand.NewPCG(1, 2))
	took := 0
	for n := 0; n < 20000; n++ {
		b := []byte(requestSamples[r.IntN(len(requestSamples))])
		for range 1 + r.IntN(3) {
			at := r.IntN(len(b) + 1)
			p := pieces[r.IntN(len(pieces))]
			if r.IntN(2) == 0 && at < len(b) {
				b = append(b[:at:at], b[at+1:]...) // delete a byte
			}
			b = []byte(string(b[:at]) + p + string(b[at:]))
		}
		if checkRequest(t, b) {
			took++
		}
	}
	t.Logf("fast path took %d of 20000 mutated bodies", took)
}

func FuzzReadRequest(f *testing.F) {
	for _, s := range requestSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkRequest(t, body) })
}

// BenchmarkReadRequest reads the body of a 200-step run's last request.
func BenchmarkReadRequest(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"model":"fake-model","messages":[{"role":"user","content":"Go."}`)
	for i := range 200 {
		sb.WriteString(`,{"role":"assistant","content":"","tool_calls":[{"id":"call_` + string(rune('a'+i%26)) + `","type":"function","function":{"name":"count_vowels","arguments":"{\"text\":\"step\"}"}}]},{"role":"tool","content":"{\"count\":1}","tool_call_id":"call_x"}`)
	}
	sb.WriteString(`],"stream":true}`)
	body := []byte(sb.String())
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, _, ok := readRequest(body); !ok {
			b.Fatal("fast path gave up")
		}
	}
}

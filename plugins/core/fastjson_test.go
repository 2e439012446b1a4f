package main

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// jsonSamples are requests and argument objects: the common shapes (which
// the fast path must take) and ones it must leave to encoding/json.
var jsonSamples = []string{
	`{"tool":"read_file","arguments":{"path":"a.txt"},"call_id":"c1"}`,
	` { "tool" : "read_file" , "arguments" : { "path" : "dir/a b.txt" , "offset" : 2 , "limit" : 10 } , "call_id" : "c1" } `,
	`{"tool":"write_file","arguments":{"path":"x","content":"line\n\"q\"\\\/\b\f\r\t"},"call_id":"c2"}`,
	`{"tool":"edit","arguments":{"path":"x","old_string":"é","new_string":"日本"},"call_id":"c3"}`,
	`{"tool":"search","arguments":{"pattern":"a.b","regexp":true,"case_insensitive":false,"max_results":-3,"path":"."},"call_id":"c4"}`,
	`{"tool":"list_dir","arguments":{"path":"","recursive":true},"call_id":"c5"}`,
	`{"tool":"list_dir","arguments":{},"call_id":""}`,
	`{"tool":"list_dir","arguments":[1,2.5e-3,{"a":[true,false,null]},"s"],"call_id":"c"}`,
	`{"arguments":{"path":"a"},"tool":"read_file","tool":"write_file"}`,
	`{}`,
	// Not for the fast path:
	`{"Tool":"read_file","arguments":{"PATH":"a.txt"}}`,
	`{"tool":"read_file","arguments":{"path":"a\u00e9.txt"}}`,
	`{"tool":"read_file","arguments":{"path":"a","offset":1.5}}`,
	`{"tool":"read_file","arguments":{"path":"a","offset":1e2}}`,
	`{"tool":"read_file","arguments":{"path":"a","offset":99999999999999999999}}`,
	`{"tool":"read_file","arguments":{"path":"a","offset":null,"limit":"3"}}`,
	`{"tool":"read_file","arguments":{"path":"a","extra":1}}`,
	`{"tool":"write_file","arguments":{"path":"a","content":null}}`,
	`{"tool":"read_file","arguments":"{\"path\":\"a\"}"}`,
	`{"tool":"read_file","arguments":{"path":"a"}} x`,
	`{"tool":"read_file","arguments":{"path":"a"}}{}`,
	`{"tool":"read_file","arguments":{"path":"a",}}`,
	`{"tool":"read_file","arguments":{"path":"a"},"call_id":7}`,
	`{"tool":"read_file","arguments":{"path":"a` + "\xff" + `"}}`,
	`{"tool":"read_file","arguments":{"path":"a` + "\x01" + `"}}`,
	`{"tool":"read_file","arguments":01}`,
	`{"tool":"read_file","arguments":-}`,
	`{"tool":"read_file","arguments":tru}`,
	`{"tool":null}`,
	`[]`,
	`"x"`,
	``,
}

// TestFastJSONMatchesEncodingJSON: on every sample and on random mutations
// of them, the fast decoders either decline or give what encoding/json
// gives: the same request, the same arguments (and the same error).
func TestFastJSONMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	inputs := append([]string(nil), jsonSamples...)
	for range 20000 {
		b := []byte(jsonSamples[rng.Intn(len(jsonSamples))])
		for range 1 + rng.Intn(3) {
			if len(b) == 0 {
				break
			}
			i := rng.Intn(len(b))
			switch rng.Intn(3) {
			case 0:
				b = append(b[:i:i], b[i+1:]...)
			case 1:
				b[i] = `{}[]",:\ 0-1.eEnulltruefalse`[rng.Intn(28)]
			case 2:
				b = append(b[:i:i], append([]byte{b[i]}, b[i:]...)...)
			}
		}
		inputs = append(inputs, string(b))
	}
	fastReq, fastArg := 0, 0
	for _, in := range inputs {
		want, wantErr := slowRequest([]byte(in))
		got, ok := fastRequest([]byte(in))
		if ok {
			fastReq++
			if wantErr != nil {
				t.Fatalf("%q: fast request decoded, encoding/json: %v", in, wantErr)
			}
			if got.Tool != want.Tool || got.CallID != want.CallID || !bytes.Equal(got.Arguments, want.Arguments) {
				t.Fatalf("%q: fast request %+v, encoding/json %+v", in, got, want)
			}
		}
		if wantErr != nil {
			continue
		}
		for _, tool := range []string{"read_file", "write_file", "list_dir", "search", "edit"} {
			for _, newArgs := range []func() any{
				func() any { return &readFileArgs{} }, func() any { return &writeFileArgs{} },
				func() any { return &listDirArgs{} }, func() any { return &searchArgs{} },
				func() any { return &editArgs{} },
			} {
				fast, slow := newArgs(), newArgs()
				errFast := decodeArgs(tool, want.Arguments, fast)
				errSlow := slowArgs(tool, want.Arguments, slow)
				if (errFast == nil) != (errSlow == nil) || errFast != nil && errFast.Error() != errSlow.Error() {
					t.Fatalf("%q as %T: error %v, encoding/json %v", want.Arguments, fast, errFast, errSlow)
				}
				if errSlow == nil && !reflect.DeepEqual(fast, slow) {
					t.Fatalf("%q as %T: %+v, encoding/json %+v", want.Arguments, fast, fast, slow)
				}
				raw := bytes.TrimSpace(want.Arguments)
				if len(raw) > 0 && raw[0] == '{' && fastArgs(raw, newArgs()) {
					fastArg++
				}
			}
		}
	}
	// The common shapes above must take the fast path (else it is dead).
	if fastReq < 10 || fastArg < 10 {
		t.Errorf("fast path taken %d times for requests, %d for arguments", fastReq, fastArg)
	}
	for _, in := range jsonSamples[:10] {
		if _, ok := fastRequest([]byte(in)); !ok {
			t.Errorf("%q: fast request declined", in)
		}
	}
	var a readFileArgs
	if !fastArgs([]byte(`{"path":"a.txt","offset":2,"limit":10}`), &a) || a != (readFileArgs{"a.txt", 2, 10}) {
		t.Errorf("read_file arguments: fast path declined or gave %+v", a)
	}
}

// slowRequest is the decoding of a request before the fast path (slowArgs,
// in main.go, is that of the arguments).
func slowRequest(data []byte) (request, error) {
	var req request
	err := json.Unmarshal(data, &req)
	return req, err
}

// TestAppendResultMatchesEncoder: the result bytes are encoding/json's
// (SetEscapeHTML(false)) for any text, invalid UTF-8 included.
func TestAppendResultMatchesEncoder(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	texts := []string{"", "plain ascii text, long enough for words", "1\tone\n2\t\"two\"\\\n", "<a&b>\u2028\u2029\x7f\x00\x1f", "日本語 é \xff\xfe bad", strings.Repeat("x", 100) + "\n"}
	alphabet := []byte("ab \t\n\"\\<>&\x00\x01\x1f\x7f\x80\xc3\xa9\xe2\x80\xa8\xe6\x97\xa5\xff")
	for range 5000 {
		b := make([]byte, rng.Intn(40))
		for i := range b {
			if rng.Intn(2) == 0 {
				b[i] = 'a' + byte(rng.Intn(26))
			} else {
				b[i] = alphabet[rng.Intn(len(alphabet))]
			}
		}
		texts = append(texts, string(b))
	}
	for _, text := range texts {
		for _, isErr := range []bool{false, true} {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(result{Content: []content{{Type: "text", Text: text}}, IsError: isErr}); err != nil {
				t.Fatal(err)
			}
			if got := appendResult(nil, text, isErr); !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("%q: got %s, encoding/json %s", text, got, want.Bytes())
			}
		}
	}
}

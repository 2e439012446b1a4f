package main

import (
	"bytes"
	"encoding/json"
	"errors"
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
		checkRequest(t, []byte(in))
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
				checkArgs(t, tool, want.Arguments, newArgs)
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

// jsonRequest is the request envelope as core decoded it with
// encoding/json, the reference for unmarshalRequest and fastRequest.
type jsonRequest struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	CallID    string          `json:"call_id"`
}

// slowRequest is the decoding of a request with encoding/json.
func slowRequest(data []byte) (request, error) {
	var req jsonRequest
	err := json.Unmarshal(data, &req)
	return request{Tool: req.Tool, Arguments: req.Arguments, CallID: req.CallID}, err
}

// jsonArgs is decodeArgs as core did it with encoding/json: the reference
// for slowArgs and fastArgs.
func jsonArgs(tool string, raw []byte, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return errors.New(tool + ": arguments are not valid JSON: " + err.Error())
		}
		raw = []byte(s)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errors.New(tool + ": invalid arguments: " + err.Error())
	}
	if dec.More() {
		return errors.New(tool + ": invalid arguments: more than one JSON value")
	}
	return nil
}

// checkRequest fails when unmarshalRequest disagrees with encoding/json
// on data: the error text, or the request when there is no error.
func checkRequest(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := slowRequest(data)
	var got request
	err := unmarshalRequest(data, &got)
	// The reference type has another name; the messages name core's.
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != strings.ReplaceAll(wantErr.Error(), "jsonRequest", "request") {
		t.Fatalf("request %q: error %v, encoding/json %v", data, err, wantErr)
	}
	if err == nil && (got.Tool != want.Tool || got.CallID != want.CallID || !bytes.Equal(got.Arguments, want.Arguments) || (got.Arguments == nil) != (want.Arguments == nil)) {
		t.Fatalf("request %q: %+v, encoding/json %+v", data, got, want)
	}
}

// checkArgs fails when decodeArgs or slowArgs disagree with encoding/json
// (jsonArgs) on raw as the arguments of tool decoded by newArgs.
func checkArgs(t *testing.T, tool string, raw []byte, newArgs func() any) {
	t.Helper()
	ref := newArgs()
	wantErr := jsonArgs(tool, raw, ref)
	for _, dec := range []func(string, []byte, any) error{decodeArgs, slowArgs} {
		got := newArgs()
		err := dec(tool, raw, got)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("%q as %T: error %v, encoding/json %v", raw, got, err, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(got, ref) {
			t.Fatalf("%q as %T: %+v, encoding/json %+v", raw, got, got, ref)
		}
	}
}

var argTypes = []func() any{
	func() any { return &readFileArgs{} }, func() any { return &writeFileArgs{} },
	func() any { return &listDirArgs{} }, func() any { return &searchArgs{} },
	func() any { return &editArgs{} },
}

// FuzzDecode compares core's JSON decoding with encoding/json on any
// input, as a request and as each tool's arguments, and quote with
// json.Marshal.
func FuzzDecode(f *testing.F) {
	for _, s := range jsonSamples {
		f.Add(s)
	}
	for _, s := range argSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		checkRequest(t, []byte(in))
		for i, tool := range []string{"read_file", "write_file", "list_dir", "search", "edit"} {
			checkArgs(t, tool, []byte(in), argTypes[i])
		}
		if got, want := quote(in), jsonMarshal(in); got != want {
			t.Fatalf("quote(%q) = %s, json.Marshal %s", in, got, want)
		}
	})
}

func jsonMarshal(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestDecodeCorners runs the fuzz target's checks on argSamples.
func TestDecodeCorners(t *testing.T) {
	for _, in := range append(append([]string(nil), argSamples...), jsonSamples...) {
		checkRequest(t, []byte(in))
		for i, tool := range []string{"read_file", "write_file", "list_dir", "search", "edit"} {
			checkArgs(t, tool, []byte(in), argTypes[i])
		}
		if got, want := quote(in), jsonMarshal(in); got != want {
			t.Fatalf("quote(%q) = %s, json.Marshal %s", in, got, want)
		}
	}
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

// argSamples are arguments that exercise the decoder's corners: type
// errors, folded keys, escapes, nulls, strings holding the arguments and
// what follows a value.
var argSamples = []string{
	`{"path":"a","offset":2,"limit":3}`,
	`{"PATH":"a","Offset":-0,"LIMIT":null}`,
	"{\"pat\\u0068\":\"a\",\"off\u017fet\":1,\"max_re\u017fults\":4,\"pattern\":\"p\",\"\u212a\":1}",
	`{"path":7}`, `{"path":{"x":[1,{}]}}`, `{"path":[1,2]}`, `{"path":true}`,
	`{"offset":"1"}`, `{"offset":1.5}`, `{"offset":1e2}`, `{"offset":-99999999999999999999}`, `{"offset":[]}`, `{"offset":{}}`, `{"offset":false}`,
	`{"recursive":1}`, `{"recursive":"true"}`, `{"recursive":null,"recursive":true}`,
	`{"content":null}`, `{"content":"x","content":null}`, `{"content":5}`, `{"new_string":{}}`,
	`{"bogus":1,"path":7}`, `{"path":7,"bogus":1}`, "{\"b\xffgus\":1}", `{"\u00e9":1}`,
	`{"path":"\ud83d\ude00 \ud800 \udc00x \u00e9\\u0000"}`, "{\"path\":\"\xff\"}",
	`"{\"path\":\"a\"}"`, `"{\"path\":\"a\"} x"`, `"  "`, `"null"`, `"[1]"`, `"{\"path\":"`, `"abc`, `"a" x`,
	`{"path":"a"} }`, `{"path":"a"} ]`, `{"path":"a"} {}`, `{"path":"a"} x`, `{"path":"a"`, `{"path":"a",}`,
	`[1,2]`, `1`, `-`, `1.`, `1e`, `tru`, `nul`, `true`, `"x"`, `null`, ``, `  `, `{"a" 1}`, `{"a":1 "b":2}`, `[1 2]`,
	"{\"path\":\"a\"}\u0085", "\u00a0{}",
}

package provider

import (
	"io"
	"strings"
	"testing"
)

// TestSSENormaliser checks the exact lines go-openai's reader gets.
func TestSSENormaliser(t *testing.T) {
	long := strings.Repeat("x", 40<<10) // longer than the 16 KiB read buffer
	cases := []struct {
		name, in, want string
		done           bool
	}{
		{"plain", "data: {\"a\":1}\n\ndata: [DONE]\n\n", "data: {\"a\":1}\ndata: [DONE]\n", true},
		{"crlf line endings", "data: {\"a\":1}\r\n\r\ndata: [DONE]\r\n\r\n", "data: {\"a\":1}\ndata: [DONE]\n", true},
		{"comments, event, id, retry dropped", ": ping\n\nevent: message\nid: 7\nretry: 10\ndata:{\"a\":1}\n\n", "data: {\"a\":1}\n", false},
		{"no newline at the end", "data: {\"a\":1}\n\ndata: [DONE]", "data: {\"a\":1}\ndata: [DONE]\n", true},
		{"error object escapes go-openai's pattern", "data: {\"error\":{\"message\":\"m\"}}\n\n", "data: { \"error\":{\"message\":\"m\"}}\n", false},
		{"event error wraps its data", "event: error\ndata: {\"message\":\"m\"}\n\n", "data: { \"error\": {\"message\":\"m\"}}\n", false},
		{"event error ends with its event", "event: error\n\ndata: {\"a\":1}\n\n", "data: {\"a\":1}\n", false},
		{"event error with text data", "event: error\ndata: upstream died\n\n", "data: { \"error\": \"upstream died\"}\n", false},
		{"legacy error line", "error: {\"code\":500}\n\n", "data: { \"error\": {\"code\":500}}\n", false},
		{"bare json lines", "{\"a\":1}\n{\"b\":2}\n", "data: {\"a\":1}\ndata: {\"b\":2}\n", false},
		{"pretty json body", "\n {\n  \"a\": [1,\n 2]\n}\n", "data: {\"a\":[1,2]}\n", false},
		{"unknown lines dropped", "foo: bar\nnonsense\ndata: {\"a\":1}\n", "data: {\"a\":1}\n", false},
		{"line longer than the buffer", "data: {\"a\":\"" + long + "\"}\n\n", "data: {\"a\":\"" + long + "\"}\n", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bytes := 0
			s := newSSEBody(io.NopCloser(strings.NewReader(tc.in)), func() { bytes++ })
			got, err := io.ReadAll(s)
			if err != nil {
				t.Fatalf("ReadAll: %v", err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
			if s.Done() != tc.done {
				t.Errorf("Done() = %v, want %v", s.Done(), tc.done)
			}
			if s.Bytes() != int64(len(tc.in)) || bytes == 0 {
				t.Errorf("Bytes() = %d after %d onByte calls, want %d", s.Bytes(), bytes, len(tc.in))
			}
		})
	}
}

// TestSSEBodyReaderReuse: a closed body gives its line reader back once
// (closing twice must not hand it to two bodies), fails to read afterwards,
// and the next body reads its own stream with it.
func TestSSEBodyReaderReuse(t *testing.T) {
	a := newSSEBody(io.NopCloser(strings.NewReader("data: {\"a\":1}\n\ndata: [DONE]\n")), nil)
	if got, err := io.ReadAll(a); err != nil || string(got) != "data: {\"a\":1}\ndata: [DONE]\n" {
		t.Fatalf("first body: %q, %v", got, err)
	}
	a.Close()
	a.Close()
	b := newSSEBody(io.NopCloser(strings.NewReader("data: {\"b\":2}\n")), nil)
	c := newSSEBody(io.NopCloser(strings.NewReader("data: {\"c\":3}\n")), nil)
	if b.src == c.src {
		t.Fatal("two open bodies share one line reader")
	}
	d := newSSEBody(io.NopCloser(strings.NewReader("data: {\"d\":4}\n")), nil)
	d.Close() // before reading: its reader is b's or c's next
	if n, err := d.Read(make([]byte, 8)); n != 0 || err != errBodyClosed {
		t.Errorf("read after Close: %d, %v; want 0, %v", n, err, errBodyClosed)
	}
	for _, tc := range []struct {
		s    *sseBody
		want string
	}{{b, "data: {\"b\":2}\n"}, {c, "data: {\"c\":3}\n"}} {
		if got, err := io.ReadAll(tc.s); err != nil || string(got) != tc.want {
			t.Errorf("got %q, %v; want %q", got, err, tc.want)
		}
		tc.s.Close()
	}
}

package mcpuse

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// cutAll runs s through a cutReader, one byte a read when slow.
func cutAll(t *testing.T, s string, max, limit int64, mode cutMode, slow bool) (string, error) {
	t.Helper()
	var r io.Reader = strings.NewReader(s)
	if slow {
		r = iotest.OneByteReader(r)
	}
	b, err := io.ReadAll(newCutReader(r, max, limit, mode))
	return string(b), err
}

// TestCutReaderStrings: strings of every kind (escapes, multi-byte
// characters, surrogate pairs, control characters) come out of the cutter
// whole when they fit, and otherwise as a prefix of themselves of at least
// max bytes, on a character boundary, followed by the marker stating the
// bytes kept and the full length; the JSON stays valid, fed whole or a byte
// at a time.
func TestCutReaderStrings(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", " ", "\n", "\"", "\\", "/", "<", "&", "\x01", "é", "€", "😀", "\u2028", "z"}
	for i := range 300 {
		var b strings.Builder
		for range rng.IntN(200) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := b.String()
		max := int64(8 + rng.IntN(120)) // above the longest key
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i, "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}})
		out, err := cutAll(t, string(msg), max, 1<<20, oneMessage, i%2 == 0)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			ID     int
			Result struct{ Content []struct{ Type, Text string } }
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("case %d: not JSON after the cut: %v\n%s", i, err, out)
		}
		if got.ID != i || len(got.Result.Content) != 1 || got.Result.Content[0].Type != "text" {
			t.Fatalf("case %d: message changed: %s", i, out)
		}
		text := got.Result.Content[0].Text
		if int64(len(s)) <= max {
			if text != s {
				t.Errorf("case %d: %q fits in %d bytes but came out %q", i, s, max, text)
			}
			continue
		}
		m := cutMarkerRE.FindStringSubmatchIndex(text)
		if m == nil {
			t.Fatalf("case %d: %d bytes cut at %d without the marker: %q", i, len(s), max, text)
		}
		prefix := text[:m[0]]
		want := fmt.Sprintf(cutMarker, len(prefix), len(s))
		if text[m[0]:] != want || !strings.HasPrefix(s, prefix) || int64(len(prefix)) < max || int64(len(prefix)) > max+3 || !utf8.ValidString(prefix) {
			t.Errorf("case %d: %q (%d bytes) cut at %d gave %q", i, s, len(s), max, text)
		}
	}
}

// TestCutReaderBase64: image data under "data" is cut to a multiple of four
// characters with no marker, so that it still decodes; the text beside it
// is cut with the marker.
func TestCutReaderBase64(t *testing.T) {
	img := bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, 3000)
	msg := fmt.Sprintf(`{"content":[{"type":"image","mimeType":"image/png","data":%q},{"type":"text","text":%q}]}`,
		base64.StdEncoding.EncodeToString(img), strings.Repeat("t", 5000))
	out, err := cutAll(t, msg, 1002, 1<<20, oneMessage, false)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Content []struct {
			Data []byte
			Text string
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON after the cut: %v", err)
	}
	if len(got.Content[0].Data) != 750 || !bytes.Equal(got.Content[0].Data, img[:750]) {
		t.Errorf("image data: %d bytes, want the first 750", len(got.Content[0].Data))
	}
	if want := strings.Repeat("t", 1002) + fmt.Sprintf(cutMarker, 1002, 5000); got.Content[1].Text != want {
		t.Errorf("text: %q", got.Content[1].Text)
	}
}

// TestCutReaderMessageLimit: what is kept of one message is bounded (a
// JSON body: the whole stream; stdio and SSE: each line), and going over
// is an error that says so.
func TestCutReaderMessageLimit(t *testing.T) {
	many := "[" + strings.Repeat(`"short",`, 2000) + `"end"]`
	if _, err := cutAll(t, many, 100, 4096, oneMessage, false); !errors.Is(err, errMessageTooBig) || !strings.Contains(err.Error(), "more than 4KiB") {
		t.Errorf("a %d-byte body with a 4KiB limit: %v, want errMessageTooBig", len(many), err)
	}
	lines := strings.Repeat(`{"a":"`+strings.Repeat("x", 1000)+`"}`+"\n", 100)
	out, err := cutAll(t, lines, 2000, 4096, lineMessages, false)
	if err != nil || out != lines {
		t.Errorf("100 lines of 1 KiB with a 4KiB limit per line: %v", err)
	}
	if _, err := cutAll(t, strings.ReplaceAll(lines, "\n", " "), 2000, 4096, lineMessages, false); !errors.Is(err, errMessageTooBig) {
		t.Errorf("the same on one line: %v, want errMessageTooBig", err)
	}
	// A long string is cut before it counts: 10 MiB in a 4 KiB message.
	big := `{"text":"` + strings.Repeat("y", 10<<20) + `"}`
	out, err = cutAll(t, big, 1000, 4096, oneMessage, false)
	if err != nil || len(out) > 1100 {
		t.Errorf("a 10 MiB string cut to 1000 bytes: %d bytes out, %v", len(out), err)
	}
}

// TestCapResult: the texts of a result are joined and cut to max_output
// with one note giving the full length, counting what the cutReader had
// already cut.
func TestCapResult(t *testing.T) {
	for _, c := range []struct {
		name  string
		parts []string
		max   int64
		want  string
	}{
		{"fits", []string{"abc", "de"}, 10, "abc\nde"},
		{"joined too long", []string{"abcdef", "ghij"}, 8, "abcdef\ng" + fmt.Sprintf(cutMarker, 8, 11)},
		{"cut by the reader", []string{"abcdefgh" + fmt.Sprintf(cutMarker, 8, 70000)}, 8, "abcdefgh" + fmt.Sprintf(cutMarker, 8, 70000)},
		{"cut by the reader, then more", []string{"abcdefgh" + fmt.Sprintf(cutMarker, 8, 70000), "xyz"}, 8, "abcdefgh" + fmt.Sprintf(cutMarker, 8, 70004)},
		{"on a character", []string{"aé€"}, 4, "aé" + fmt.Sprintf(cutMarker, 3, 6)},
	} {
		if got := capResult(c.parts, c.max); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

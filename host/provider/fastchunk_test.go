package provider

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/jsonscan"
)

// chunkFixtures are the chunk payloads of this package's tests: every
// "data:" line and every line starting with "{" of every string literal in
// the test files, plus the benchmark streams'.
func chunkFixtures(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	add := func(text string) {
		for _, line := range strings.Split(text, "\n") {
			line = strings.TrimSpace(line)
			if p, ok := strings.CutPrefix(line, "data:"); ok {
				line = strings.TrimSpace(p)
			}
			if strings.HasPrefix(line, "{") || strings.HasPrefix(line, "[") {
				out = append(out, line)
			}
		}
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					add(s)
				}
			}
			return true
		})
	}
	add(stream200())
	for i := range 3 {
		add(strings.Join(fakeStep(i), ""))
	}
	return out
}

// checkSameChunk fails when decodeChunk and encoding/json disagree on data,
// and reports whether the fast path decoded it.
func checkSameChunk(t *testing.T, data []byte) bool {
	t.Helper()
	var want chunk
	wantErr := json.Unmarshal(data, &want)
	var got chunk
	gotErr := decodeChunk(data, &got)
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Fatalf("%q: error %v, encoding/json %v", data, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", data, got, want)
	}
	var fast chunk
	d := chunkDecoder{Scanner: jsonscan.Scanner{Data: data}}
	return d.chunk(&fast)
}

// TestDecodeChunkMatchesEncodingJSON: on every chunk of the package's
// stream fixtures, the fast decoder gives exactly encoding/json's result,
// and it does decode the common shapes itself.
func TestDecodeChunkMatchesEncodingJSON(t *testing.T) {
	fixtures := chunkFixtures(t)
	fast := 0
	for _, f := range fixtures {
		if checkSameChunk(t, []byte(f)) {
			fast++
		}
	}
	if len(fixtures) < 300 || fast < len(fixtures)/2 {
		t.Fatalf("%d of %d fixtures took the fast path", fast, len(fixtures))
	}
	for _, f := range fakeStep(1)[:6] {
		if !checkSameChunk(t, []byte(strings.TrimSpace(strings.TrimPrefix(f, "data:")))) {
			t.Errorf("fakemodel's chunk %s did not take the fast path", f)
		}
	}
	t.Logf("%d of %d fixtures decoded by the fast path", fast, len(fixtures))
}

// TestDecodeChunkMutated: the same on 20 000 chunks made by putting a
// troublesome piece of JSON (a stray escape, a key in another case, a
// repeated field, a value of another type, ...) at random places of the
// fixtures.
func TestDecodeChunkMutated(t *testing.T) {
	pieces := []string{`\`, `\x`, `\u00`, `\u00e9`, `"`, `A`, `null`, `1e5`, `-`, `0`, `01`, `1.`,
		`{}`, `[]`, `,`, `}`, `]`, `:`, ` `, "\x00", "\xff", "\x1f", `"Choices":[],`, `"choices":null,`,
		`"choices":[{}],`, `"index":"1",`, `"index":null,`, `"delta":5,`, `"delta":null,`, `"usage":5,`,
		`"usage":{"prompt_tokens":"7"},`, `"finish_reason":"s\u0074op",`, `"finish_reason":1,`,
		`"tool_calls":[],`, `"function":null,`, `"function":[],`, `"arguments":{"a":1},`, `"x_groq":{},`,
		`"error":null,`, `"id":7,`, `"content":[{"type":"text","text":"t"}],`, `"ſ":1,`, `"K":1,`}
	rng := rand.New(rand.NewPCG(1, 2))
	fixtures := chunkFixtures(t)
	for range 20000 {
		b := []byte(fixtures[rng.IntN(len(fixtures))])
		for range 1 + rng.IntN(2) {
			at := rng.IntN(len(b) + 1)
			piece := pieces[rng.IntN(len(pieces))]
			cut := at
			if rng.IntN(2) == 0 && at < len(b) {
				cut = at + 1 // replace a byte rather than insert
			}
			b = append(b[:at:at], append([]byte(piece), b[cut:]...)...)
		}
		checkSameChunk(t, b)
	}
}

// FuzzDecodeChunk compares the fast decoder with encoding/json on mutated
// chunks: same chunk, same error, no panic.
func FuzzDecodeChunk(f *testing.F) {
	for _, s := range chunkFixtures(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSameChunk(t, data)
	})
}

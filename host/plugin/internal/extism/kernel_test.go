package extism

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/internal/hostmem"
)

func newTestCall(t *testing.T, allow ...string) *Call {
	t.Helper()
	p, err := NewPlugin("k", map[string]string{"k": "v"}, allow)
	if err != nil {
		t.Fatal(err)
	}
	return NewCall(context.Background(), p, 1<<20, zerolog.Nop())
}

// refused runs f and returns the host error it stopped with ("" if none).
func refused(c *Call, f func()) (msg string) {
	c.hostErr = nil
	defer func() {
		if recover() != nil && c.hostErr != nil {
			msg = c.hostErr.Error()
		}
	}()
	f()
	return ""
}

func TestExtismKernel(t *testing.T) {
	c := newTestCall(t)
	fn := func(name string, args ...uint64) uint64 {
		s := make([]uint64, max(len(args), 1))
		copy(s, args)
		funcs[name].fn(c, s)
		return s[0]
	}
	if fn("alloc", 0) != 0 {
		t.Error("alloc(0) is not 0")
	}
	a := fn("alloc", 5)
	b := fn("alloc", 3)
	if a == 0 || b <= a || fn("length", a) != 5 || fn("length", a+1) != 0 {
		t.Fatalf("blocks %d %d", a, b)
	}
	fn("store_u64", a, 0x0102030405060708)
	if fn("load_u8", a) != 8 || fn("load_u64", a) != 0x0102030405060708 {
		t.Error("store/load")
	}
	// Freeing the last block gives its room back.
	fn("free", b)
	if c2 := fn("alloc", 3); c2 != b {
		t.Errorf("reuse: %d, want %d", c2, b)
	}
	for name, f := range map[string]func(){
		"load past the end":   func() { fn("load_u64", uint64(len(c.mem))-4) },
		"load below the base": func() { fn("load_u8", 0) },
		"store overflowing":   func() { fn("store_u8", ^uint64(0), 1) },
		"input past the end":  func() { fn("input_load_u8", 0) },
		"not a block":         func() { fn("config_get", a+1) },
		"alloc over memory":   func() { fn("alloc", 2<<20) },
		"output out of range": func() { fn("output_set", a, 1<<40) },
	} {
		if msg := refused(c, f); msg == "" {
			t.Errorf("%s: not refused", name)
		}
	}
	// config_get: a key, and a missing one.
	key := c.write([]byte("k"))
	if v := fn("config_get", key); string(c.block(v)) != "v" {
		t.Errorf("config_get k = %q", c.block(v))
	}
	if fn("config_get", c.write([]byte("nope"))) != 0 {
		t.Error("config_get of a missing key")
	}
	// error_set / error_get.
	fn("error_set", c.write([]byte("bad")))
	if e := fn("error_get"); string(c.block(e)) != "bad" || *c.errMsg != "bad" {
		t.Error("error_set/get")
	}
	// vars: set, get, delete, and the 1 MiB cap.
	fn("var_set", c.write([]byte("x")), c.write([]byte("1")))
	if v := fn("var_get", c.write([]byte("x"))); string(c.block(v)) != "1" {
		t.Error("var_get")
	}
	fn("var_set", c.write([]byte("x")), 0)
	if fn("var_get", c.write([]byte("x"))) != 0 {
		t.Error("var not deleted")
	}
	c.budget = hostmem.New(4 << 20)
	big := c.alloc(maxVarBytes)
	if msg := refused(c, func() { fn("var_set", c.write([]byte("big")), big) }); !strings.Contains(msg, "would exceed 1MiB") {
		t.Errorf("var cap: %q", msg)
	}
	// reset empties the memory.
	fn("reset")
	if fn("memory_bytes") != arenaBase || fn("length", a) != 0 {
		t.Error("reset")
	}
}

func TestExtismHTTPResponseCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Write(make([]byte, maxHTTPResponse+1))
			return
		}
		w.WriteHeader(201)
		w.Write([]byte(r.Method + " " + r.Header.Get("X-A")))
	}))
	defer srv.Close()
	c := newTestCall(t, srv.URL)
	c.budget = hostmem.New(16 << 20)
	req := func(path string) uint64 {
		b, _ := json.Marshal(map[string]any{"url": srv.URL + path, "method": "post", "headers": map[string]string{"X-A": "1"}})
		return c.httpRequest(c.write(b), c.write([]byte("body")))
	}
	if got := string(c.block(req("/ok"))); got != "POST 1" || c.lastStatus != 201 {
		t.Fatalf("got %q %d", got, c.lastStatus)
	}
	if msg := refused(c, func() { req("/big") }); !strings.Contains(msg, "exceeds 4MiB") {
		t.Fatalf("big response: %q", msg)
	}
}

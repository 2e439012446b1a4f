package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agenthost/agenthost/internal/componenttest"
)

// componentTestdata holds host/component's test components: the
// JavaScript sources (built with ComponentizeJS) and the ones written by
// hand in the text format (kept as .wasm beside their .wat).
var componentTestdata = filepath.Join("..", "..", "host", "component", "testdata")

// cmdComponent writes a WASI 0.2 component for a script:
//
//	component js NAME OUT   host/component/testdata/js/NAME built with ComponentizeJS
//	                        (cached; the script needs [toolchain:componentize])
//	component wat NAME OUT  host/component/testdata/NAME.wasm, written by hand
//	component go NAME OUT   host/component/testdata/NAME, a Go command adapted into a
//	                        command component (cached; needs [toolchain:componentize])
func cmdComponent(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: component js|wat|go NAME OUT")
	}
	var b []byte
	switch args[0] {
	case "js":
		b = componenttest.JS(scriptTB{ts}, filepath.Join(componentTestdata, "js", args[1]), args[1])
	case "go":
		b = componenttest.GoCommand(scriptTB{ts}, filepath.Join(componentTestdata, args[1]), args[1])
	case "wat":
		var err error
		b, err = os.ReadFile(filepath.Join(componentTestdata, args[1]+".wasm"))
		ts.Check(err)
	default:
		ts.Fatalf("usage: component js|wat|go NAME OUT")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), b, 0o644))
}

// scriptTB lets the component builders report to a script; the script's
// [toolchain:componentize] condition has made sure they need not skip.
type scriptTB struct{ ts *testscript.TestScript }

func (s scriptTB) Helper()                           {}
func (s scriptTB) Skipf(format string, args ...any)  { s.ts.Fatalf("cannot build: "+format, args...) }
func (s scriptTB) Fatal(args ...any)                 { s.ts.Fatalf("%s", fmt.Sprint(args...)) }
func (s scriptTB) Fatalf(format string, args ...any) { s.ts.Fatalf(format, args...) }

// probeTB records whether installing the toolchain skipped or failed, for
// the [toolchain:componentize] condition.
type probeTB struct{ err error }

func (p *probeTB) Helper()                           {}
func (p *probeTB) Skipf(format string, args ...any)  { p.fail(fmt.Sprintf(format, args...)) }
func (p *probeTB) Fatal(args ...any)                 { p.fail(fmt.Sprint(args...)) }
func (p *probeTB) Fatalf(format string, args ...any) { p.fail(fmt.Sprintf(format, args...)) }

func (p *probeTB) fail(msg string) {
	p.err = fmt.Errorf("%s", msg)
	panic(p)
}

func init() { toolchains["componentize"] = componentizeProbe }

// componentizeProbe installs ComponentizeJS (once, cached) and reports
// why it cannot be used: no Node or npm, -short, or npm failing.
func componentizeProbe(string) (err error) {
	p := &probeTB{}
	defer func() {
		if r := recover(); r != nil {
			if r != p {
				panic(r)
			}
			err = p.err
		}
	}()
	componenttest.Toolchain(p)
	return nil
}

// cmdWebServer serves plain text on loopback for the script's life:
//
//	webserver start NAME   serve "hello from NAME PATH"; sets WEB_NAME (upper case) to its URL
//	webserver requests     print "NAME PATH" per request received, in order
func cmdWebServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: webserver start NAME | requests")
	}
	v, loaded := webLogs.LoadOrStore(ts, &webLog{})
	if !loaded {
		ts.Defer(func() { webLogs.Delete(ts) })
	}
	log := v.(*webLog)
	switch {
	case args[0] == "start" && len(args) == 2:
		name := args[1]
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			log.mu.Lock()
			log.lines = append(log.lines, name+" "+r.URL.Path)
			log.mu.Unlock()
			io.WriteString(w, "hello from "+name+" "+r.URL.Path)
		}))
		ts.Defer(srv.Close)
		ts.Setenv("WEB_"+strings.ToUpper(name), srv.URL)
	case args[0] == "requests" && len(args) == 1:
		log.mu.Lock()
		defer log.mu.Unlock()
		for _, l := range log.lines {
			fmt.Fprintln(ts.Stdout(), l)
		}
	default:
		ts.Fatalf("usage: webserver start NAME | requests")
	}
}

// webLogs holds each script's webLog.
var webLogs sync.Map // *testscript.TestScript -> *webLog

// webLog is what a script's web servers received.
type webLog struct {
	mu    sync.Mutex
	lines []string
}

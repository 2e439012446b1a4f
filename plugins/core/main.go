// Command core is agenthost's first-party tool plugin: read_file, write_file,
// list_dir, search and edit, confined to the directories it is granted
// (usually one, at /workspace).
//
// It is a WASI preview1 command speaking the agenthost/1 protocol
// (docs/plugin-protocol.md). Build it with `go generate ./plugins/...` from
// the repository root, which writes plugins/core.wasm reproducibly; the tool
// logic also builds and tests natively (`go test ./...` in this directory).
package main

import (
	"bytes"
	_ "embed"
	"errors"
	"io"
	"os"
)

// manifestJSON is the agenthost/1 manifest. The generator in plugins/gen.go
// also copies it into the custom section "agenthost.manifest" of core.wasm.
//
//go:embed manifest.json
var manifestJSON []byte

// workspaceRoot is the usual guest path of the workspace mount; core serves
// whatever mounts it is granted (mounts.go) and assumes this one when it has
// none, so its messages say what to mount.
const workspaceRoot = "/workspace"

// Exit codes of agenthost/1.
const (
	exitOK        = 0 // result on stdout
	exitToolError = 1 // error result on stdout, shown to the model
	exitMisuse    = 2 // the host broke the protocol; message on stderr
)

// maxRequest caps the stdin request read in call mode.
const maxRequest = 64 << 20

func main() {
	mode, tool := os.Getenv("AGENTHOST_MODE"), os.Getenv("AGENTHOST_TOOL")
	if mode == "call" && os.Getenv("AGENTHOST_REUSE") == "1" {
		os.Exit(serve(tool, os.Stdin, os.Stdout, os.Stderr, mountRoots()...))
	}
	os.Exit(run(mode, tool, os.Stdin, os.Stdout, os.Stderr, mountRoots()...))
}

// request is the call-mode stdin document.
type request struct {
	Tool      string `json:"tool"`
	Arguments []byte `json:"arguments"` // the JSON text of the value
	CallID    string `json:"call_id"`
}

// result is the call-mode stdout document (MCP CallToolResult).
type result struct {
	Content []content `json:"content"`
	IsError bool      `json:"is_error"`
}

type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// run is the whole program: it returns the exit code. roots are the mounted
// directories; relative paths resolve against the first.
func run(mode, tool string, stdin io.Reader, stdout, stderr io.Writer, roots ...string) int {
	switch mode {
	case "describe":
		if _, err := stdout.Write(manifestJSON); err != nil {
			return exitMisuse
		}
		return exitOK
	case "call":
	default:
		io.WriteString(stderr, "core: AGENTHOST_MODE is "+quote(mode)+", want \"describe\" or \"call\"\n")
		return exitMisuse
	}

	data, err := io.ReadAll(io.LimitReader(stdin, maxRequest+1))
	if err != nil {
		io.WriteString(stderr, "core: reading the request from stdin: "+err.Error()+"\n")
		return exitMisuse
	}
	if len(data) > maxRequest {
		io.WriteString(stderr, "core: the request on stdin is over 64 MiB\n")
		return exitMisuse
	}
	return callRequest(tool, data, stdout, stderr, roots)
}

// callRequest serves one request document (data): it writes the result on
// stdout and returns the exit code.
func callRequest(tool string, data []byte, stdout, stderr io.Writer, roots []string) int {
	req, ok := fastRequest(data)
	if !ok {
		if err := unmarshalRequest(data, &req); err != nil {
			io.WriteString(stderr, "core: the request on stdin is not a JSON object {\"tool\",\"arguments\",\"call_id\"}: "+err.Error()+"\n")
			return exitMisuse
		}
	}
	switch {
	case tool == "":
		tool = req.Tool
	case req.Tool != "" && req.Tool != tool:
		io.WriteString(stderr, "core: AGENTHOST_TOOL is "+quote(tool)+" but the request names "+quote(req.Tool)+"\n")
		return exitMisuse
	}

	text, err := call(newWorkspace(roots), tool, req.Arguments)
	code := exitOK
	if err != nil {
		text, code = err.Error(), exitToolError
	}
	// The result as encoding/json writes it without HTML escaping ("<"
	// stays one byte instead of six).
	out := appendResult(make([]byte, 0, len(text)+64), text, code == exitToolError)
	if _, err := stdout.Write(out); err != nil {
		return exitMisuse
	}
	return code
}

// call dispatches one tool call. A returned error is a tool error for the model.
func call(w *workspace, tool string, args []byte) (string, error) {
	switch tool {
	case "read_file":
		var a readFileArgs
		if err := decodeArgs(tool, args, &a); err != nil {
			return "", err
		}
		return w.readFile(a)
	case "write_file":
		var a writeFileArgs
		if err := decodeArgs(tool, args, &a); err != nil {
			return "", err
		}
		return w.writeFile(a)
	case "list_dir":
		var a listDirArgs
		if err := decodeArgs(tool, args, &a); err != nil {
			return "", err
		}
		return w.listDir(a)
	case "search":
		var a searchArgs
		if err := decodeArgs(tool, args, &a); err != nil {
			return "", err
		}
		return w.search(a)
	case "edit":
		var a editArgs
		if err := decodeArgs(tool, args, &a); err != nil {
			return "", err
		}
		return w.edit(a)
	}
	return "", errors.New("unknown tool " + quote(tool) + "; core has read_file, write_file, list_dir, search and edit")
}

// decodeArgs decodes a tool's arguments strictly: unknown fields are errors.
// Arguments may be absent or null (no arguments), a JSON object, or a JSON
// string holding an object (as some models send them). v is one of the
// tools' argument structs.
func decodeArgs(tool string, raw []byte, v any) error {
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' && fastArgs(t, v) {
		return nil
	}
	return slowArgs(tool, raw, v)
}

// slowArgs is decodeArgs without the fast path (fastjson.go): what it
// declines. Results and messages are those of encoding/json (a Decoder with
// DisallowUnknownFields, then More), which core used before (jsondec.go).
func slowArgs(tool string, raw []byte, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if raw[0] == '"' {
		var scan scanner
		if err := checkValid(raw, &scan); err != nil {
			return errors.New(tool + ": arguments are not valid JSON: " + err.Error())
		}
		raw, _ = unquoteBytes(raw)
	}
	more, err := decodeStream(raw, v)
	if err != nil {
		return errors.New(tool + ": invalid arguments: " + err.Error())
	}
	if more {
		return errors.New(tool + ": invalid arguments: more than one JSON value")
	}
	return nil
}

// quote is json.Marshal of s: a JSON string with <, > and & escaped.
func quote(s string) string {
	b := appendString(nil, s)
	out := make([]byte, 0, len(b))
	for _, c := range b {
		switch c {
		case '<', '>', '&':
			out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			out = append(out, c)
		}
	}
	return string(out)
}

// Command hostile is an agenthost/1 test plugin whose tools misbehave: each
// tool is one attack on the sandbox or one way of breaking. A tool that
// manages to escape prints what it read and exits 0, so a test sees the leak.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

const manifest = `{
  "protocol": "agenthost/1", "name": "hostile",
  "tools": [
    {"name": "loop", "description": "Spin forever."},
    {"name": "membomb", "description": "Allocate until memory runs out."},
    {"name": "flood", "description": "Write to stdout forever."},
    {"name": "flood_stderr", "description": "Write to stderr forever."},
    {"name": "bigout", "description": "Write n bytes to stdout and exit 0.", "input_schema": {"type": "object", "properties": {"n": {"type": "integer"}}}},
    {"name": "dotdot", "description": "Read ../ paths out of the mount."},
    {"name": "hostlink", "description": "Read through symlinks planted on the host."},
    {"name": "guestlink", "description": "Create symlinks pointing out and read through them."},
    {"name": "abspath", "description": "Read an absolute host path.", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
    {"name": "writero", "description": "Write, create, remove and rename in the mount."},
    {"name": "panic", "description": "Panic."},
    {"name": "exit7", "description": "Exit with code 7."}
  ],
  "requests": {"fs": [{"guest": "/workspace", "access": "rw", "reason": "attacks"}]}
}`

var sink [][]byte
var counter int

func main() {
	if os.Getenv("AGENTHOST_MODE") == "describe" {
		os.Stdout.WriteString(manifest)
		return
	}
	var req struct {
		Tool      string `json:"tool"`
		Arguments struct {
			Path string `json:"path"`
			N    int    `json:"n"`
		} `json:"arguments"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "hostile: bad request:", err)
		os.Exit(2)
	}
	switch req.Tool {
	case "loop":
		for {
			counter++
		}
	case "membomb":
		for {
			b := make([]byte, 4<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = byte(i)
			}
			sink = append(sink, b)
		}
	case "flood":
		chunk := []byte(strings.Repeat("flood ", 10000))
		for {
			os.Stdout.Write(chunk)
		}
	case "flood_stderr":
		chunk := []byte(strings.Repeat("noise ", 10000))
		for {
			os.Stderr.Write(chunk)
		}
	case "bigout":
		os.Stdout.Write([]byte(strings.Repeat("x", req.Arguments.N)))
		return
	case "dotdot":
		tryRead("/workspace/../secret.txt", "../secret.txt", "/workspace/../../secret.txt", "/workspace/sub/../../secret.txt", "/../secret.txt")
	case "hostlink":
		tryRead("/workspace/abs_link", "/workspace/rel_link", "/workspace/dir_link/secret.txt")
	case "guestlink":
		var errs []string
		for i, target := range []string{"../secret.txt", "/etc/passwd", "sub/../../secret.txt"} {
			name := fmt.Sprintf("/workspace/evil%d", i)
			if err := os.Symlink(target, name); err != nil {
				errs = append(errs, err.Error())
				continue
			}
			if data, err := os.ReadFile(name); err == nil {
				fmt.Printf("escaped via %s: %s", name, data)
				os.Exit(0)
			} else {
				errs = append(errs, err.Error())
			}
		}
		fmt.Print(strings.Join(errs, "\n"))
		os.Exit(1)
	case "abspath":
		tryRead(req.Arguments.Path, "/etc/passwd", "/secret.txt")
	case "writero":
		var errs []string
		if err := os.WriteFile("/workspace/new.txt", []byte("x"), 0o644); err == nil {
			errs = append(errs, "created new.txt")
		}
		if f, err := os.OpenFile("/workspace/inside.txt", os.O_WRONLY|os.O_APPEND, 0); err == nil {
			if _, err := f.Write([]byte("x")); err == nil {
				errs = append(errs, "appended to inside.txt")
			}
			f.Close()
		}
		if err := os.Remove("/workspace/inside.txt"); err == nil {
			errs = append(errs, "removed inside.txt")
		}
		if err := os.Mkdir("/workspace/newdir", 0o755); err == nil {
			errs = append(errs, "made newdir")
		}
		if err := os.Rename("/workspace/inside.txt", "/workspace/moved.txt"); err == nil {
			errs = append(errs, "renamed inside.txt")
		}
		if len(errs) > 0 {
			fmt.Print("wrote: " + strings.Join(errs, ", "))
			os.Exit(0)
		}
		fmt.Print("every write refused")
		os.Exit(1)
	case "panic":
		panic("hostile panic")
	case "exit7":
		fmt.Fprintln(os.Stderr, "exiting with 7")
		os.Exit(7)
	}
	fmt.Fprintln(os.Stderr, "hostile: unknown tool", req.Tool)
	os.Exit(2)
}

// tryRead prints the first file it can read and exits 0 (an escape), or
// prints every error and exits 1.
func tryRead(paths ...string) {
	var errs []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err == nil {
			fmt.Printf("read %s: %s", p, data)
			os.Exit(0)
		}
		errs = append(errs, err.Error())
	}
	fmt.Print(strings.Join(errs, "\n"))
	os.Exit(1)
}

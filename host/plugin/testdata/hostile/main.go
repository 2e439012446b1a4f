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
    {"name": "exit7", "description": "Exit with code 7."},
    {"name": "tamper", "description": "Try every way to change the given paths under /workspace.", "input_schema": {"type": "object", "properties": {"paths": {"type": "array", "items": {"type": "string"}}}}},
    {"name": "listdir", "description": "List a directory under /workspace.", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
    {"name": "bigwrite", "description": "Write n bytes to /workspace/<path>, ignoring errors.", "input_schema": {"type": "object", "properties": {"n": {"type": "integer"}, "path": {"type": "string"}}}},
    {"name": "manyfiles", "description": "Create n files (and some directories and links) in /workspace/<path>, ignoring errors.", "input_schema": {"type": "object", "properties": {"n": {"type": "integer"}, "path": {"type": "string"}}}},
    {"name": "holewrite", "description": "Write one byte at offset n of /workspace/<path>, with pwrite or (how = \"seek\") a seek and a write, ignoring errors; print the file's size.", "input_schema": {"type": "object", "properties": {"n": {"type": "integer"}, "path": {"type": "string"}, "how": {"type": "string"}}}}
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
			Path  string   `json:"path"`
			N     int      `json:"n"`
			Paths []string `json:"paths"`
			How   string   `json:"how"`
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
	case "tamper":
		tamper(req.Arguments.Paths)
	case "listdir":
		ents, err := os.ReadDir("/workspace/" + req.Arguments.Path)
		if err != nil {
			fmt.Print(err)
			os.Exit(1)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		fmt.Print(strings.Join(names, " "))
		return
	case "bigwrite":
		// Ignores every error: the host must still report the quota.
		f, _ := os.Create("/workspace/" + req.Arguments.Path)
		chunk := make([]byte, 64<<10)
		for n := req.Arguments.N; n > 0; n -= len(chunk) {
			f.Write(chunk[:min(n, len(chunk))])
		}
		f.Close()
		fmt.Print("wrote")
		return
	case "holewrite":
		// Ignores every error: the host must still report the quota.
		f, _ := os.Create("/workspace/" + req.Arguments.Path)
		if req.Arguments.How == "seek" {
			f.Seek(int64(req.Arguments.N), 0)
			f.Write([]byte{1})
		} else {
			f.WriteAt([]byte{1}, int64(req.Arguments.N))
		}
		fi, _ := f.Stat()
		f.Close()
		if fi != nil {
			fmt.Print(fi.Size())
		}
		return
	case "manyfiles":
		dir := "/workspace/" + req.Arguments.Path
		for i := 0; i < req.Arguments.N; i++ {
			switch i % 4 {
			case 0:
				os.Mkdir(fmt.Sprintf("%s/d%d", dir, i), 0o755)
			case 1:
				os.Symlink("d0", fmt.Sprintf("%s/l%d", dir, i))
			default:
				os.WriteFile(fmt.Sprintf("%s/f%d", dir, i), nil, 0o644)
			}
		}
		fmt.Print("created")
		return
	}
	fmt.Fprintln(os.Stderr, "hostile: unknown tool", req.Tool)
	os.Exit(2)
}

// tamper tries to change each path: write, append, truncate, chmod, rename
// away and replace, remove and replace, rename over, write through a
// symbolic or hard link. It prints what worked and exits 0 (a breach), or
// prints every error and exits 1.
func tamper(paths []string) {
	var ok, no []string
	try := func(what string, err error) {
		if err == nil {
			ok = append(ok, what)
		} else {
			no = append(no, what+": "+err.Error())
		}
	}
	forged := []byte("forged")
	for _, rel := range paths {
		p := "/workspace/" + rel
		try("read "+rel, func() error { _, err := os.ReadFile(p); return err }())
		try("write "+rel, os.WriteFile(p, forged, 0o644))
		if f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0); err != nil {
			try("append "+rel, err)
		} else {
			_, err = f.Write(forged)
			f.Close()
			try("append "+rel, err)
		}
		try("truncate "+rel, os.Truncate(p, 0))
		try("chmod "+rel, os.Chmod(p, 0o777))
		if err := os.Symlink(rel, "/workspace/alias"); err == nil {
			try("write through a symlink to "+rel, os.WriteFile("/workspace/alias", forged, 0o644))
			os.Remove("/workspace/alias")
		}
		if err := os.Link(p, "/workspace/hard"); err != nil {
			try("hard link "+rel, err)
		} else {
			try("write through a hard link to "+rel, os.WriteFile("/workspace/hard", forged, 0o644))
			os.Remove("/workspace/hard")
		}
		os.WriteFile("/workspace/evil", forged, 0o644)
		try("rename over "+rel, os.Rename("/workspace/evil", p))
		os.Remove("/workspace/evil")
		if err := os.Rename(p, p+".moved"); err != nil {
			try("rename away "+rel, err)
		} else {
			try("replace "+rel, os.WriteFile(p, forged, 0o644))
		}
		if err := os.RemoveAll(p); err != nil {
			try("remove "+rel, err)
		} else {
			try("replace removed "+rel, os.WriteFile(p, forged, 0o644))
		}
	}
	if len(ok) > 0 {
		fmt.Print("TAMPERED: " + strings.Join(ok, "; "))
		os.Exit(0)
	}
	fmt.Print("all refused:\n" + strings.Join(no, "\n"))
	os.Exit(1)
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

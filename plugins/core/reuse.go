package main

import (
	"bufio"
	"bytes"
	"io"
)

// serve answers many calls from one instance, as the manifest's "reuse"
// allows when the host sets AGENTHOST_REUSE=1: one request per line of
// stdin, one CallToolResult line on stdout for each (is_error marks a tool
// error), until stdin ends. A request it cannot read ends the instance with
// exitMisuse, which fails that call. Each request names its tool (the host
// does not set AGENTHOST_TOOL in this mode).
func serve(tool string, stdin io.Reader, stdout, stderr io.Writer, roots ...string) int {
	in := bufio.NewReader(stdin)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > maxRequest {
			io.WriteString(stderr, "core: a request line is over 64 MiB\n")
			return exitMisuse
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if code := callRequest(tool, line, stdout, stderr, roots); code == exitMisuse {
				return code
			}
		}
		if err != nil {
			return exitOK // the host closed stdin: no more calls
		}
	}
}

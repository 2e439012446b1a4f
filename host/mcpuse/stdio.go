package mcpuse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport starts a command and speaks MCP over its stdin and
// stdout, as the SDK's CommandTransport does, but reads stdout through the
// server's cutReader (one message a line): the SDK's CommandTransport
// offers no way in between, and its own bound on a line (16 MiB) ends the
// connection where a cut result is wanted.
type stdioTransport struct {
	cmd    *exec.Cmd
	server *Server
	// terminate is how long Close waits for the process to exit once its
	// stdin is closed, and again after SIGTERM, before it kills it.
	terminate time.Duration
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	tr := &mcp.IOTransport{
		// The connection is closed by closing stdin (procStdin.Close).
		Reader:        io.NopCloser(t.server.cut(stdout, lineMessages, nil)),
		Writer:        &procStdin{WriteCloser: stdin, cmd: t.cmd, terminate: t.terminate},
		MaxLineLength: int(messageLimit(t.server.spec.MaxOutput) + 1<<20),
	}
	return tr.Connect(ctx)
}

// procStdin is the stdin of a server process; closing it stops the
// process as the MCP specification says: stdin closed, then SIGTERM, then
// SIGKILL, each after the terminate wait.
type procStdin struct {
	io.WriteCloser
	cmd       *exec.Cmd
	terminate time.Duration
}

func (p *procStdin) Close() error {
	if err := p.WriteCloser.Close(); err != nil {
		return fmt.Errorf("closing stdin: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	wait := func() (error, bool) {
		t := time.NewTimer(p.terminate)
		defer t.Stop()
		select {
		case err := <-done:
			return err, true
		case <-t.C:
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if p.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := p.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("the server process did not exit after SIGKILL")
}

// Package temporaltest starts a real Temporal server for tests: the
// Temporal CLI's dev server (in memory, on loopback, free ports). Tests
// that use it skip when the temporal command is not installed.
package temporaltest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
)

// Install is how to install the temporal command the tests use.
const Install = "go install github.com/temporalio/cli/cmd/temporal@v1.5.1"

// CLI finds the temporal command on $PATH or in ~/go/bin, or skips t.
func CLI(t testing.TB) string {
	if p, err := exec.LookPath("temporal"); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, "go", "bin", "temporal")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("temporal command not found on $PATH or in ~/go/bin; install it to run the Temporal tests: " + Install)
	return ""
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Start starts a dev server on free loopback ports, stopped when the test
// ends, and returns its frontend address once it answers a health check.
// With -short it skips t.
func Start(t testing.TB) string {
	if testing.Short() {
		t.Skip("-short: no Temporal server")
	}
	bin := CLI(t)
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "server", "start-dev", "--headless", "--ip", "127.0.0.1",
		"--port", strconv.Itoa(port), "--http-port", strconv.Itoa(freePort(t)), "--metrics-port", strconv.Itoa(freePort(t)),
		"--log-level", "error")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the Temporal dev server: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		c, err := Dial(ctx, addr)
		if err == nil {
			_, err = c.CheckHealth(ctx, nil)
			c.Close()
			if err == nil {
				return addr
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the Temporal dev server at %s did not become ready: %v\n%s", addr, err, logs.String())
		case <-time.After(100 * time.Millisecond): // ask again until it answers
		}
	}
}

// Dial connects to addr's default namespace with the SDK's logs discarded.
func Dial(ctx context.Context, addr string) (client.Client, error) {
	return client.DialContext(ctx, client.Options{HostPort: addr,
		Logger: log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))})
}

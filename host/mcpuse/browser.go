package mcpuse

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strings"
	"sync"

	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/internal/textcut"
)

// BrowserUser is the LoginUser of the command line: it shows the login
// URL of an MCP server (on Out, escaped: it comes from the server's
// authorization server) and opens a browser on it: the program $BROWSER
// names, else the desktop's opener when there is a desktop.
type BrowserUser struct {
	Out    io.Writer
	Getenv func(string) string
	mu     sync.Mutex
}

// maxLoginURL bounds the URL shown.
const maxLoginURL = 8 << 10

// OpenLogin shows authURL and opens a browser on it.
func (u *BrowserUser) OpenLogin(ctx context.Context, server, authURL string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	fmt.Fprintf(u.Out, "MCP server %s wants you to log in; open this URL in a browser (agenthost waits for it):\n  %s\n",
		termtext.Escape(server), termtext.Escape(textcut.Clip(authURL, maxLoginURL)))
	argv := browserCommand(u.Getenv)
	if argv == nil {
		return nil
	}
	cmd := exec.Command(argv[0], append(argv[1:], authURL)...)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(u.Out, "(could not open a browser: %v)\n", err)
		return nil
	}
	go cmd.Wait()
	return nil
}

// browserCommand is the program that opens a URL: $BROWSER (split at
// spaces), else xdg-open on a Unix desktop ($DISPLAY or
// $WAYLAND_DISPLAY), open on macOS, nil otherwise.
func browserCommand(getenv func(string) string) []string {
	if b := strings.Fields(getenv("BROWSER")); len(b) > 0 {
		return b
	}
	switch runtime.GOOS {
	case "darwin":
		return []string{"open"}
	case "windows":
		return []string{"rundll32", "url.dll,FileProtocolHandler"}
	}
	if getenv("DISPLAY") != "" || getenv("WAYLAND_DISPLAY") != "" {
		if p, err := exec.LookPath("xdg-open"); err == nil {
			return []string{p}
		}
	}
	return nil
}

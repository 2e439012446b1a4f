//go:build unix

package mcpuse

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/oauth2"

	"github.com/agenthost/agenthost/internal/mcptest"
)

// TestTokenStore: a login is written 0600 in a 0700 directory and read
// back; it is keyed by name and url; a symbolic link where a login belongs,
// or a directory others may write, is refused; Remove deletes it.
func TestTokenStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "mcp-logins")
	s := TokenStore{Dir: dir}
	if l, err := s.Load("gh", "https://x/mcp"); l != nil || err != nil {
		t.Fatalf("Load before any login: %v, %v", l, err)
	}
	tok := &oauth2.Token{AccessToken: "at", RefreshToken: "rt", Expiry: time.Unix(2e9, 0).UTC()}
	if err := s.Save("gh", "https://x/mcp", &Login{ClientID: "c", TokenURL: "https://x/token", Token: tok}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("directory mode %v (%v), want 0700", st.Mode(), err)
	}
	fst, err := os.Stat(s.Path("gh", "https://x/mcp"))
	if err != nil || fst.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v (%v), want 0600", fst.Mode(), err)
	}
	l, err := s.Load("gh", "https://x/mcp")
	if err != nil || l == nil || l.Token.AccessToken != "at" || l.Token.RefreshToken != "rt" || l.ClientID != "c" {
		t.Fatalf("Load: %+v, %v", l, err)
	}
	if l, err := s.Load("gh", "https://other/mcp"); l != nil || err != nil {
		t.Fatalf("Load of another url: %v, %v; want none", l, err)
	}

	// a symbolic link planted as the login file is refused
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	os.WriteFile(target, []byte(`{"token":{"access_token":"planted"}}`), 0o600)
	link := s.Path("evil", "https://x/mcp")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("evil", "https://x/mcp"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Load through a symbolic link: %v, want a refusal", err)
	}

	// a directory others may write is refused
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("gh", "https://x/mcp"); err == nil || !strings.Contains(err.Error(), "writable by") {
		t.Errorf("Load from a directory others may write: %v, want a refusal", err)
	}
	if err := s.Save("gh", "https://x/mcp", l); err == nil {
		t.Errorf("Save into a directory others may write: no error")
	}
	os.Chmod(dir, 0o700)

	// a directory others may only read is made private
	os.Chmod(dir, 0o755)
	if _, err := s.Load("gh", "https://x/mcp"); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v after use, want 0700", st.Mode().Perm())
	}

	if had, err := s.Remove("gh", "https://x/mcp"); !had || err != nil {
		t.Fatalf("Remove: %v, %v", had, err)
	}
	if l, err := s.Load("gh", "https://x/mcp"); l != nil || err != nil {
		t.Fatalf("Load after Remove: %v, %v", l, err)
	}
}

// TestDefaultTokenDir: $XDG_STATE_HOME when absolute, else
// ~/.local/state (Linux and the BSDs).
func TestDefaultTokenDir(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("macOS keeps them under ~/Library/Application Support")
	}
	env := map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/st"}
	d, err := DefaultTokenDir(func(k string) string { return env[k] })
	if err != nil || d != "/st/agenthost/mcp-logins" {
		t.Errorf("got %q, %v", d, err)
	}
	env["XDG_STATE_HOME"] = "relative"
	d, err = DefaultTokenDir(func(k string) string { return env[k] })
	if err != nil || d != "/home/u/.local/state/agenthost/mcp-logins" {
		t.Errorf("got %q, %v", d, err)
	}
}

// TestOAuthLoginNotKept: a login the store refuses to write (its
// directory is writable by others) is an error of Login, naming the
// directory and the fix, though the token was got.
func TestOAuthLoginNotKept(t *testing.T) {
	as, err := mcptest.StartOAuth(mcptest.OAuthOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer as.Close()
	dir := filepath.Join(t.TempDir(), "mcp-logins")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	s := New(Spec{Name: "o", URL: as.URL, Timeout: 10 * time.Second,
		OAuth: &OAuth{Store: &TokenStore{Dir: dir}, User: browser{}}}, zerolog.Nop())
	defer s.Close()
	got, err := s.Login(context.Background())
	if err == nil || !strings.Contains(err.Error(), "the login could not be kept") ||
		!strings.Contains(err.Error(), dir+" is writable by group and others (mode 0777)") || !strings.Contains(err.Error(), "chmod go-w it") {
		t.Fatalf("Login: %v, %v; want the login not kept, the directory and the fix named", got, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the directory holds %d entries", len(entries))
	}
}

// browser is a LoginUser that follows the authorization URL, as a
// browser would, back to the loopback redirect.
type browser struct{}

func (browser) OpenLogin(ctx context.Context, server, authURL string) error {
	go func() {
		if resp, err := http.Get(authURL); err == nil {
			resp.Body.Close()
		}
	}()
	return nil
}

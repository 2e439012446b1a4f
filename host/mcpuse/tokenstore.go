package mcpuse

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/agenthost/agenthost/internal/private"
	"github.com/agenthost/agenthost/internal/shquote"
)

// TokenStore keeps the OAuth logins of url servers: one file per server
// (its block name and url), in Dir. Dir is made 0700 and the files 0600,
// whatever the umask; a Dir that another user owns or may write is
// refused, and nothing in it is followed through a symbolic link (it is
// opened through an os.Root, and a link where a login file belongs is
// refused), so that nobody else can read the tokens or plant a file that
// sends them elsewhere.
type TokenStore struct {
	Dir string
}

// Login is what a login stored for one server holds: the client agenthost
// was for the authorization server (registered, pre-registered or a client
// metadata document URL), the token endpoint to refresh at, and the token.
type Login struct {
	// Server is the block's name and URL its url, the protected resource.
	Server string `json:"server"`
	URL    string `json:"url"`
	// ClientID and ClientSecret are the client's; AuthStyle is how the
	// token endpoint wants them (oauth2.AuthStyle).
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	AuthStyle    int    `json:"auth_style,omitempty"`
	AuthURL      string `json:"auth_url,omitempty"`
	TokenURL     string `json:"token_url"`
	RedirectURL  string `json:"redirect_url,omitempty"`
	// Scopes are the scopes asked for.
	Scopes []string `json:"scopes,omitempty"`
	// Resource is the resource indicator (RFC 8707) the login's token
	// requests name: the MCP server's canonical URI. Empty in a login
	// kept by an older agenthost: URL then serves.
	Resource string `json:"resource,omitempty"`
	// Token is the access token, with its refresh token and expiry.
	Token *oauth2.Token `json:"token"`
	// Saved is when the file was written.
	Saved time.Time `json:"saved"`
}

// maxLoginFile bounds the size of a login file read back.
const maxLoginFile = 256 << 10

// DefaultTokenDir is the directory of MCP logins: $XDG_STATE_HOME/agenthost/mcp-logins,
// else ~/.local/state/agenthost/mcp-logins on Linux and the BSDs;
// ~/Library/Application Support/agenthost/mcp-logins on macOS;
// %LocalAppData%\agenthost\mcp-logins on Windows. getenv reads the
// environment (nil: the process's).
func DefaultTokenDir(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	const sub = "mcp-logins"
	switch runtime.GOOS {
	case "darwin":
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("$HOME is not set: agenthost keeps MCP logins under ~/Library/Application Support/agenthost")
		}
		return filepath.Join(home, "Library", "Application Support", "agenthost", sub), nil
	case "windows":
		d := getenv("LocalAppData")
		if d == "" {
			return "", errors.New("%LocalAppData% is not set: agenthost keeps MCP logins under it")
		}
		return filepath.Join(d, "agenthost", sub), nil
	}
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "agenthost", sub), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("neither $XDG_STATE_HOME nor $HOME is set: agenthost keeps MCP logins under $XDG_STATE_HOME/agenthost or ~/.local/state/agenthost")
	}
	return filepath.Join(home, ".local", "state", "agenthost", sub), nil
}

// fileName is the login file of server name at url: the name, for people,
// and a digest of the url, so that two configs with a block of the same
// name for different servers do not share a login.
func fileName(name, url string) string {
	sum := sha256.Sum256([]byte(url))
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
	return safe + "-" + hex.EncodeToString(sum[:6]) + ".json"
}

// Path is the file of the login of server name at url.
func (s TokenStore) Path(name, url string) string {
	return filepath.Join(s.Dir, fileName(name, url))
}

// open opens Dir (creating it, 0700, when create), refusing one that is
// not private.
func (s TokenStore) open(create bool) (*os.Root, error) {
	if s.Dir == "" {
		return nil, errors.New("no directory for MCP logins")
	}
	r, err := private.OpenDir(s.Dir, create, func(p *private.Problem) error {
		return fmt.Errorf("the directory of MCP logins %s %s; it holds your tokens, which another user could then read or replace. Fix: %s", s.Dir, p.What, p.Fix)
	})
	if err != nil {
		return nil, err
	}
	st, err := r.Stat(".")
	if err == nil {
		err = private.Tighten(s.Dir, st, func(m fs.FileMode) error { return r.Chmod(".", m) })
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Check makes Dir (0700) when it is missing and reports why a login
// could not be kept in it: a Dir another user owns or may write, or one
// that cannot be made.
func (s TokenStore) Check() error {
	r, err := s.open(true)
	if err != nil {
		return err
	}
	return r.Close()
}

// openIfAny opens the directory of logins to read it: nil, and no error,
// when there is none.
func (s TokenStore) openIfAny() (*os.Root, error) {
	r, err := s.open(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return r, err
}

// Load reads the login of server name at url: nil and no error when there
// is none.
func (s TokenStore) Load(name, url string) (*Login, error) {
	r, err := s.openIfAny()
	if r == nil {
		return nil, err
	}
	defer r.Close()
	fn := fileName(name, url)
	path := filepath.Join(s.Dir, fn)
	fi, err := r.Lstat(fn)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("MCP login %s is not a regular file (a symbolic link?); agenthost never makes one so: remove it and log in again", path)
	}
	if p := private.Check(fi); p != nil {
		return nil, fmt.Errorf("MCP login %s %s; remove it and log in again", path, p.What)
	}
	f, err := r.OpenFile(fn, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxLoginFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxLoginFile {
		return nil, fmt.Errorf("MCP login %s is over %d KiB: not a file agenthost wrote; remove it and log in again", path, maxLoginFile>>10)
	}
	var l Login
	if err := json.Unmarshal(b, &l); err != nil || l.Token == nil {
		return nil, fmt.Errorf("MCP login %s is not a login agenthost wrote; remove it (%s) and log in again", path, shquote.Command([]string{"agenthost", "mcp", "logout"}, name))
	}
	if l.URL != url {
		return nil, nil
	}
	return &l, nil
}

// Save writes the login of server name at url, replacing any: written to a
// new file, then renamed into place.
func (s TokenStore) Save(name, url string, l *Login) error {
	r, err := s.open(true)
	if err != nil {
		return err
	}
	defer r.Close()
	l.Server, l.URL, l.Saved = name, url, time.Now().UTC()
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	fn := fileName(name, url)
	tmp := fmt.Sprintf(".%s.%s.tmp", fn, rand.Text()[:8])
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("saving the MCP login of %q: %w", name, err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = r.Rename(tmp, fn)
	}
	if err != nil {
		r.Remove(tmp)
		return fmt.Errorf("saving the MCP login of %q: %w", name, err)
	}
	return nil
}

// Remove deletes the login of server name at url; it reports whether there
// was one.
func (s TokenStore) Remove(name, url string) (bool, error) {
	r, err := s.openIfAny()
	if r == nil {
		return false, err
	}
	defer r.Close()
	err = r.Remove(fileName(name, url))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

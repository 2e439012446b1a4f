package plugin

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/agenthost/agenthost/internal/ociref"
)

// Spec is one plugin to load: where its module comes from, its kind, its
// limits and the capabilities it is granted. The host builds one from each
// plugin block of agents.hcl; tests and other callers build them directly.
// Load copies what it keeps of the Spec, except the bytes of Wasm, which
// must not change afterwards.
type Spec struct {
	// Name names the plugin in errors, logs and Failures, and is the
	// guest's argv[0] in agenthost plugins.
	Name string
	// The module: Builtin names a builtin plugin ("core"); OCI a module
	// in a registry, fetched at load (or read from the registry cache,
	// internal/ociget); otherwise Path is a .wasm file, read at load, or
	// Wasm holds the module's bytes. The first one set is used.
	Builtin string
	OCI     *ociref.Ref
	Path    string
	Wasm    []byte
	// Insecure allows plain HTTP to a registry off this machine (an
	// oci+http:// OCI ref); see ociref.CheckTransport.
	Insecure bool
	// SHA256, when not "", is the lowercase hex digest the module must have.
	SHA256 string
	// Kind is the declared kind, or "" to detect it.
	Kind Kind
	// Limits bound every call; a zero limit takes its agents.hcl default.
	Limits Limits
	// Mounts, Env, Clock and Random are what the plugin is granted: all of
	// it for a wasi_cli plugin, only what its manifest requests too for an
	// agenthost plugin.
	Mounts []Mount
	Env    map[string]string
	Clock  bool
	Random bool
	// Config is the Extism plugin config (config_get), or a component's
	// wasi:config/store; HTTPAllow the origins (scheme://host[:port], host
	// may start with "*.") its http_request, or a component's
	// wasi:http/outgoing-handler, may reach. Extism plugins and
	// components only.
	Config    map[string]string
	HTTPAllow []string
	// Reuse lets one instance of an Extism plugin serve many calls of
	// one agent in one run (see extism_reuse.go). Extism plugins only.
	Reuse bool
	// Tools are the tools of a wasi_cli plugin; an agenthost plugin
	// describes its own, in its manifest, and must have none here.
	Tools []CLITool
}

// Limits bound each call of a plugin. A zero (or negative) field takes the
// default of the plugin block's limits in agents.hcl (internal/defaults).
type Limits struct {
	// Memory is the most memory the module may have, in bytes.
	Memory uint64
	// Timeout bounds a call, and the start of a pre-started instance.
	Timeout time.Duration
	// MaxOutput is the bytes of stdout, and separately of stderr, kept.
	MaxOutput int64
	// MaxWrite is the bytes a call may write to the plugin's read-write
	// mounts, all together.
	MaxWrite int64
	// MaxFiles is the files, directories and links a call may create in
	// the plugin's read-write mounts, all together.
	MaxFiles int64
}

// MountMode says whether a mount takes writes.
type MountMode string

const (
	// MountRO refuses every write. It is the mode of a Mount whose Mode is
	// not MountRW.
	MountRO MountMode = "ro"
	// MountRW takes writes, within the quotas of Limits.
	MountRW MountMode = "rw"
)

// Mount grants a plugin a host directory at a guest path. The directory is
// opened at load; nothing outside it, and none of the host's protected
// paths (Runtime.SetProtected), can be reached through it.
type Mount struct {
	// Name names the mount in messages.
	Name string
	// Host is the host directory; Guest the absolute path the guest sees.
	Host  string
	Guest string
	Mode  MountMode
}

// ReadOnly reports whether the mount refuses writes.
func (m Mount) ReadOnly() bool { return m.Mode != MountRW }

// CLITool is a tool of a wasi_cli plugin.
type CLITool struct {
	Name        string
	Description string
	// InputSchema is the JSON Schema of the arguments; {"type":"object"}
	// when empty.
	InputSchema json.RawMessage
	// Command builds a call's command line (the guest's whole argv, argv[0]
	// included) and stdin (nil for none) from the call's arguments, which
	// have passed InputSchema. Its error becomes an error result for the
	// model. It is called concurrently.
	Command func(args json.RawMessage) (argv []string, stdin []byte, err error)
	// Function is the export an Extism plugin's tool calls (the tool's
	// name when ""); Command's stdin is then the call's input and its argv
	// is ignored.
	Function string
}

// command runs Command; a panic in it (a library's, on arguments the
// model chose) is an error, so the call gets an error result and the host
// goes on.
func (c *CLITool) command(args json.RawMessage) (argv []string, stdin []byte, err error) {
	defer func() {
		if v := recover(); v != nil {
			argv, stdin, err = nil, nil, fmt.Errorf("host panic while reading the arguments: %v", v)
		}
	}()
	return c.Command(args)
}

package host

import (
	"encoding/json"
	"errors"
	"path"
	"strings"

	"github.com/agenthost/agenthost/host/plugin"
	"github.com/agenthost/agenthost/internal/callview"
	"github.com/agenthost/agenthost/loop"
)

// FileChange is what call would do to the file it names when it is a
// call of the builtin core plugin's write_file or edit (under any
// tool_prefix or rename): the file's content now, read through the
// plugin's own mounts as the call would reach it, and its content after
// the call; an approval question shows it as a diff. It is false for any
// other call, arguments that are not the tool's, a path under none of the
// plugin's mounts, a file that is not a regular file or is larger than
// callview.MaxDiffBytes, and an edit whose old_string does not occur in
// the file exactly once (the call would fail): the question then shows
// the arguments. It reads at most one file of that size, and is safe for
// concurrent use.
func (h *Host) FileChange(call loop.ToolCall) (callview.Change, bool) {
	ref, msg := h.all.lookup(call.Name)
	if msg != "" || ref.plugin == nil || (ref.own != "write_file" && ref.own != "edit") {
		return callview.Change{}, false
	}
	if cp := h.Config.Plugin(ref.plugin.Name()); cp == nil || cp.Builtin != "core" {
		return callview.Change{}, false
	}
	var args struct {
		Path      *string `json:"path"`
		Content   *string `json:"content"`
		OldString *string `json:"old_string"`
		NewString *string `json:"new_string"`
	}
	if json.Unmarshal([]byte(call.Arguments), &args) != nil || args.Path == nil {
		return callview.Change{}, false
	}
	abs, ok := corePath(ref.plugin, *args.Path)
	if !ok {
		return callview.Change{}, false
	}
	old, err := ref.plugin.ReadFile(abs, callview.MaxDiffBytes)
	exists := err == nil
	if err != nil && !errors.Is(err, plugin.ErrNotExist) {
		return callview.Change{}, false
	}
	switch {
	case ref.own == "write_file" && args.Content != nil && len(*args.Content) <= callview.MaxDiffBytes:
		return callview.Change{Exists: exists, Old: old, New: []byte(*args.Content), Replaces: []string{"content"}}, true
	case ref.own == "edit" && exists && args.OldString != nil && args.NewString != nil && *args.OldString != "":
		if strings.Count(string(old), *args.OldString) != 1 {
			return callview.Change{}, false
		}
		next := strings.Replace(string(old), *args.OldString, *args.NewString, 1)
		if len(next) > callview.MaxDiffBytes {
			return callview.Change{}, false
		}
		return callview.Change{Exists: true, Old: old, New: []byte(next), Replaces: []string{"old_string", "new_string"}}, true
	}
	return callview.Change{}, false
}

// corePath is the absolute guest path the core plugin makes of p (its
// Workspace.resolve in plugins/core): a relative path starts at the first
// mount.
func corePath(p *plugin.Plugin, name string) (string, bool) {
	mounts := p.Grants().Mounts
	if len(mounts) == 0 {
		return "", false
	}
	if name == "" {
		name = "."
	}
	if path.IsAbs(name) {
		return path.Clean(name), true
	}
	return path.Join(path.Clean(mounts[0].Guest), name), true
}

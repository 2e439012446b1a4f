package config

import (
	"embed"
	"io/fs"
	"strings"
)

//go:embed starter
var starterFS embed.FS

// StarterWorkspace is the folder the starter config mounts read-write, the
// only one its tools see; "agenthost init" makes it beside agents.hcl.
const StarterWorkspace = "workspace"

// Starter returns the files "agenthost init" writes: a commented
// agents.hcl, the prompts it reads and a first scenario test of it
// (testdata/agenthost/build_writes_hello.txtar), by slash-separated path relative to
// the directory of agents.hcl ("agents.hcl", "prompts/build.md", ...).
// They load without diagnostics.
func Starter() map[string][]byte {
	out := map[string][]byte{}
	err := fs.WalkDir(starterFS, "starter", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := starterFS.ReadFile(p)
		if err != nil {
			return err
		}
		out[strings.TrimPrefix(p, "starter/")] = b
		return nil
	})
	if err != nil {
		panic("config: embedded starter files: " + err.Error()) // a build bug
	}
	return out
}

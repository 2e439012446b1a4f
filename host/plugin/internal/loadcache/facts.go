package loadcache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
)

// Load facts. Loading a plugin compiles its module, which wazero does
// even from its compilation cache by decoding and validating the whole
// module again (for a large module, much of a start-up), and for a plugin
// without a manifest section runs it once in describe mode. What the load
// learns from that (the module's kind, the exports and imports it checked,
// the describe run's manifest) depends only on the module's bytes, its
// memory limit, the plugin's name and kind, and this host's code, so it is
// kept in the compilation cache directory, keyed by all of them. A plugin
// whose facts are found loads from them at once and is compiled in the
// background (compileLater); its first call waits for the compilation.
// A module never loaded before, or whose facts are missing, unreadable,
// not private or inconsistent, is checked in full before the run starts,
// as without the cache, and its facts are written afterwards. A module
// that fails to compile in the background although its facts said it
// loaded has its facts removed, and its calls fail with the compile error.
// Whatever the facts say, the module is validated by wazero before any of
// its code runs, and a manifest from the facts is checked like one read
// from the module.

// Cache is the part of the compilation cache directory that holds
// the load facts and the remembered sums of module files; dir "" keeps
// nothing.
type Cache struct{ dir string }

// New is the Cache in the compilation cache directory dir ("" keeps
// nothing).
func New(dir string) Cache { return Cache{dir: dir} }

// Format changes whenever what loading checks, or what the facts
// hold, changes: older entries are then never read.
const Format = 2

// Dir is the directory of the facts under the compilation cache.
const Dir = "agenthost-load"

// Facts is what loading a plugin learned from its module.
type Facts struct {
	Format  int    `json:"format"`
	Key     string `json:"key"`
	Module  string `json:"module"` // sha256 of the module's bytes, hex
	Pages   uint32 `json:"pages"`  // its memory limit in pages
	Name    string `json:"name"`
	Kind    string `json:"kind"` // as the spec gave it ("" = detect)
	Extism  bool   `json:"extism"`
	Environ bool   `json:"environ"` // imports environ_get
	// Exports are the module's exported functions.
	Exports map[string]Export `json:"exports"`
	// Section is the module's agenthost.manifest custom section, if any.
	Section string `json:"section,omitempty"`
	// Manifest is the manifest the describe run printed, if one ran.
	Manifest string `json:"manifest,omitempty"`
}

// Export is the signature of an exported function: what loading a
// plugin checks of its exports.
type Export struct {
	Params  int `json:"params"`
	Results int `json:"results"`
}

// factsEntry is the file: the facts and the sha256 of their JSON, so a
// truncated or altered file is noticed.
type factsEntry struct {
	Sum   string          `json:"sum"`
	Facts json.RawMessage `json:"facts"`
}

var wazeroVersion = sync.OnceValue(func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/tetratelabs/wazero" {
				if d.Replace != nil {
					return d.Replace.Path + "@" + d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
})

// Key names the facts of a module loaded with a memory limit of
// pages pages as plugin name of kind kind.
func Key(moduleSum string, pages uint32, name string, kind string) string {
	h := sha256.New()
	fmt.Fprintf(h, "agenthost load facts %d\x00%s\x00%s\x00%d\x00%s\x00%s", Format, wazeroVersion(), moduleSum, pages, name, kind)
	return hex.EncodeToString(h.Sum(nil))
}

func (c Cache) factsPath(key string) string {
	return filepath.Join(c.dir, Dir, key+".json")
}

// ReadFacts returns the facts stored under key, or nil when there are
// none, or when the entry is not private, not whole, or does not match
// what was asked: such an entry is ignored (and replaced after a full
// load).
func (c Cache) ReadFacts(key, moduleSum string, pages uint32, name string, kind string) *Facts {
	if c.dir == "" {
		return nil
	}
	data := c.readCacheFile(c.factsPath(key), 4<<20)
	if data == nil {
		return nil
	}
	var e factsEntry
	if json.Unmarshal(data, &e) != nil {
		return nil
	}
	sum := sha256.Sum256(e.Facts)
	if hex.EncodeToString(sum[:]) != e.Sum {
		return nil
	}
	var lf Facts
	if json.Unmarshal(e.Facts, &lf) != nil {
		return nil
	}
	if lf.Format != Format || lf.Key != key || lf.Module != moduleSum || lf.Pages != pages || lf.Name != name || lf.Kind != kind || lf.Exports == nil {
		return nil
	}
	return &lf
}

// WriteFacts stores lf under its key (writeCacheFile).
func (c Cache) WriteFacts(lf *Facts) {
	if c.dir == "" {
		return
	}
	facts, err := json.Marshal(lf)
	if err != nil {
		return
	}
	sum := sha256.Sum256(facts)
	data, err := json.Marshal(factsEntry{Sum: hex.EncodeToString(sum[:]), Facts: facts})
	if err != nil {
		return
	}
	c.writeCacheFile(c.factsPath(lf.Key), data)
}

// DropFacts removes the facts stored under key.
func (c Cache) DropFacts(key string) {
	if c.dir != "" && key != "" {
		os.Remove(c.factsPath(key))
	}
}

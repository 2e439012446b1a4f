package scenario

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// ExtismSDK is the module whose test plugins extismwasm copies: real
// third-party Extism plugins (its folder wasm/). It is not a dependency of
// agenthost: the module is fetched into the module cache with
// `go mod download`, so go.mod and go.sum do not change.
const ExtismSDK = "github.com/extism/go-sdk@v1.7.1"

var extismDir = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "mod", "download", "-json", ExtismSDK).Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr == nil && info.Error != "" {
		return "", &os.PathError{Op: "go mod download", Path: ExtismSDK, Err: os.ErrNotExist}
	}
	if err != nil {
		return "", err
	}
	return info.Dir, nil
})

// ExtismTestPlugin returns the path of a test plugin of ExtismSDK
// ("count_vowels.wasm") in the module cache, fetching the module if needed
// (go run ./bench uses it too).
func ExtismTestPlugin(name string) (string, error) {
	dir, err := extismDir()
	if err != nil {
		return "", fmt.Errorf("%s is not available (offline?): %w", ExtismSDK, err)
	}
	return filepath.Join(dir, "wasm", name), nil
}

// ExtismPDK is the Extism Go PDK a scenario may build a plugin with: its
// go.mod requires this version (and its go.sum lists it), and buildwasm
// fetches it like any dependency.
const ExtismPDK = "github.com/extism/go-pdk@v1.1.3"

var pdkAvailable = sync.OnceValue(func() bool {
	return exec.Command("go", "mod", "download", ExtismPDK).Run() == nil
})

// Condition evaluates the conditions a scenario may use beside
// testscript's own: [extism] holds when the test plugins of ExtismSDK are
// available (see extismwasm), [extismpdk] when ExtismPDK is (in the module
// cache, or from the network).
func Condition(cond string) (bool, error) {
	switch cond {
	case "extism":
		_, err := extismDir()
		return err == nil, nil
	case "extismpdk":
		return pdkAvailable(), nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// cmdExtismWasm copies a test plugin of the Extism Go SDK:
//
//	extismwasm NAME.wasm OUT.wasm
//
// Guard the script with [!extism] skip: without the module (offline) the
// command fails.
func cmdExtismWasm(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: extismwasm NAME.wasm OUT.wasm")
	}
	dir, err := extismDir()
	if err != nil {
		ts.Fatalf("extismwasm: %s is not available (offline?): %v; guard the script with [!extism] skip", ExtismSDK, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "wasm", args[0]))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), b, 0o644))
}

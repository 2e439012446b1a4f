package plugin

import (
	"context"
	"strings"
	"testing"
)

// TestDetectWithoutRunning checks that a module with no manifest section
// that cannot read AGENTHOST_MODE (it imports no environ_get) is taken for a
// plain WASI command without being run: trapModule's _start would trap.
func TestDetectWithoutRunning(t *testing.T) {
	r := newRuntime(t)
	_, err := r.Load(context.Background(), spec(t, "noenv", trapModule))
	if err == nil || !strings.Contains(err.Error(), "cannot read AGENTHOST_MODE (it imports no environ_get)") || strings.Contains(err.Error(), "trap") {
		t.Errorf("load: %v, want the no-environ_get reason and no run", err)
	}
	info, err := Inspect(context.Background(), r, trapModule)
	if err != nil {
		t.Fatal(err)
	}
	if info.Kind != KindWASICLI || !strings.Contains(info.Detection, "nothing was run") || len(info.Problems) != 0 {
		t.Errorf("inspect: kind %q, detection %q, problems %q", info.Kind, info.Detection, info.Problems)
	}
}

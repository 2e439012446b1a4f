package loop

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDeps enforces the import policy: loop depends on small interfaces,
// never on the sandbox, the provider client, the config language, the host
// that builds agents, OpenTelemetry or the scenario runner's test
// machinery; of the project it imports only leaves that hold texts and
// values (leaves below).
func TestDeps(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := []string{
		"github.com/tetratelabs/wazero",
		"github.com/sashabaranov/go-openai",
		"github.com/hashicorp/hcl",
		"github.com/agenthost/agenthost/host",
		"github.com/agenthost/agenthost/internal/scenario",
		"github.com/rogpeppe/go-internal",
		"go.opentelemetry.io", // traces are made from events, in host/tracing
		"go.temporal.io",      // the workflow runtime stays in host/temporal
	}
	// leaves are the project packages loop may depend on.
	leaves := []string{
		"github.com/agenthost/agenthost/prompts",
		"github.com/agenthost/agenthost/internal/defaults",
		"github.com/agenthost/agenthost/internal/toolname",
		"github.com/agenthost/agenthost/internal/jsonenc",
		"github.com/agenthost/agenthost/internal/jsonscan",
		"github.com/agenthost/agenthost/internal/argcount",
		"github.com/agenthost/agenthost/internal/textcut",
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps printed %d packages; expected the standard library at least", len(deps))
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, f+"/") {
				t.Errorf("package loop depends on %s (forbidden prefix %s)", d, f)
			}
		}
		if strings.HasPrefix(d, "github.com/agenthost/agenthost/") && d != "github.com/agenthost/agenthost/loop" && !slices.Contains(leaves, d) {
			t.Errorf("package loop depends on %s, which is not one of the leaves %q", d, leaves)
		}
	}
}

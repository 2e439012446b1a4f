package runs

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/temporal"
	"github.com/agenthost/agenthost/loop"
)

// TestRunsShowEscapes: runs show prints the answer of a durable run, model
// text, escaped when stdout is a terminal (as run does), and exact when it
// is not.
func TestRunsShowEscapes(t *testing.T) {
	ri := Info{ID: "r1", Agent: "main", Status: "completed", Started: time.Unix(0, 0),
		Result: &loop.Result{Agent: "main", StopReason: loop.StopCompleted, Steps: 1, StepsMax: 5,
			Output: "title \x1b]0;pwned\x07 clear \x1b[2J c1 \u009b31m end"}}
	for _, tty := range []bool{true, false} {
		var out bytes.Buffer
		WriteInfo(Out{W: &out, TTY: tty}, ri)
		got := out.String()
		raw := strings.ContainsAny(got, "\x1b\x07\u009b")
		if tty && raw {
			t.Errorf("on a terminal, runs show wrote control characters: %q", got)
		}
		if !tty && !strings.Contains(got, ri.Result.Output) {
			t.Errorf("piped, runs show changed the answer: %q", got)
		}
		if !strings.Contains(got, "title") || !strings.Contains(got, "end") {
			t.Errorf("the answer is missing: %q", got)
		}
	}
}

// TestRunsShowCommands: runs show prints the commands that decide a
// waiting call with the ids quoted and after "--" (issue 34, finding 6):
// pasted into /bin/sh, each line passes exactly the run and the call id,
// however hostile the model made the id, as the last two positional
// arguments, and runs nothing else. The call's arguments are shown as a
// terminal's question shows them: a forged line stays behind the gutter.
func TestRunsShowCommands(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, id := range []string{"--always", "c1;touch${IFS}pwned;#", "c1`touch${IFS}pwned`", "c1$(touch${IFS}pwned)", "c1'x'", "c1|touch${IFS}pwned", "-"} {
		ri := Info{ID: "r-1", Agent: "main", Status: "running", Started: time.Unix(0, 0),
			Waiting: &Waiting{WaitingCall: temporal.WaitingCall{Kind: loop.AskApproval, Agent: "main", CallID: id, Tool: "write_file",
				Arguments: `{"path":"/workspace/run.sh","content":"rm -rf ~\n  path: /workspace/notes.md"}`, Since: time.Unix(0, 0)}}}
		for _, tty := range []bool{true, false} {
			var out bytes.Buffer
			WriteInfo(Out{W: &out, TTY: tty}, ri)
			got := out.String()
			if n := strings.Count(got, "\n  path: "); n != 1 || !strings.Contains(got, "\n  path: /workspace/run.sh\n") {
				t.Errorf("id %q: %d lines at the key column start with path:, want the real one alone:\n%s", id, n, got)
			}
			var lines []string
			for _, l := range strings.Split(got, "\n") {
				if strings.HasPrefix(l, "  agenthost runs ") {
					lines = append(lines, l)
				}
			}
			if len(lines) != 2 {
				t.Fatalf("id %q: want two command lines, got:\n%s", id, got)
			}
			dir := t.TempDir()
			for i, l := range lines {
				// agenthost is a shell function here that prints its arguments.
				cmd := exec.Command(sh, "-c", `agenthost() { printf '%s\n' "$@"; }`+"\n"+l)
				cmd.Dir = dir
				b, err := cmd.Output()
				if err != nil {
					t.Fatalf("id %q: sh -c %q: %v", id, l, err)
				}
				want := []string{"runs", "approve", "--", "r-1", id}
				if i == 1 {
					want = []string{"runs", "deny", "--reason", "TEXT", "--", "r-1", id}
				}
				if args := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"); !slices.Equal(args, want) {
					t.Errorf("id %q: the printed line %q passes %q, want %q", id, l, args, want)
				}
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("id %q: pasting the printed commands made %v", id, ents)
			}
		}
	}
}

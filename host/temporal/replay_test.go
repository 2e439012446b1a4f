package temporal

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/agenthost/agenthost/internal/temporaltest"
	"github.com/agenthost/agenthost/loop"
)

// TestRealServerReplay runs scenarios on a real Temporal server (the dev
// server, a worker in this process), checks that their results are those
// of the in-process runs, and replays each workflow's history, children
// included, with the workflow code: a replay that took another path (a
// clock, a random number or map order in workflow code) fails.
func TestRealServerReplay(t *testing.T) {
	addr := temporaltest.Start(t)
	ctx := context.Background()
	c, err := Dial(ctx, addr, DefaultNamespace, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	quiet := log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, sc := range scenarios {
		// Scenarios that sleep (retries) or cancel from a tool are covered
		// by the test environment and the end-to-end tests.
		if sc.name == "retries" || sc.cancel {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			lres, _, _ := runLocal(t, sc)
			b := sc.build()
			agents := fakeAgents{}
			var add func(a *loop.Agent)
			add = func(a *loop.Agent) {
				agents[a.Name] = a
				for _, s := range a.Subagents {
					add(s)
				}
			}
			add(b.top)
			queue := "replay-" + sc.name
			w := NewWorker(c, queue, agents, 0, 0)
			if err := w.Start(); err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			run, err := Start(ctx, c, queue, NewRunID(), RunInput{Agent: b.top.Name, Prompt: "task"})
			if err != nil {
				t.Fatal(err)
			}
			var res loop.Result
			if err := run.Get(ctx, &res); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(resultJSON(lres), resultJSON(&res)); diff != "" {
				t.Errorf("result differs (-local +server):\n%s", diff)
			}
			ids := []string{run.GetID()}
			for i := 1; i <= 2; i++ {
				ids = append(ids, fmt.Sprintf("%s/sub-%d", run.GetID(), i))
			}
			replayer := worker.NewWorkflowReplayer()
			replayer.RegisterWorkflowWithOptions(RunWorkflow, workflow.RegisterOptions{Name: WorkflowRun})
			replayer.RegisterWorkflowWithOptions(SubagentWorkflow, workflow.RegisterOptions{Name: WorkflowSubagent})
			replayed := 0
			for _, id := range ids {
				h, runID, ok := history(c, id)
				if !ok {
					continue
				}
				// The workflow's id and run id: child ids and the jitter's
				// seed derive from them.
				opts := worker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: id, RunID: runID}}
				if err := replayer.ReplayWorkflowHistoryWithOptions(quiet, h, opts); err != nil {
					t.Errorf("replay of %s: %v", id, err)
				}
				// Its two 100 KiB tool results are in the history once:
				// the requests that repeat them were fetched by query.
				if n := proto.Size(h); sc.name == "large_requests" && n > 300<<10 {
					t.Errorf("history of %s is %d KiB; want the conversation written once (about 200 KiB)", id, n>>10)
				}
				replayed++
			}
			if want := 1 + 2*btoi(sc.name == "subagents"); replayed != want {
				t.Errorf("replayed %d histories, want %d", replayed, want)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// history reads the whole history of workflow id and its run id; ok is
// false when there is no such workflow.
func history(c client.Client, id string) (*historypb.History, string, bool) {
	d, err := c.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		return nil, "", false
	}
	runID := d.WorkflowExecutionInfo.Execution.RunId
	it := c.GetWorkflowHistory(context.Background(), id, runID, false, 0)
	h := &historypb.History{}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, "", false
		}
		h.Events = append(h.Events, e)
	}
	return h, runID, len(h.Events) > 0
}

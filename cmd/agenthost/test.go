package main

import "context"

// cmdTest runs txtar scenario files. See scenario.go.
func cmdTest(ctx context.Context, args []string, e *env) int {
	return usageErr(e, "test: not implemented yet")
}

package loop

import "context"

// Run runs agent a on the input until it completes or a limit stops it. It
// never panics on model or tool misbehaviour and always returns a result.
func (r *Runner) Run(ctx context.Context, a *Agent, in Input) *Result {
	panic("TODO")
}

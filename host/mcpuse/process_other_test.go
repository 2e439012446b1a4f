//go:build !unix

package mcpuse

// processGone cannot tell here; TestCloseStopsServer checks the rest.
func processGone(int) (gone, known bool) { return false, false }

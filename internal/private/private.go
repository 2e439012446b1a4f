// Package private tells whether a file or directory is the user's own:
// owned by the user running agenthost and writable by nobody else. The
// compilation cache (host), data_dir (internal/session), the MCP logins
// (host/mcpuse) and the chat history (cmd/agenthost) refuse what is not,
// each wording the refusal with a Problem; OpenDir opens such a directory.
package private

// Problem is why a file or directory is not private, in words that follow
// its path in a message.
type Problem struct {
	// What is wrong: "is owned by uid 65534, not by you (uid 1000)" or
	// "is writable by others (mode 0757)".
	What string
	// Fix is the command that mends it: "chown it to yourself" or
	// "chmod go-w it".
	Fix string
}

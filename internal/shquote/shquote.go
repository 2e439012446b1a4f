// Package shquote writes the commands agenthost prints for a person to
// paste into a POSIX shell ("agenthost runs approve -- RUN CALL"), so that
// a value in one (a run or call id, a session, a server's name: text that
// may come from a model or a server) is passed as exactly one argument,
// and never as an option: each word is quoted (Quote) and values follow
// "--" (Command). It is the one rule for every printed command.
package shquote

import "strings"

// safe reports whether s needs no quotes: letters, digits and
// _ @ % + = : , . / - only, and not empty.
func safe(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("_@%+=:,./-", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Quote returns s as one word of a POSIX shell command line: as it is when
// it holds only characters no shell treats specially, else in single
// quotes, each ' written as '\”. The shell reads it back as s, whatever s
// holds ($, `, ;, spaces, newlines, quotes). A word that starts with "-"
// stays an option to the command it is passed to: put it after "--"
// (Command).
func Quote(s string) string {
	if safe(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Command is the command line of words, the command and its options as
// the host writes them, then "--" and args, the values (ids, names), each
// word quoted: the command receives exactly args as its positional
// arguments, none of them read as an option.
func Command(words []string, args ...string) string {
	q := make([]string, 0, len(words)+1+len(args))
	for _, w := range words {
		q = append(q, Quote(w))
	}
	q = append(q, "--")
	for _, a := range args {
		q = append(q, Quote(a))
	}
	return strings.Join(q, " ")
}

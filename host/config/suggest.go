package config

import (
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/internal/toolname"
)

// Suggest returns the candidate closest to name when its Levenshtein
// distance is below 3 (HCL's own threshold), or "".
func Suggest(name string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := toolname.Distance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// didYouMean is " Did you mean \"x\"?" or, without a close match, a list of
// what is declared ("" when nothing is).
func didYouMean(name string, candidates []string, kind string) string {
	if s := Suggest(name, candidates); s != "" {
		return fmt.Sprintf(" Did you mean %q?", s)
	}
	if len(candidates) == 0 {
		return ""
	}
	return fmt.Sprintf(" Declared %s: %s.", kind, quoteList(candidates))
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

package toolname

import "strings"

// Suggest returns the tool among names that a wrong name most likely
// meant, or "" when none stands out:
//
//  1. the one name equal to it once case and separators are ignored
//     ("fs.read_text_file", "FS/read-text-file" for "fs__read_text_file");
//  2. else the one name that ends with it after a separator: the tool of
//     an MCP server or a plugin with a tool_prefix called by its own name
//     ("read_text_file" for "fs__read_text_file", "greet" for "p_greet");
//  3. else the closest name by edit distance, when it is below 3.
func Suggest(name string, names []string) string {
	if name == "" {
		return ""
	}
	key := fold(name)
	if s, ok := only(names, func(n string) bool { return fold(n) == key }); ok {
		return s
	}
	if s, ok := only(names, func(n string) bool { f := fold(n); return strings.HasSuffix(f, "_"+key) }); ok {
		return s
	}
	best, bestD := "", 3
	for _, n := range names {
		if d := Distance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// only returns the one name that ok accepts; false when none or several do.
func only(names []string, ok func(string) bool) (string, bool) {
	found := ""
	for _, n := range names {
		if ok(n) {
			if found != "" && found != n {
				return "", false
			}
			found = n
		}
	}
	return found, found != ""
}

// fold lowercases name and turns every run of characters other than ASCII
// letters and digits into one '_'.
func fold(name string) string {
	var sb strings.Builder
	sep := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r >= 0x80 {
			if sep && sb.Len() > 0 {
				sb.WriteByte('_')
			}
			sep = false
			sb.WriteRune(r)
			continue
		}
		sep = true
	}
	return sb.String()
}

// Distance is the Levenshtein distance between a and b, in runes.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

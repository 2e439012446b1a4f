package term

import (
	"slices"
	"strings"
	"testing"
)

// TestFitLastColumn cuts the last column to what the other columns (their
// widest cell in runes, padded by 2) leave of the width, and leaves the
// rows whole without a width or with less than 20 runes of room.
func TestFitLastColumn(t *testing.T) {
	long := strings.Repeat("d", 50)
	table := func() [][]string {
		return [][]string{{"TOOL", "KIND", "DESCRIPTION"}, {"é_tool", "wasm", long}}
	}
	// The other columns: "é_tool" (6 runes) + 2 and "wasm" + 2, 14 in all.
	for _, tc := range []struct {
		cols int
		want string
	}{
		{0, long},
		{14 + 19, long},
		{14 + 20, strings.Repeat("d", 19) + "…"},
		{14 + 50, long},
	} {
		rows := table()
		FitLastColumn(rows, tc.cols)
		if rows[1][2] != tc.want {
			t.Errorf("cols %d: last cell %q, want %q", tc.cols, rows[1][2], tc.want)
		}
		if !slices.Equal(rows[0], table()[0]) || !slices.Equal(rows[1][:2], table()[1][:2]) {
			t.Errorf("cols %d: rows %q, want only the last cell cut", tc.cols, rows)
		}
	}
}

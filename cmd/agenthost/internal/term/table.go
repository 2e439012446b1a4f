package term

import (
	"unicode/utf8"

	"github.com/agenthost/agenthost/internal/textcut"
)

// minLastColumn is the narrowest last column FitLastColumn cuts to: with
// less room left, rows are left whole.
const minLastColumn = 20

// FitLastColumn cuts the last cell of each row (the header included) so
// that a table written with a padding of 2 fits cols columns, as gh cuts a
// table's last column: the room is what the other columns, each as wide as
// its widest cell (in runes) and padded, leave of cols. Rows are left
// whole when cols is 0 (not a terminal, or its width unknown) or the room
// is under 20 runes. The cells are written already escaped.
func FitLastColumn(rows [][]string, cols int) {
	if cols == 0 || len(rows) == 0 {
		return
	}
	var widths []int
	for _, r := range rows {
		for i := 0; i < len(r)-1; i++ {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
		}
	}
	room := cols
	for _, w := range widths {
		room -= w + 2
	}
	if room < minLastColumn {
		return
	}
	for _, r := range rows {
		if len(r) > 0 {
			r[len(r)-1] = textcut.Runes(r[len(r)-1], room)
		}
	}
}

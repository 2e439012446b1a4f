package term

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/loop"
)

// NewLogger makes the logger of a command on w (its stderr): the human
// format on a terminal (tty; in colour with color), JSON lines otherwise.
// An empty level is warn on a terminal (the progress display says what
// info logs would), info otherwise. With progress (the progress display of
// a run is on w), the records of what the display reports already are
// left out, so each event is reported once: failed model requests (the
// display shows each retry, and the run's last lines the error that
// stopped it), doom-loop verdicts and the final step (progress lines),
// and the run's end (the last line). The error is that of a level that is
// not one.
func NewLogger(w io.Writer, level string, tty, color, progress bool) (zerolog.Logger, error) {
	if level == "" {
		level = "info"
		if tty {
			level = "warn"
		}
	}
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Nop(), fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	if tty {
		w = zerolog.ConsoleWriter{Out: w, NoColor: !color, TimeFormat: time.TimeOnly, FormatPrepare: EscapeLogEvent}
	}
	l := zerolog.New(w).Level(lvl).With().Timestamp().Logger()
	if progress {
		l = l.Hook(shownElsewhere{})
	}
	return l, nil
}

// shownElsewhere drops the log records that the progress display and the
// last lines of a run show already (loop.LogRequestFailed and the like).
type shownElsewhere struct{}

func (shownElsewhere) Run(ev *zerolog.Event, _ zerolog.Level, msg string) {
	for _, p := range []string{loop.LogRequestFailed, loop.LogDoomLoop, loop.LogFinalStep} {
		if strings.HasPrefix(msg, p) {
			ev.Discard()
			return
		}
	}
	if msg == loop.LogRunEnd {
		ev.Discard()
	}
}

package plugin

import (
	"bytes"
	"fmt"
	"github.com/agenthost/agenthost/internal/sandbox"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host/plugin/internal/notify"
)

// noteWriter is a stderr sandbox.Output that takes notification lines, with
// no call to report to: its notifications are lines of the returned log.
func noteWriter(max int64, flood func()) (*sandbox.Output, *bytes.Buffer) {
	var log bytes.Buffer
	w := sandbox.NewOutput(max, flood)
	w.Lines = &noteLines{sink: notify.New("p", zerolog.New(&log).Level(zerolog.DebugLevel))}
	return w, &log
}

// A notification line is taken out of stderr however it is split into
// writes, and the lines around it stay; an unended line is stderr.
func TestStderrNotesSplitWrites(t *testing.T) {
	w, log := noteWriter(1<<20, nil)
	in := "before\n" + `{"agenthost":"progress","progress":3,"total":10,"message":"m"}` + "\n" + `{"agenthost":"log","level":"notice","data":{"k":1}}` + "\nafter\n{\"agenthost\""
	for i := 0; i < len(in); i += 5 {
		w.Write([]byte(in[i:min(i+5, len(in))]))
	}
	if got := strings.Count(log.String(), `"message":"plugin progress"`); got != 1 || !strings.Contains(log.String(), `"progress":3,"total":10,"message":"m"`) {
		t.Errorf("progress logged %d times, want once with its fields: %s", got, log)
	}
	if !strings.Contains(log.String(), `"level":"info","plugin":"p","logger":"p","data":{"k":1},"message":"plugin log"`) {
		t.Errorf("log message not logged at info: %s", log)
	}
	if got, want := w.Tail(), "before\nafter\n{\"agenthost\""; got != want {
		t.Errorf("tail %q, want %q", got, want)
	}
	if w.Written() != int64(len(in)) || w.Truncated() {
		t.Errorf("total %d of %d written, truncated %v", w.Written(), len(in), w.Truncated())
	}
}

// A line longer than maxNoteLine is stderr, never parsed, and no more than
// maxNoteLine bytes of a line are held; one of maxNoteLine bytes is a
// notification.
func TestStderrNotesLineBound(t *testing.T) {
	line := func(n int) string {
		head := `{"agenthost":"log","level":"error","data":"`
		return head + strings.Repeat("z", n-len(head)-2) + `"}`
	}
	w, log := noteWriter(1<<20, nil)
	w.Write([]byte(line(maxNoteLine) + "\n"))
	if !strings.Contains(log.String(), "plugin log") || w.Kept() != 0 {
		t.Fatalf("a line of maxNoteLine bytes was not taken (kept %d): %.200s", w.Kept(), log)
	}
	w, log = noteWriter(1<<20, nil)
	long := line(maxNoteLine + 1)
	for i := 0; i < len(long); i += 1000 {
		w.Write([]byte(long[i:min(i+1000, len(long))]))
		if len(w.Lines.(*noteLines).line) > maxNoteLine {
			t.Fatalf("holds %d bytes of a line", len(w.Lines.(*noteLines).line))
		}
	}
	w.Write([]byte("\n"))
	if log.Len() != 0 || w.Kept() != int64(len(long)+1) {
		t.Fatalf("an overlong line: kept %d of %d bytes, logged %.200s", w.Kept(), len(long)+1, log)
	}
	// An endless line starting with '{' is held to the bound, then passed.
	w, _ = noteWriter(1<<30, nil)
	chunk := []byte("{" + strings.Repeat("q", 4095))
	for range 256 {
		w.Write(chunk)
		if len(w.Lines.(*noteLines).line) > maxNoteLine {
			t.Fatalf("holds %d bytes of a line", len(w.Lines.(*noteLines).line))
		}
	}
	if w.Kept() != 256*4096 {
		t.Errorf("kept %d bytes of an endless line, want %d", w.Kept(), 256*4096)
	}
	// Parsing starts again at the next line.
	w.Write([]byte("\n" + `{"agenthost":"progress","progress":1}` + "\n"))
	if w.Kept() != 256*4096+1 {
		t.Errorf("the notification after an endless line was kept: %d bytes", w.Kept())
	}
}

// A call's notifications are capped at notify.MaxNotes, dropped past it
// (logged once); they count toward the output flood.
func TestStderrNotesFlood(t *testing.T) {
	w, log := noteWriter(1<<20, nil)
	for i := range notify.MaxNotes + 500 {
		fmt.Fprintf(w, `{"agenthost":"progress","progress":%d}`+"\n", i)
	}
	if got := strings.Count(log.String(), "plugin progress"); got != notify.MaxNotes {
		t.Errorf("%d progress notifications routed, want %d", got, notify.MaxNotes)
	}
	if got := strings.Count(log.String(), "too many notifications"); got != 1 {
		t.Errorf("the drop logged %d times, want 1", got)
	}
	flooded := false
	w, _ = noteWriter(100, func() { flooded = true })
	for range 6 {
		w.Write([]byte(`{"agenthost":"progress","progress":1}` + "\n"))
	}
	if !flooded || w.Kept() != 0 {
		t.Errorf("notification lines past twice max_output: flood %v, kept %d", flooded, w.Kept())
	}
}

// Lines that name a notification but are not one stay stderr; a
// malformed one is logged once.
func TestStderrNotesMalformed(t *testing.T) {
	w, log := noteWriter(1<<20, nil)
	bad := []string{
		`{"agenthost":"log","level":"loud","data":1}`,
		`{"agenthost":"log","level":"info"}`,
		`{"agenthost":"progress","progress":"three"}`,
		`{"agenthost":"progress"}`,
		`{"agenthost":"shout","data":1}`,
		`{"agenthost":"progress","progress":1`,
		`{"other":"agenthost"}`,
	}
	for _, l := range bad {
		w.Write([]byte(l + "\n"))
	}
	if got, want := w.Tail(), strings.Join(bad, "\n"); got != want {
		t.Errorf("tail %q, want %q", got, want)
	}
	if strings.Contains(log.String(), "plugin progress") || strings.Contains(log.String(), "plugin log") {
		t.Errorf("a malformed line was routed: %s", log)
	}
	if got := strings.Count(log.String(), "is not one"); got != 1 {
		t.Errorf("malformed lines logged %d times, want 1: %s", got, log)
	}
}

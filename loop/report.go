package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/agenthost/agenthost/internal/textcut"
)

// Bounds of what one call may report (CallReport): the events past them
// are counted and dropped, and tool.end says how many.
const (
	MaxReportProgress = 100     // tool.progress events per call
	MaxReportLogs     = 100     // tool.log events per call
	MaxReportData     = 4 << 10 // bytes of a tool.log's data (JSON)
	maxReportMessage  = 1 << 10 // bytes of a tool.progress's message, and of a logger's name
)

// CallReport is where a Toolset reports how a call the loop made is
// going: its progress and its log messages (hyper-mcp's notify_progress and
// notify_logging_message). The loop makes them tool.progress and tool.log
// events, between the call's tool.start and tool.end, at most
// MaxReportProgress and MaxReportLogs per call. Its methods may be called
// from any goroutine while the call runs; after it ends they do nothing.
type CallReport interface {
	// Progress reports how far the call is, out of total (0: unknown).
	Progress(progress, total float64, message string)
	// Log reports a log message at an MCP level (debug … emergency);
	// data is JSON, cut to MaxReportData bytes.
	Log(level, logger string, data json.RawMessage)
}

type callReportKey struct{}

// CallReportFrom returns the CallReport of the call the loop makes with
// ctx, or nil when ctx does not come from the loop.
func CallReportFrom(ctx context.Context) CallReport {
	c, _ := ctx.Value(callReportKey{}).(CallReport)
	return c
}

// report is the CallReport of one call. Its events go to the run's sink
// one at a time while the loop's goroutine waits: directly when that
// goroutine waits for this call alone (inline), else through notes, which
// callTools reads while it waits for several.
type report struct {
	ru     *run
	ev     Event // the call's fields
	inline bool
	notes  chan<- Event
	stop   chan struct{} // closed by end

	mu                sync.Mutex
	ended             bool
	progress, logs    int
	dropProg, dropLog int
}

func (rp *report) Progress(progress, total float64, message string) {
	e := Event{Type: EventToolProgress, Progress: &progress, Message: textcut.Prefix(message, maxReportMessage)}
	if total != 0 {
		e.Total = &total
	}
	rp.send(e, &rp.progress, &rp.dropProg, MaxReportProgress)
}

func (rp *report) Log(level, logger string, data json.RawMessage) {
	e := Event{Type: EventToolLog, Level: textcut.Prefix(level, 20), Logger: textcut.Prefix(logger, maxReportMessage), Data: append(json.RawMessage(nil), CutReportData(data)...)}
	rp.send(e, &rp.logs, &rp.dropLog, MaxReportLogs)
}

func (rp *report) send(e Event, n, dropped *int, max int) {
	rp.mu.Lock()
	if rp.ended || *n >= max {
		if !rp.ended {
			*dropped++
		}
		rp.mu.Unlock()
		return
	}
	*n++
	e.Step, e.StepsMax, e.CallID, e.Tool = rp.ev.Step, rp.ev.StepsMax, rp.ev.CallID, rp.ev.Tool
	if rp.inline {
		defer rp.mu.Unlock() // one event at a time
		rp.ru.emit(e)
		return
	}
	rp.mu.Unlock()
	select {
	case rp.notes <- e:
	case <-rp.stop: // reported after the call ended: dropped
	}
}

// end stops the report and says what it dropped ("" when nothing).
func (rp *report) end() string {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if !rp.ended {
		close(rp.stop)
	}
	rp.ended = true
	if rp.dropProg == 0 && rp.dropLog == 0 {
		return ""
	}
	return fmt.Sprintf("dropped %d progress and %d log reports past the limits (%d and %d a call)", rp.dropProg, rp.dropLog, MaxReportProgress, MaxReportLogs)
}

// CutReportData bounds a log message's data to MaxReportData bytes of
// JSON: data that is longer, or not JSON, becomes a JSON string of its
// first bytes (of the string itself when data is a JSON string), ended
// with "…" when cut.
func CutReportData(data json.RawMessage) json.RawMessage {
	if len(data) <= MaxReportData && json.Valid(data) {
		return data
	}
	var s string
	if json.Unmarshal(data, &s) != nil {
		s = strings.ToValidUTF8(string(data), "\uFFFD")
	}
	for n := MaxReportData - 8; ; {
		cut := textcut.Prefix(s, max(n, 0))
		if len(cut) < len(s) {
			cut += "…"
		}
		d, _ := json.Marshal(cut)
		if len(d) <= MaxReportData || n <= 0 {
			return d
		}
		n -= len(d) - MaxReportData // escaping made it longer: cut more
	}
}

package cassette

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/agenthost/agenthost/loop"
)

// ErrMiss is wrapped by the error of a request the cassette does not hold.
var ErrMiss = errors.New("cassette miss")

// MissError is what the error of a miss wraps: the model of the request and
// of the nearest recorded one, so that a front end can explain a miss that
// comes from the model's name alone. errors.Is(err, ErrMiss) holds for it.
type MissError struct {
	// Model is the model id of the request; Recorded is the model id of the
	// nearest recorded request, "" when the cassette holds none.
	Model, Recorded string
}

func (e *MissError) Error() string        { return ErrMiss.Error() }
func (e *MissError) Is(target error) bool { return target == ErrMiss }

// Player serves recorded responses. It is safe for concurrent use; the
// models it wraps share one position per request key.
type Player struct {
	path    string
	entries []Entry
	byKey   map[string][]int // key → indexes into entries, in recorded order

	mu     sync.Mutex
	served map[string]int // key → responses served so far

	decisions decisions // decisions.go
}

// Load reads the cassette at path. A last line cut short by a crash while
// recording (no newline, not JSON) is ignored; any other bad line is an
// error naming it.
func Load(path string) (*Player, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cassette: %w", err)
	}
	p := &Player{path: path, byKey: map[string][]int{}, served: map[string]int{},
		decisions: decisions{byKey: map[string][]Decision{}, served: map[string]int{}}}
	lines := bytes.Split(data, []byte("\n"))
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e struct {
			Entry
			Decision *Decision `json:"decision"`
		}
		if err := json.Unmarshal(line, &e); err != nil {
			if i == len(lines)-1 { // no newline after it: a torn write
				break
			}
			return nil, fmt.Errorf("cassette: %s line %d: %w", path, i+1, err)
		}
		if d := e.Decision; d != nil {
			k := decisionKey(d.Agent, d.Kind, d.Tool, canonicalJSON(d.Arguments))
			p.decisions.byKey[k] = append(p.decisions.byKey[k], *d)
			continue
		}
		e.Key = e.Request.Key()
		e.line = i + 1
		p.byKey[e.Key] = append(p.byKey[e.Key], len(p.entries))
		p.entries = append(p.entries, e.Entry)
	}
	return p, nil
}

// Len is the number of entries in the cassette.
func (p *Player) Len() int { return len(p.entries) }

// Wrap returns a model that answers from the cassette as the model modelID.
func (p *Player) Wrap(modelID string) loop.Model {
	return &playing{p: p, modelID: modelID}
}

type playing struct {
	p       *Player
	modelID string
}

var _ loop.Model = (*playing)(nil)

func (m *playing) Stream(ctx context.Context, req loop.Request, onText func(string)) (loop.Response, error) {
	if err := ctx.Err(); err != nil {
		return loop.Response{}, fmt.Errorf("cassette: %w", err)
	}
	canon := Canonical(m.modelID, req)
	resp, ok := m.p.next(canon.Key())
	if !ok {
		msg, near := m.p.missMessage(canon)
		return loop.Response{}, &loop.ProviderError{
			Code:    "cassette_miss",
			Message: msg,
			Err:     &MissError{Model: canon.Model, Recorded: near},
		}
	}
	if onText != nil && resp.Message.Content != "" {
		onText(resp.Message.Content)
	}
	return resp, nil
}

// next returns a copy of the response to serve for key.
func (p *Player) next(key string) (loop.Response, bool) {
	idx := p.byKey[key]
	if len(idx) == 0 {
		return loop.Response{}, false
	}
	p.mu.Lock()
	n := p.served[key]
	p.served[key] = n + 1
	p.mu.Unlock()

	resp := p.entries[idx[min(n, len(idx)-1)]].Response
	msg := resp.Message
	if msg.ToolCalls != nil {
		calls := make([]loop.ToolCall, len(msg.ToolCalls))
		copy(calls, msg.ToolCalls)
		if repeat := n - len(idx) + 1; repeat > 0 {
			// Serving the last response again: keep ids unique.
			for i := range calls {
				if calls[i].ID != "" {
					calls[i].ID = fmt.Sprintf("%s_r%d", calls[i].ID, repeat)
				}
			}
		}
		for i := range calls {
			if calls[i].Extra != nil {
				calls[i].Extra = append(json.RawMessage(nil), calls[i].Extra...)
			}
		}
		msg.ToolCalls = calls
	}
	resp.Message = msg
	return resp, true
}

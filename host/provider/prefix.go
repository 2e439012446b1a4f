package provider

import (
	"bytes"
	"slices"
	"sync"

	"github.com/agenthost/agenthost/loop"
)

// The encoded-prefix cache. A run's history only grows: each request is the
// previous one's messages plus the answer and the tool results. When every
// tool-call id of a history goes out as it is (the usual case, see
// buildRequest), a message's JSON depends on that message alone, so the
// encoding of the messages a request began with is kept and the next
// request of the same history encodes only the messages added since. The
// cached messages are copies, compared field by field with the request's
// before their encoding is used: a history that changed (compaction, an
// edited session) is encoded in full again, never sent stale.

// encodedPrefix is the encoding of msgs: "[" and the messages separated by
// commas, without the closing bracket.
type encodedPrefix struct {
	msgs []loop.Message
	enc  []byte
	// body is the buffer the last request's body was joined in
	// (exchange.joinBody), reused by the next; nil when net/http may still
	// have been reading it.
	body []byte
	// ids are the tool-call ids of msgs: sane and unique, or there would
	// be no entry (buildRequest).
	ids map[string]bool
}

// prefixCache keeps encodedPrefix entries for the histories in flight (one
// per run or subagent), bounded in number and bytes. An entry is taken out
// while a request uses it (its buffer grows in place) and put back after.
type prefixCache struct {
	mu      sync.Mutex
	entries []*encodedPrefix
	bytes   int
}

const (
	// maxPrefixes is how many histories the cache follows: enough for
	// tens of concurrent runs in one process (mcp serve, a worker).
	maxPrefixes = 64
	// maxPrefixBytes bounds what the cache keeps alive in all, counted
	// as twice an entry's encoding (the encoding, and the messages'
	// text it was made of); the oldest entries go first.
	maxPrefixBytes = 32 << 20
)

// take returns the longest cached prefix of msgs, removed from the cache,
// or nil.
func (c *prefixCache) take(msgs []loop.Message) *encodedPrefix {
	c.mu.Lock()
	defer c.mu.Unlock()
	best := -1
	for i, e := range c.entries {
		n := len(e.msgs)
		if n == 0 || n > len(msgs) || (best >= 0 && n <= len(c.entries[best].msgs)) {
			continue
		}
		// The newest message first: most entries of other histories
		// differ there.
		if !sameMessage(&e.msgs[n-1], &msgs[n-1]) || !samePrefix(e.msgs[:n-1], msgs) {
			continue
		}
		best = i
	}
	if best < 0 {
		return nil
	}
	e := c.entries[best]
	c.entries = slices.Delete(c.entries, best, best+1)
	c.bytes -= e.size()
	return e
}

// put keeps e for the next request of its history, dropping the oldest
// entries beyond the bounds.
func (c *prefixCache) put(e *encodedPrefix) {
	if e == nil || e.size() > maxPrefixBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = append(c.entries, e)
	c.bytes += e.size()
	for len(c.entries) > maxPrefixes || c.bytes > maxPrefixBytes {
		c.bytes -= c.entries[0].size()
		c.entries[0] = nil
		c.entries = c.entries[1:]
	}
}

// size is what e keeps alive, about: its encoding, the messages' text and
// the last body.
func (e *encodedPrefix) size() int { return 2*cap(e.enc) + cap(e.body) }

// extend appends msgs (wire forms of req, in order) to e's encoding and
// copies of req to its messages, and returns the complete JSON array. The
// array shares e's buffer: it is valid until e is extended again.
func (e *encodedPrefix) extend(req []loop.Message, msgs []wireMessage) []byte {
	for i := range msgs {
		if len(e.msgs)+i > 0 {
			e.enc = append(e.enc, ',')
		}
		e.enc = appendMessage(e.enc, &msgs[i])
	}
	for _, m := range req {
		// ToolCalls and Extra are slices the caller could change in
		// place; strings cannot change.
		m.ToolCalls = slices.Clone(m.ToolCalls)
		for j := range m.ToolCalls {
			m.ToolCalls[j].Extra = bytes.Clone(m.ToolCalls[j].Extra)
			if e.ids == nil {
				e.ids = make(map[string]bool)
			}
			e.ids[m.ToolCalls[j].ID] = true
		}
		e.msgs = append(e.msgs, m)
	}
	out := append(e.enc, ']')
	return out
}

func samePrefix(cached, msgs []loop.Message) bool {
	for i := range cached {
		if !sameMessage(&cached[i], &msgs[i]) {
			return false
		}
	}
	return true
}

// sameMessage reports whether a and b are equal in every field. Equal
// strings that share their bytes (the usual case: the loop's own message)
// compare in constant time.
func sameMessage(a, b *loop.Message) bool {
	if a.Role != b.Role || a.Content != b.Content || a.Reasoning != b.Reasoning ||
		a.ToolCallID != b.ToolCallID || a.Name != b.Name || a.IsError != b.IsError ||
		len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for i := range a.ToolCalls {
		x, y := &a.ToolCalls[i], &b.ToolCalls[i]
		if x.ID != y.ID || x.Name != y.Name || x.Arguments != y.Arguments || !bytes.Equal(x.Extra, y.Extra) {
			return false
		}
	}
	return true
}

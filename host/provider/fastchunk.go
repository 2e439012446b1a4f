package provider

import (
	"encoding/json"

	"github.com/agenthost/agenthost/internal/jsonscan"
)

// decodeChunk decodes one stream chunk into c (zero on entry). Chunks of
// the usual shapes are read by a fast path (fastChunk); the fast path gives
// up on anything it does not fully understand, and encoding/json decodes
// those: the result, error included, is always encoding/json's.
func decodeChunk(data []byte, c *chunk) error {
	d := chunkDecoder{Scanner: jsonscan.Scanner{Data: data}}
	if d.chunk(c) {
		return nil
	}
	*c = chunk{}
	return json.Unmarshal(data, c)
}

// chunkDecoder reads a chunk the way encoding/json would decode it into
// the chunk type, for the subset it handles: valid JSON, keys in exact
// lower case without escapes, no repeated known key, finish_reason without
// escapes, the structured fields of the types they have. Values of types
// with their own UnmarshalJSON (content, index, flexString, usage,
// json.RawMessage) are handed their raw text, as encoding/json does. Every
// method returns false to give up.
type chunkDecoder struct {
	jsonscan.Scanner
	depth int
}

// maxFastDepth is the deepest nesting the fast path follows.
const maxFastDepth = 64

func (d *chunkDecoder) chunk(c *chunk) bool {
	var seen uint8
	ok := d.object(func(key []byte) bool {
		switch string(key) {
		case "choices":
			return once(&seen, 1) && d.choices(&c.Choices)
		case "usage":
			return once(&seen, 2) && d.usage(&c.Usage)
		case "x_groq":
			if more, ok := d.onceValue(&seen, 4); !more {
				return ok
			}
			c.XGroq = new(struct {
				Usage *usage `json:"usage"`
			})
			var seenUsage uint8
			return d.object(func(key []byte) bool {
				if string(key) == "usage" {
					return once(&seenUsage, 1) && d.usage(&c.XGroq.Usage)
				}
				return d.skip()
			})
		case "error":
			raw, ok := d.raw()
			c.Error = append(json.RawMessage(nil), raw...)
			return ok && once(&seen, 8)
		}
		return d.skip()
	})
	return ok && d.Peek() == 0 && d.I == len(d.Data)
}

// onceValue is once for a member that may be null: more reports a value
// other than null to read; when there is none, ok says whether the member
// was fine (a null, the first time).
func (d *chunkDecoder) onceValue(seen *uint8, bit uint8) (more, ok bool) {
	if !once(seen, bit) {
		return false, false
	}
	if d.null() {
		return false, true
	}
	return true, true
}

// once marks bit in seen and reports whether it was not set yet.
func once(seen *uint8, bit uint8) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

func (d *chunkDecoder) usage(u **usage) bool {
	if d.null() {
		*u = nil
		return true
	}
	raw, ok := d.raw()
	if !ok {
		return false
	}
	*u = new(usage)
	(*u).UnmarshalJSON(raw)
	return true
}

// list decodes an array into *s (null: nil; [], empty but not nil), each
// element with item, which fills a new zero element.
func list[T any](d *chunkDecoder, s *[]T, item func(*T) bool) bool {
	if d.null() {
		*s = nil
		return true
	}
	return d.array(func() bool {
		var zero T
		*s = append(*s, zero)
		return item(&(*s)[len(*s)-1])
	}, func() { *s = []T{} })
}

func (d *chunkDecoder) choices(cs *[]choice) bool {
	return list(d, cs, func(ch *choice) bool {
		var seen uint8
		return d.object(func(key []byte) bool {
			switch string(key) {
			case "delta":
				return once(&seen, 1) && d.delta(&ch.Delta)
			case "message":
				return once(&seen, 2) && d.delta(&ch.Message)
			case "finish_reason":
				if more, ok := d.onceValue(&seen, 4); !more {
					return ok
				}
				s, ok := jsonscan.PlainString(d.Str())
				ch.FinishReason = s
				return ok
			}
			return d.skip()
		})
	})
}

func (d *chunkDecoder) delta(p **delta) bool {
	if d.null() {
		*p = nil
		return true
	}
	dl := new(delta)
	*p = dl
	var seen uint8
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "content":
			return once(&seen, 1) && d.content(&dl.Content)
		case "reasoning_content":
			return once(&seen, 2) && d.content(&dl.ReasoningContent)
		case "reasoning":
			return once(&seen, 4) && d.content(&dl.Reasoning)
		case "tool_calls":
			return once(&seen, 8) && d.toolCalls(&dl.ToolCalls)
		}
		return d.skip()
	})
}

func (d *chunkDecoder) content(c *content) bool {
	raw, ok := d.raw()
	if ok {
		c.UnmarshalJSON(raw)
	}
	return ok
}

func (d *chunkDecoder) flex(f *flexString) bool {
	raw, ok := d.raw()
	if ok {
		f.UnmarshalJSON(raw)
	}
	return ok
}

func (d *chunkDecoder) toolCalls(tds *[]toolDelta) bool {
	return list(d, tds, func(td *toolDelta) bool {
		var seen uint8
		return d.object(func(key []byte) bool {
			switch string(key) {
			case "index":
				raw, ok := d.raw()
				if ok {
					td.Index.UnmarshalJSON(raw)
				}
				return ok && once(&seen, 1)
			case "id":
				return once(&seen, 2) && d.flex(&td.ID)
			case "type":
				return once(&seen, 4) && d.flex(&td.Type)
			case "extra_content":
				raw, ok := d.raw()
				td.ExtraContent = append(json.RawMessage(nil), raw...)
				return ok && once(&seen, 8)
			case "function":
				if more, ok := d.onceValue(&seen, 16); !more { // null leaves a struct as it is
					return ok
				}
				var fseen uint8
				return d.object(func(key []byte) bool {
					switch string(key) {
					case "name":
						return once(&fseen, 1) && d.flex(&td.Function.Name)
					case "arguments":
						raw, ok := d.raw()
						td.Function.Arguments = append(json.RawMessage(nil), raw...)
						return ok && once(&fseen, 2)
					}
					return d.skip()
				})
			}
			return d.skip()
		})
	})
}

// null consumes a null if one comes next.
func (d *chunkDecoder) null() bool {
	if d.Peek() == 'n' && len(d.Data)-d.I >= 4 && string(d.Data[d.I:d.I+4]) == "null" {
		d.I += 4
		return true
	}
	return false
}

// object reads an object, calling field for each key with the decoder
// before the value; field must consume the value.
func (d *chunkDecoder) object(field func(key []byte) bool) bool {
	if d.depth++; d.depth > maxFastDepth {
		return false
	}
	ok := d.Object(func(key []byte) bool { return plainKey(key) && field(key) })
	d.depth--
	return ok
}

// plainKey reports whether key (without its quotes) is matched by
// encoding/json exactly as written: escapes, upper case and non-ASCII
// could match a field case-insensitively.
func plainKey(key []byte) bool {
	for _, b := range key {
		if b == '\\' || b >= 0x80 || (b >= 'A' && b <= 'Z') {
			return false
		}
	}
	return true
}

// array reads an array, calling elem for each element; empty is called
// for an empty array (encoding/json makes an empty, non-nil slice).
func (d *chunkDecoder) array(elem func() bool, empty func()) bool {
	if d.depth++; d.depth > maxFastDepth {
		return false
	}
	ok := d.Array(elem, empty)
	d.depth--
	return ok
}

// raw returns the text of the next value, checked.
func (d *chunkDecoder) raw() ([]byte, bool) {
	d.WS()
	start := d.I
	if !d.skip() {
		return nil, false
	}
	return d.Data[start:d.I], true
}

// skip checks and passes the next value.
func (d *chunkDecoder) skip() bool {
	return d.ValueWithin(jsonscan.Limits{MaxDepth: maxFastDepth - d.depth, Key: quotedPlainKey})
}

// quotedPlainKey is plainKey of a key with its quotes.
func quotedPlainKey(key []byte) bool { return plainKey(key[1 : len(key)-1]) }

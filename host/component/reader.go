package component

import "github.com/agenthost/agenthost/internal/wasmbin"

// reader is the binary reader plugins share (internal/wasmbin): the
// component parser and its core module reader read through it.
type reader = wasmbin.Reader

// externName reads nameattributes: a discriminator, the name, and for 0x02
// a vector of attributes (implements, a version suffix, an external id),
// which are skipped: names, not attributes, identify imports and exports.
func externName(r *reader) (string, error) {
	c, err := r.Byte()
	if err != nil {
		return "", err
	}
	switch c {
	case 0x00, 0x01:
		return r.Name()
	case 0x02:
		n, err := r.Name()
		if err != nil {
			return "", err
		}
		k, err := r.Count()
		if err != nil {
			return "", err
		}
		for range k {
			if _, err := r.Byte(); err != nil {
				return "", err
			}
			if _, err := r.Name(); err != nil {
				return "", err
			}
		}
		return n, nil
	}
	return "", r.Fail("unknown name form 0x%02x", c)
}

package ociget

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/opencontainers/go-digest"

	"github.com/agenthost/agenthost/host/plugin/internal/loadcache"
	"github.com/agenthost/agenthost/internal/ociref"
)

// The cache: every manifest and blob fetched, under its digest
// (blobs/sha256/HEX), verified on every read; and, for each tag, the
// digest it last resolved to (tags/HEX, HEX the sha256 of the ref), used
// only when the registry cannot be reached.
type cache struct{ dir string }

// errNotCached says a blob is not in the cache (or there is no cache).
var errNotCached = errors.New("not cached")

func (c cache) blobPath(d digest.Digest) string {
	return filepath.Join(c.dir, "blobs", string(d.Algorithm()), d.Encoded())
}

// read returns the blob d, verified: errNotCached when it is not there; an
// error naming the file when it is over max bytes or does not match its
// digest (it is refused, not fetched again: something changed the cache).
func (c cache) read(d digest.Digest, max int64) ([]byte, error) {
	if c.dir == "" {
		return nil, errNotCached
	}
	if err := d.Validate(); err != nil || d.Algorithm() != digest.SHA256 {
		return nil, fmt.Errorf("digest %q is not a sha256 digest", d)
	}
	p := c.blobPath(d)
	data, err := readFile(p, max)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	if int64(len(data)) > max || hex.EncodeToString(sum[:]) != d.Encoded() {
		return nil, fmt.Errorf("the cached %s does not match its digest (sha256 %s); it was changed after it was fetched, so nothing of it runs. Remove %s (agenthost fetches it again) and find out what wrote there", d, hex.EncodeToString(sum[:]), p)
	}
	return data, nil
}

// readFile reads at most max+1 bytes of the file at p (more says it is
// too long); errNotCached when there is none.
func readFile(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if os.IsNotExist(err) {
		return nil, errNotCached
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max+1))
}

// write keeps blob d (already verified): private, written whole or not at
// all. Failing to write only costs a fetch later.
func (c cache) write(d digest.Digest, data []byte) {
	if c.dir != "" {
		loadcache.WriteFile(c.blobPath(d), data)
	}
}

func (c cache) tagPath(ref ociref.Ref) string {
	k := sha256.Sum256([]byte(ref.Registry + "/" + ref.Repository + ":" + ref.Tag))
	return filepath.Join(c.dir, "tags", hex.EncodeToString(k[:]))
}

// tag returns the digest ref's tag last resolved to, or "".
func (c cache) tag(ref ociref.Ref) digest.Digest {
	if c.dir == "" {
		return ""
	}
	b, err := readFile(c.tagPath(ref), 100)
	if err != nil || len(b) > 100 {
		return ""
	}
	d := digest.Digest(strings.TrimSpace(string(b)))
	if d.Validate() != nil || d.Algorithm() != digest.SHA256 {
		return ""
	}
	return d
}

// setTag records that ref's tag resolved to d.
func (c cache) setTag(ref ociref.Ref, d digest.Digest) {
	if c.dir != "" {
		loadcache.WriteFile(c.tagPath(ref), []byte(d.String()+"\n"))
	}
}

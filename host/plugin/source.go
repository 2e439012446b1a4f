package plugin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// moduleSource is a plugin's module: its sha256, and how to read its
// bytes. Loading from cached load facts needs only the sum, and hashing
// megabytes of modules at every start-up is a good part of it, so the sum
// of a file (or of a builtin, whose bytes are in the executable) is
// remembered in the private cache under its stat key: path, device,
// inode, size, and modification and change times. Whoever rewrites the
// file changes its change time, which no user can set back, so a
// remembered sum is that of the file's bytes. Whatever the remembered
// sums say, the bytes compiled are hashed again and must match the sum
// the load used (bytes), so the code that runs is always the module whose
// facts were used.
type moduleSource struct {
	name    string // for messages: the path, builtin:NAME, "the module"
	sum     string // sha256 of the bytes, hex
	statKey string // "" when its sum cannot be remembered
	read    func() ([]byte, error)
	// wasm holds the bytes when the load read them already.
	wasm []byte
}

// bytes returns the module's bytes: those read already, or read now and
// checked against the sum.
func (s *moduleSource) bytes() ([]byte, error) {
	if s.wasm != nil {
		return s.wasm, nil
	}
	b, err := s.read()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != s.sum {
		return nil, fmt.Errorf("%s changed after it was loaded (sha256 %s, loaded as %s); start again to load the new module", s.name, got, s.sum)
	}
	return b, nil
}

// rehash returns the module's bytes, read now unless read already, and
// sets src.sum to their sum, correcting the remembered one if it differs.
func (c loadCache) rehash(src *moduleSource) ([]byte, error) {
	if src.wasm != nil {
		return src.wasm, nil
	}
	b, err := src.read()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != src.sum {
		src.sum = got
		if src.statKey != "" && c.dir != "" {
			c.writeCacheFile(sumPath(c.dir, src.statKey), []byte(got))
		}
	}
	src.wasm = b
	return b, nil
}

// forgetSum removes the sum remembered for src.
func (c loadCache) forgetSum(src *moduleSource) {
	if src.statKey != "" && c.dir != "" {
		os.Remove(sumPath(c.dir, src.statKey))
	}
}

// sumSource sets src.sum: remembered under its stat key, or computed from
// its bytes (kept in src.wasm) and remembered.
func (c loadCache) sumSource(src *moduleSource) error {
	if src.statKey != "" && c.dir != "" {
		if sum := c.readSum(src.statKey); sum != "" {
			src.sum = sum
			return nil
		}
	}
	b, err := src.read()
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	src.sum, src.wasm = hex.EncodeToString(sum[:]), b
	if src.statKey != "" && c.dir != "" {
		c.writeCacheFile(sumPath(c.dir, src.statKey), []byte(src.sum))
	}
	return nil
}

func sumPath(cacheDir, statKey string) string {
	k := sha256.Sum256([]byte(statKey))
	return filepath.Join(cacheDir, factsDir, "sum-"+hex.EncodeToString(k[:]))
}

// readSum returns the sum remembered under statKey, or "".
func (c loadCache) readSum(statKey string) string {
	data := c.readCacheFile(sumPath(c.dir, statKey), 64)
	if len(data) != 64 {
		return ""
	}
	if _, err := hex.DecodeString(string(data)); err != nil {
		return ""
	}
	return string(data)
}

// readCacheFile returns the contents of a file of the facts directory,
// or nil when it or the directory is missing, not private, or over max
// bytes.
func (c loadCache) readCacheFile(path string, max int64) []byte {
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() || !private(st) {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || !private(st) || st.Size() > max {
		return nil
	}
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil
	}
	return data
}

// writeCacheFile writes a file of the facts directory: to a temporary
// file, private, renamed into place, so a reader never sees half of it.
// Failing to write only costs the next start-up some work.
func (c loadCache) writeCacheFile(path string, data []byte) {
	dir := filepath.Dir(path)
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}

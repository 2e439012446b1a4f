package loadcache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// Source is a plugin's module: its sha256, and how to read its
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
type Source struct {
	Name    string // for messages: the path, builtin:NAME, "the module"
	Sum     string // sha256 of the bytes, hex
	StatKey string // "" when its sum cannot be remembered (StatKey)
	Read    func() ([]byte, error)
	// Wasm holds the bytes when the load read them already.
	Wasm []byte
}

// Bytes returns the module's bytes: those read already, or read now and
// checked against the sum.
func (s *Source) Bytes() ([]byte, error) {
	b, got, err := s.readSum()
	if err != nil {
		return nil, err
	}
	if got != s.Sum {
		return nil, fmt.Errorf("%s changed after it was loaded (sha256 %s, loaded as %s); start again to load the new module", s.Name, got, s.Sum)
	}
	return b, nil
}

// readSum returns the module's bytes and their sum: those read already
// (with the sum they were read with), or read now and summed.
func (s *Source) readSum() ([]byte, string, error) {
	if s.Wasm != nil {
		return s.Wasm, s.Sum, nil
	}
	b, err := s.Read()
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:]), nil
}

// Rehash returns the module's bytes, read now unless read already, and
// sets src.Sum to their sum, correcting the remembered one if it differs.
func (c Cache) Rehash(src *Source) ([]byte, error) {
	b, got, err := src.readSum()
	if err != nil {
		return nil, err
	}
	if got != src.Sum {
		src.Sum = got
		if src.StatKey != "" && c.dir != "" {
			c.writeCacheFile(SumPath(c.dir, src.StatKey), []byte(got))
		}
	}
	src.Wasm = b
	return b, nil
}

// ForgetSum removes the sum remembered for src.
func (c Cache) ForgetSum(src *Source) {
	if src.StatKey != "" && c.dir != "" {
		os.Remove(SumPath(c.dir, src.StatKey))
	}
}

// SumSource sets src.Sum: remembered under its stat key, or computed from
// its bytes (kept in src.Wasm) and remembered.
func (c Cache) SumSource(src *Source) error {
	if src.StatKey != "" && c.dir != "" {
		if sum := c.readSum(src.StatKey); sum != "" {
			src.Sum = sum
			return nil
		}
	}
	b, err := src.Read()
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	src.Sum, src.Wasm = hex.EncodeToString(sum[:]), b
	if src.StatKey != "" && c.dir != "" {
		c.writeCacheFile(SumPath(c.dir, src.StatKey), []byte(src.Sum))
	}
	return nil
}

// SumPath is the file that remembers the sum of the file statKey names.
func SumPath(cacheDir, statKey string) string {
	k := sha256.Sum256([]byte(statKey))
	return filepath.Join(cacheDir, Dir, "sum-"+hex.EncodeToString(k[:]))
}

// readSum returns the sum remembered under statKey, or "".
func (c Cache) readSum(statKey string) string {
	data := c.readCacheFile(SumPath(c.dir, statKey), 64)
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
func (c Cache) readCacheFile(path string, max int64) []byte {
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

// writeCacheFile writes a file of the facts directory (WriteFile).
func (c Cache) writeCacheFile(path string, data []byte) { WriteFile(path, data) }

// WriteFile writes a file of a cache: to a temporary file, private,
// renamed into place, so a reader never sees half of it; its directories
// are made private. Failing to write only costs a later start some work:
// nothing is reported.
func WriteFile(path string, data []byte) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
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

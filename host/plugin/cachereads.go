package plugin

import (
	"bufio"
	"errors"
	"io"
	"reflect"
	"unsafe"

	"github.com/tetratelabs/wazero"
)

// wazeroFileCache is the method set of wazero's internal filecache.Cache,
// whose Key is an alias of [32]byte.
type wazeroFileCache interface {
	Get(key [32]byte) (content io.ReadCloser, ok bool, err error)
	Add(key [32]byte, content io.Reader) error
	Delete(key [32]byte) error
}

// bufferCacheReads makes the compilation cache c, made by
// wazero.NewCompilationCacheWithDir, read its files through a buffer, and
// reports whether it could. It must run before a runtime uses c.
//
// wazero reads a cached module with a Read of 8 bytes for each function's
// offset (wazevo's deserializeCompiledModule): straight from the *os.File,
// that is a system call each, 10,035 for the Extism SDK's count_vowels and
// 2,169 for core, about 6 ms of a run's CPU before its first tool call. The
// cache's file store is an unexported field of an interface type whose
// methods need no unexported type, so a wrapper can take its place; the
// field is reached through reflection, as releaseBodies does, and nothing
// is changed when its name or type is not the one expected.
func bufferCacheReads(c wazero.CompilationCache) bool {
	v := reflect.ValueOf(c)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct ||
		v.Type().String() != "*wazero.cache" {
		return false
	}
	f := v.Elem().FieldByName("fileCache")
	if !f.IsValid() || f.Kind() != reflect.Interface || f.IsNil() {
		return false
	}
	field := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	inner, ok := field.Interface().(wazeroFileCache)
	if !ok {
		return false
	}
	if _, done := inner.(bufferedFileCache); done {
		return true
	}
	w := reflect.ValueOf(bufferedFileCache{inner})
	if !w.Type().Implements(f.Type()) {
		return false
	}
	field.Set(w)
	return true
}

// bufferedFileCache is a wazero file cache whose Get reads through a
// buffer.
type bufferedFileCache struct{ wazeroFileCache }

func (c bufferedFileCache) Get(key [32]byte) (io.ReadCloser, bool, error) {
	rc, ok, err := c.wazeroFileCache.Get(key)
	if !ok || err != nil {
		return rc, ok, err
	}
	return &bufferedFile{r: bufio.NewReaderSize(rc, 64<<10), c: rc}, true, nil
}

// bufferedFile reads a cached module. Its Read fills p unless the file
// ends first, as a Read of a regular file does: wazero takes a short read
// of an offset for the end of the file.
type bufferedFile struct {
	r *bufio.Reader
	c io.Closer
}

func (f *bufferedFile) Read(p []byte) (int, error) {
	n, err := io.ReadFull(f.r, p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = nil
	}
	return n, err
}

func (f *bufferedFile) Close() error { return f.c.Close() }

//go:build wasip1

package main

import "unsafe"

//go:wasmimport wasi_snapshot_preview1 fd_prestat_get
func fdPrestatGet(fd int32, prestat unsafe.Pointer) int32

//go:wasmimport wasi_snapshot_preview1 fd_prestat_dir_name
func fdPrestatDirName(fd int32, name unsafe.Pointer, nameLen int32) int32

// mountRoots lists the directories the host preopened, by guest path, in
// mount order: WASI numbers preopens from descriptor 3 and names each by
// its guest path (fd_prestat_dir_name); the first descriptor that is not
// a preopen ends the list. Only absolute directory names count.
func mountRoots() []string {
	var roots []string
	for fd := int32(3); ; fd++ {
		var prestat [2]uint32 // u8 tag (0 = directory), padding, u32 name length
		if fdPrestatGet(fd, unsafe.Pointer(&prestat)) != 0 {
			return roots
		}
		if prestat[0]&0xff != 0 || prestat[1] == 0 || prestat[1] > 4096 {
			continue
		}
		name := make([]byte, prestat[1])
		if fdPrestatDirName(fd, unsafe.Pointer(&name[0]), int32(len(name))) != 0 {
			continue
		}
		// Some runtimes count a trailing NUL in the length.
		for len(name) > 0 && name[len(name)-1] == 0 {
			name = name[:len(name)-1]
		}
		if len(name) > 0 && name[0] == '/' {
			roots = append(roots, string(name))
		}
	}
}

//go:build unix

package config

import "syscall"

// openNonBlock makes opening a FIFO return at once instead of waiting for
// a writer; it changes nothing for a regular file.
const openNonBlock = syscall.O_NONBLOCK

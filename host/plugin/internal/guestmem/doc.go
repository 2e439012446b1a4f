// Package guestmem keeps the linear memories of plugin instances outside
// the Go heap (host/plugin's "start-up and memory" job). Each memory
// reserves its maximum, the plugin's limits.memory, as address space with
// no access; growing opens more of it, so a memory never moves or copies,
// and a released reservation is zeroed and kept for the next instance of
// the same maximum. It plugs into wazero through the public
// experimental.MemoryAllocator (With); on systems without mmap (not
// linux, darwin or freebsd) wazero's own Go slices are used.
package guestmem

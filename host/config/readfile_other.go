//go:build !unix

package config

// openNonBlock is 0 where opening a file cannot wait for a writer.
const openNonBlock = 0

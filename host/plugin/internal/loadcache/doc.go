// Package loadcache is what host/plugin keeps in its private cache
// directory to make a start-up short: the load facts of a module (what a
// full load learned from it: exports, imports of note, its manifest
// section, the manifest its describe run printed), the remembered sha256
// of a module file under its stat key (so a start-up need not hash it),
// and the data segments of a module written to a file (GuestData), so
// wazero need not keep them on the Go heap. Everything read from the cache
// must be private to the user and whole; anything else is ignored and
// rewritten. host/plugin decides what to do with the facts; this package
// only stores and checks them.
package loadcache

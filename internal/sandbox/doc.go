// Package sandbox holds what every plugin kind's sandbox shares, so that
// host/plugin (agenthost/1, WASI command, Extism) and host/component (WASI
// 0.2 components) state each rule once: the failure of a call that did
// not run to its end (Failure and its kinds).
package sandbox

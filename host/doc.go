// Package host builds everything a run needs from a valid config: the one
// wazero runtime with its compilation cache, the loaded plugins, the
// provider adapters (optionally wrapped by cassettes), and the immutable tree
// of loop.Agents. It is the second stage of the pipeline
// (config → host → loop → cmd).
package host

// Command agenthost runs LLM agents declared in HCL, with every tool a
// sandboxed WebAssembly module. It is the last stage of the pipeline
// (config → host → loop → cmd): it owns flags, subcommands, terminal output
// and exit codes, and nothing else.
package main

import "os"

func main() { os.Exit(Main()) }

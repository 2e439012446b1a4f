// Package config decodes and validates agents.hcl. It is the first stage of
// the pipeline (config → host → loop → cmd): every problem in a file becomes
// a located hcl.Diagnostic with a fix hint, and nothing downstream runs on an
// invalid config. It never imports wazero, go-openai, loop or host.
package config

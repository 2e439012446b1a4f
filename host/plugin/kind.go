package plugin

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero"

	"github.com/agenthost/agenthost/host/plugin/internal/extism"
	"github.com/agenthost/agenthost/host/plugin/internal/loadcache"
	"github.com/agenthost/agenthost/internal/pluginkind"
)

// Kinds. Each plugin kind is one file implementing kind (kind_agenthost.go,
// kind_wasicli.go, kind_extism.go, kind_component.go) and one row of the
// kinds table below; the facts host/config needs of a kind (what a plugin
// block of it may hold, what implies it) are its row of
// internal/pluginkind, in the same order (TestKindsTable). load (load.go)
// and Inspect (inspect.go) walk the table; a new kind is a new file and a
// row in both tables.

// kind is one plugin kind: how a module is recognised as one, loaded and
// inspected, and whether its instances are pre-started.
type kind interface {
	// name is the kind's name (its row of internal/pluginkind).
	name() Kind
	// component reports whether the kind's binaries are WASI 0.2
	// components, told by the binary header, rather than core modules.
	// Such a kind is loaded whole by load, without core-module load facts.
	component() bool
	// detect reports whether a core module whose load facts are f, loaded
	// from spec with no kind declared, is of this kind. The kinds of the
	// table claim disjoint modules; a component kind claims none.
	detect(f *loadcache.Facts, spec *Spec) bool
	// load builds the Plugin: its grants, its tools (each with the call
	// function of the kind, tool.call) and the kind's own state. For a
	// core kind l.p holds the compiled (or to be compiled) module and
	// l.facts its load facts; a component kind makes l.p itself.
	load(ctx context.Context, l *loading) error
	// inspect fills info (plugin inspect) for a module of the kind, run
	// with nothing granted; for a core kind i.cm is the compiled module.
	// Its error is for a binary that cannot be read at all.
	inspect(ctx context.Context, i *inspecting, info *Info) error
	// prestart reports whether the kind's instances are pre-started
	// (SetPrestart): true for a kind whose guest waits for its request
	// after starting.
	prestart() bool
}

// kinds is the kinds table, in the order of internal/pluginkind's rows.
var kinds = []kind{agenthostKind{}, wasiCLIKind{}, extismKind{}, componentKind{}}

// Kind is a plugin kind (see the package documentation).
type Kind string

const (
	// KindAgenthost is a WASI preview1 command speaking agenthost/1.
	KindAgenthost = Kind(pluginkind.Agenthost)
	// KindWASICLI is any WASI command, described by CLITools.
	KindWASICLI = Kind(pluginkind.WASICLI)
	// KindExtism is an Extism plugin: it imports extism:host/env and is
	// called through its exports (kind_extism.go).
	KindExtism = Kind(pluginkind.Extism)
	// KindComponent is a WASI 0.2 component: every exported function is
	// a tool, run by host/component (kind_component.go).
	KindComponent = Kind(pluginkind.Component)
)

// Kinds are the kinds Load takes, in the order of the kinds table.
var Kinds = func() []Kind {
	out := make([]Kind, len(kinds))
	for i, k := range kinds {
		out[i] = k.name()
	}
	return out
}()

// declaredKind is the kind named by a Spec: nil for "" (detect), an
// error for a name no kind has.
func declaredKind(name Kind) (kind, error) {
	if name == "" {
		return nil, nil
	}
	for _, k := range kinds {
		if k.name() == name {
			return k, nil
		}
	}
	return nil, fmt.Errorf("unknown kind %q; want %s", name, pluginkind.List())
}

// detectKind is the kind of a core module loaded with no kind declared:
// the kind of the table that claims its load facts.
func detectKind(f *loadcache.Facts, spec *Spec) kind {
	for _, k := range kinds {
		if k.detect(f, spec) {
			return k
		}
	}
	return agenthostKind{} // unreachable: agenthost claims what no other kind does
}

// componentKindOf is the kind of a binary whose header says it is a
// component.
func componentKindOf() kind {
	for _, k := range kinds {
		if k.component() {
			return k
		}
	}
	panic("plugin: no component kind in the kinds table")
}

// coreFacts are the load facts of a compiled core module, as far as
// detecting its kind goes (load adds what keys them).
func coreFacts(cm wazero.CompiledModule, bin *binary) *loadcache.Facts {
	return &loadcache.Facts{Extism: importsExtism(cm), Environ: readsEnv(cm), Exports: exportsOf(cm), Section: string(bin.Custom)}
}

// prestartable reports whether kind k's instances are pre-started.
func prestartable(k Kind) bool {
	d, _ := declaredKind(k)
	return d != nil && d.prestart()
}

// loading is one load in progress, handed to kind.load.
type loading struct {
	r      *Runtime
	spec   Spec
	limits Limits // spec.Limits with the defaults applied
	// For a core module: the load facts, and whether they were found now
	// (fresh: they are stored once the load succeeds); a kind that learns
	// more (a describe run) adds it to facts and sets fresh. p is the
	// Plugin, with its module.
	facts *loadcache.Facts
	fresh bool
	p     *Plugin
	// src is the module when the load read it already (see
	// Runtime.loadComponent), else nil: the kind finds it (Runtime.source).
	src *loadcache.Source
}

// command checks that a core module loaded as agenthost or wasi_cli is a
// WASI command: not an Extism plugin, and exporting _start.
func (l *loading) command() error {
	if l.facts.Extism {
		return fmt.Errorf("the module imports %s: it is an Extism plugin; set kind = \"extism\"", extism.ModuleName)
	}
	if _, has := l.facts.Exports["_start"]; !has {
		if note := reactorNote(l.facts.Exports); note != "" {
			return errors.New(note)
		}
		return errors.New("module exports no _start function; agenthost runs WASI preview1 commands (build a command, not a library or reactor)")
	}
	return nil
}

// inspecting is one Inspect in progress, handed to kind.inspect. For a
// core module, cm is it compiled with the default limits, bin its
// sections and facts what loading would learn of it.
type inspecting struct {
	r      *Runtime
	wasm   []byte
	limits Limits
	cm     wazero.CompiledModule
	bin    *binary
	facts  *loadcache.Facts
}

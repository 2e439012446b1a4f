package plugin

import (
	"context"
	"fmt"

	"github.com/agenthost/agenthost/loop"
)

// toolTable is a plugin's tools: their specs in list order and the tools
// by name. The table of a plugin is replaced whole, never changed.
type toolTable struct {
	specs  []loop.ToolSpec
	byName map[string]*tool
}

// table is the plugin's current tools: those listed at load, or those of
// the last Relist that changed them.
func (p *Plugin) table() toolTable {
	if t := p.relisted.Load(); t != nil {
		return *t
	}
	return toolTable{specs: p.tools, byName: p.byName}
}

// ToolsStale reports whether a call of the plugin said its tools changed
// (hyper-mcp v2's notify_tool_list_changed) and Relist has not listed them
// since. It is cheap: one atomic load.
func (p *Plugin) ToolsStale() bool {
	return p.ext != nil && p.ext.dialect == DialectHyperMCP2 && p.ext.k.ToolsChanged()
}

// ToolsVersion counts the changes of the plugin's tools: 0 until a Relist
// changed them.
func (p *Plugin) ToolsVersion() uint64 { return p.toolsVer.Load() }

// Relist lists the tools of a hyper-mcp v2 plugin again when one of its
// calls said they changed (ToolsStale); it reports whether they did. The
// listing runs list_tools in a fresh instance with the plugin's grants and
// limits, as at load. A tool whose name, description and schemas did not
// change keeps its prepared state (its pre-started instance); the others
// are prepared anew and the pre-started instances of the tools gone are
// stopped. A listing that fails (a trap, a bad tool) keeps the tools as
// they were and returns the error; the next notification tries again.
// Calls in flight finish on the tools they started with.
func (p *Plugin) Relist(ctx context.Context) (bool, error) {
	if !p.ToolsStale() {
		return false, nil
	}
	p.relistMu.Lock()
	defer p.relistMu.Unlock()
	if !p.ext.k.TakeToolsChanged() {
		return false, nil // listed by another caller meanwhile
	}
	listFn, callFn := p.ext.dialect.Functions()
	listed, err := p.listTools(ctx, listFn, p.ext.dialect.ListInput(p.ext.reqs.Add(1)), p.ext.base)
	if err != nil {
		return false, fmt.Errorf("plugin %q said its tools changed, but listing them again failed, so they stay as they were: %w", p.name, err)
	}
	old := p.table()
	next := toolTable{byName: make(map[string]*tool, len(listed))}
	same := len(listed) == len(old.specs)
	dummy := &CLITool{}
	for i, mt := range listed {
		t, err := p.newTool(mt.Name, mt.Description, mt.InputSchema, dummy, p.ext.base, next.byName)
		if err != nil {
			return false, fmt.Errorf("plugin %q said its tools changed, but %s returned a bad tool, so they stay as they were: %w", p.name, listFn, err)
		}
		if prev := old.byName[mt.Name]; prev != nil && sameSpec(prev.spec, t.spec) {
			t = prev
		} else {
			t.ext = &extismTool{function: callFn, name: mt.Name, dialect: p.ext.dialect}
			t.call = p.callExtism
			same = false
		}
		if same && old.specs[i].Name != mt.Name {
			same = false // reordered
		}
		next.byName[mt.Name] = t
		next.specs = append(next.specs, t.spec)
	}
	if same {
		return false, nil
	}
	p.relisted.Store(&next)
	p.toolsVer.Add(1)
	for name, t := range old.byName {
		if next.byName[name] != t {
			t.fill.Lock()
			t.gone = true // refill starts no instance for it
			select {
			case i := <-t.warm:
				i.cancel(errClosed)
			default:
			}
			t.fill.Unlock()
		}
	}
	return true, nil
}

// sameSpec reports whether two specs of a tool offer it the same way.
func sameSpec(a, b loop.ToolSpec) bool {
	return a.Name == b.Name && a.Description == b.Description && string(a.InputSchema) == string(b.InputSchema) &&
		string(a.OutputSchema) == string(b.OutputSchema) && string(a.Annotations) == string(b.Annotations)
}

package plugin

import (
	"fmt"
	"strings"
)

// missingImports collects the imported functions agenthost does not
// provide, grouped by import module in the order they first appear, so a
// module built for another host reads as a few lines, not hundreds.
type missingImports struct {
	mods  []string
	names map[string][]string
}

func (m *missingImports) add(mod, name string) {
	if m.names == nil {
		m.names = map[string][]string{}
	}
	if _, seen := m.names[mod]; !seen {
		m.mods = append(m.mods, mod)
	}
	m.names[mod] = append(m.names[mod], name)
}

// shownImports is how many names a grouped line lists.
const shownImports = 5

// errors is one error per import module: the single import by name, or the
// count and the first few names.
func (m *missingImports) errors() []error {
	var errs []error
	for _, mod := range m.mods {
		names := m.names[mod]
		if len(names) == 1 {
			errs = append(errs, fmt.Errorf("imports %s.%s which agenthost does not provide", mod, names[0]))
			continue
		}
		list := strings.Join(names[:min(len(names), shownImports)], ", ")
		if len(names) > shownImports {
			list += fmt.Sprintf(", and %d more", len(names)-shownImports)
		}
		errs = append(errs, fmt.Errorf("%d imports from %s which agenthost does not provide: %s", len(names), mod, list))
	}
	return errs
}

// reactorNote explains a module that is a WASI reactor (it exports
// _initialize and no _start): a library for a host that calls its exports,
// not a command agenthost can run. Empty for other modules.
func reactorNote(exports map[string]exportSig) string {
	_, start := exports["_start"]
	_, initialize := exports["_initialize"]
	if start || !initialize {
		return ""
	}
	return "the module is a WASI reactor (it exports _initialize and no _start): it is meant to be driven by the host it was built for. agenthost runs WASI commands; build a command (a program with a main function) instead"
}

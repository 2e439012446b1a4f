package config

import (
	"net"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Temporal is the temporal block: defaults for the commands that use a
// Temporal server (agenthost worker, runs, run --temporal). Flags override
// each field. Empty fields take the commands' defaults (no address, the
// "default" namespace, the "agenthost" task queue).
type Temporal struct {
	// Address is the server's frontend, HOST:PORT.
	Address   string
	Namespace string
	TaskQueue string
	DefRange  hcl.Range
}

type rawTemporal struct {
	Address        string    `hcl:"address,optional"`
	AddressRange   hcl.Range `hcl:"address,attr_value_range"`
	Namespace      string    `hcl:"namespace,optional"`
	NamespaceRange hcl.Range `hcl:"namespace,attr_value_range"`
	TaskQueue      string    `hcl:"task_queue,optional"`
	TaskQueueRange hcl.Range `hcl:"task_queue,attr_value_range"`
	DefRange       hcl.Range `hcl:",def_range"`
}

// CheckAddress says what is wrong with a Temporal address, or "".
func CheckAddress(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return "want HOST:PORT, e.g. \"127.0.0.1:7233\""
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "the port must be a number from 1 to 65535"
	}
	return ""
}

func (b *builder) temporal(cfg *Config, rt *rawTemporal) {
	if rt == nil {
		return
	}
	t := &Temporal{Address: rt.Address, Namespace: rt.Namespace, TaskQueue: rt.TaskQueue, DefRange: rt.DefRange}
	if b.set(rt.AddressRange) {
		if why := CheckAddress(rt.Address); why != "" {
			b.errorf(rt.AddressRange, "Invalid Temporal address", "address %q: %s (the Temporal server's frontend; `temporal server start-dev` listens on 127.0.0.1:7233).", rt.Address, why)
		}
	}
	for _, f := range []struct {
		name  string
		value string
		rng   hcl.Range
	}{{"namespace", rt.Namespace, rt.NamespaceRange}, {"task_queue", rt.TaskQueue, rt.TaskQueueRange}} {
		if b.set(f.rng) && (strings.TrimSpace(f.value) == "" || strings.ContainsAny(f.value, " \t\n")) {
			b.errorf(f.rng, "Invalid "+f.name, "%s must be a non-empty name without spaces; remove it for the default.", f.name)
		}
	}
	cfg.Temporal = t
}

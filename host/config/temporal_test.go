package config

import "testing"

func TestTemporalBlock(t *testing.T) {
	cfg, diags := parseIn(t, base+"temporal {\n  address = \"10.0.0.5:7233\"\n  namespace = \"agents\"\n  task_queue = \"ci\"\n}\nagent \"a\" {}\n", nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if tc := cfg.Temporal; tc == nil || tc.Address != "10.0.0.5:7233" || tc.Namespace != "agents" || tc.TaskQueue != "ci" {
		t.Fatalf("Temporal = %+v", cfg.Temporal)
	}
	cfg, diags = parseIn(t, base+"agent \"a\" {}\n", nil)
	if diags.HasErrors() || cfg.Temporal != nil {
		t.Fatalf("without a block: Temporal = %+v, %v", cfg.Temporal, diags)
	}
}

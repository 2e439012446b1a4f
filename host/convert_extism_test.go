package host

import (
	"encoding/json"
	"testing"

	"github.com/agenthost/agenthost/host/plugin"
)

// TestPluginSpecExtism: config, the http allow list and each tool's
// function reach the Spec, and a tool's Command evaluates its input.
func TestPluginSpecExtism(t *testing.T) {
	cfg := project(t, map[string]string{
		"agents.hcl": `
provider "p" {
  base_url = "http://127.0.0.1:1/v1"
}
model "m" {
  provider = "p"
}
plugin "vowels" {
  source = "cv.wasm"
  config = { vowels = "aeiou" }
  http {
    allow = ["http://127.0.0.1:8080"]
  }
  tool "count" {
    function = "count_vowels"
    input    = upper(args.text)
  }
}
agent "a" {
  tools = ["count"]
}
`,
		"cv.wasm": "\x00asm\x01\x00\x00\x00",
	})
	s := pluginSpec(cfg.Plugins[0])
	if s.Kind != plugin.KindExtism || s.Config["vowels"] != "aeiou" || len(s.HTTPAllow) != 1 || s.HTTPAllow[0] != "http://127.0.0.1:8080" {
		t.Fatalf("%+v", s)
	}
	if len(s.Tools) != 1 || s.Tools[0].Function != "count_vowels" {
		t.Fatalf("tools %+v", s.Tools)
	}
	argv, in, err := s.Tools[0].Command(json.RawMessage(`{"text":"abc"}`))
	if err != nil || argv != nil || string(in) != "ABC" {
		t.Fatalf("Command = %q %q %v", argv, in, err)
	}
}

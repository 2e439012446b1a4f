package main

import "github.com/spf13/pflag"

// The flags several commands take, declared once: their names, one-letter
// forms and (for -c) usage. A command passes its own usage where the
// flag's meaning is the command's (-a of tools lists that agent's tools).

// longNames are the long names of the one-letter flags: -a is --agent.
// --a, --c and --v, as the standard flag package took them, still parse
// (normalizeFlag) without being listed.
var longNames = map[string]string{"a": "agent", "c": "config", "v": "verbose"}

// normalizeFlag reads a flag's one-letter name as its long name.
func normalizeFlag(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if long, ok := longNames[name]; ok {
		return pflag.NormalizedName(long)
	}
	return pflag.NormalizedName(name)
}

// configFlag is -c/--config FILE (configPath resolves it).
func configFlag(fs *pflag.FlagSet) *string {
	return fs.StringP("config", "c", "", "config `file` (default: $AGENTHOST_CONFIG, else agents.hcl here or in the nearest parent directory that has one)")
}

// agentFlag is -a/--agent NAME.
func agentFlag(fs *pflag.FlagSet, usage string) *string {
	return fs.StringP("agent", "a", "", usage)
}

// modelFlag is -m/--model MODEL of run and chat (host.RunModel).
func modelFlag(fs *pflag.FlagSet) *string {
	return fs.StringP("model", "m", "", "`model` of the agent (not of its subagents) instead of its own: a model block's name, else a model id its provider serves ('agenthost models' lists them)")
}

// jsonFlag is --json, and --jq EXPR with it (jq.go).
func jsonFlag(fs *pflag.FlagSet, usage string) *bool {
	fs.String(jqFlag, "", "filter the JSON with a jq `expression` (implies --json; gh's --jq)")
	return fs.Bool("json", false, usage)
}

// sessionFlag is --session ID of run and chat.
func sessionFlag(fs *pflag.FlagSet) *string {
	return fs.String("session", "", "continue the session with this `id`")
}

// logLevelFlag is --log-level LEVEL; def is its default, and the usage
// says what an empty one means.
func logLevelFlag(fs *pflag.FlagSet, def, usage string) *string {
	return fs.String("log-level", def, usage)
}

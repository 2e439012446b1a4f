# The quickstart agent: reads the notes in workspace/ with the builtin core
# plugin and summarises them. Read-only: the agent cannot change the notes.
#
# Offline (README's first command) the model is replayed from cassette.jsonl:
#   go run ./cmd/agenthost run -c examples/quickstart/agents.hcl \
#       --replay examples/quickstart/cassette.jsonl "Summarise the notes in the workspace."
# Against a real endpoint, set OPENAI_BASE_URL, OPENAI_API_KEY and
# AGENTHOST_MODEL (or run Ollama on its default port) and drop --replay.
# examples/quickstart/README.md says how the cassette is made.

host {
  max_steps = 20
  # Sessions and the plugin compilation cache. Relative to this file, so a
  # clone without write access needs AGENTHOST_DATA_DIR=$HOME/.cache/agenthost.
  data_dir = env("AGENTHOST_DATA_DIR", ".agenthost")
}

provider "local" {
  base_url = env("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
  api_key  = env("OPENAI_API_KEY", "")
  retry {
    attempts  = 3
    initial   = "1s"
    max_delay = "10s"
  }
}

model "default" {
  provider = "local"
  name     = env("AGENTHOST_MODEL", "qwen2.5:7b-instruct")
}

plugin "core" {
  source = "builtin:core"
  mount "workspace" {
    host  = "workspace"
    guest = "/workspace"
    mode  = "ro"
  }
}

agent "quickstart" {
  description = "Reads the notes in /workspace and summarises them."
  model       = "default"
  prompt      = file("prompts/quickstart.md")
  default     = true
  steps       = 8
  budget      = 10
  tools       = ["list_dir", "read_file", "search"]
}

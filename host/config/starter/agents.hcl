# agents.hcl: the agents agenthost runs. `agenthost validate` checks this file;
# `agenthost run "task"` runs the default agent. Relative paths below are
# relative to this file's directory.

host {
  max_steps          = 200          # hard ceiling for every agent's steps
  data_dir           = ".agenthost" # sessions and cassettes
  max_depth          = 3            # how deep subagents may nest
  max_parallel_tools = 8            # tool calls that run at once
  max_calls_per_step = 64           # tool calls taken from one model response
}

# Any OpenAI-compatible endpoint: Ollama (the default below), vLLM, llama.cpp,
# LM Studio, OpenAI, OpenRouter, Groq, ... Set OPENAI_BASE_URL and
# OPENAI_API_KEY, or write the values here.
provider "local" {
  base_url = env("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
  api_key  = env("OPENAI_API_KEY", "")
  retry {
    attempts  = 5
    initial   = "1s"
    max_delay = "60s"
  }
}

model "default" {
  provider       = "local"
  name           = env("AGENTHOST_MODEL", "qwen2.5:7b-instruct")
  context_window = 32768 # tokens; older history is summarised near the limit
  # For a paid model, its price (USD per million tokens) lets agents set a
  # cost limit (cost = 0.50) and reports each run's cost:
  # price {
  #   input  = 0.15
  #   output = 0.60
  # }
}

# The builtin tools (read_file, write_file, list_dir, search, ...). A plugin
# sees nothing but what it is granted here: the agents work in workspace/
# (made by `agenthost init`), and this file, prompts/ and data_dir stay out
# of their reach. Add a read-only mount (mode = "ro") to show them more.
plugin "core" {
  source = "builtin:core"
  limits {
    memory     = "256MiB"
    timeout    = "30s"
    max_output = "1MiB"
    max_write  = "64MiB" # written per call to rw mounts
    max_files  = 10000   # files created per call in rw mounts
  }
  # agenthost's own files here (this file, prompts/, .agenthost/) stay out
  # of the plugin's reach.
  mount "workspace" {
    host  = "workspace"  # the folder next to this file
    guest = "/workspace" # where the tools see it
    mode  = "rw"         # "ro" refuses every write
  }
}

agent "build" {
  description = "Does the task in the workspace, reading and writing files."
  model       = "default"
  prompt      = file("prompts/build.md")
  default     = true
  steps       = 25 # step cap; the last step is text-only and summarises
  budget      = 50 # tool calls allowed; remove for unlimited
  tokens      = 400000 # prompt + completion tokens of a run, subagents included
  tools       = ["read_file", "write_file", "list_dir", "search"]
  subagents   = ["explore"]
  doom_loop {
    threshold = 3      # identical consecutive tool calls that count as a loop
    action    = "warn" # warn | stop | ask
  }
}

agent "explore" {
  description = "Answers questions about the workspace without changing it."
  model       = "default"
  prompt      = file("prompts/explore.md")
  steps       = 10
  tools       = ["read_file", "list_dir", "search"]
}

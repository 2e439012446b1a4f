module github.com/agenthost/agenthost/plugins/core

go 1.26

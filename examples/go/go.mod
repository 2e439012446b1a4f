module github.com/agenthost/agenthost/examples/go

go 1.21

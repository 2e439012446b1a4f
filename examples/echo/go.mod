module github.com/agenthost/agenthost/examples/echo

go 1.26

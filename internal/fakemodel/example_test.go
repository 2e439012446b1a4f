package fakemodel_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agenthost/agenthost/internal/fakemodel"
)

func Example() {
	replies, err := fakemodel.ParseScript([]byte(`# first answer: a tool call, then text
{"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]}
{"text": "Two files."}`))
	if err != nil {
		panic(err)
	}
	s, err := fakemodel.Start(replies)
	if err != nil {
		panic(err)
	}
	defer s.Close()

	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"What is here?"}],"tools":[{"type":"function","function":{"name":"list_dir"}}]}`
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	sse, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(strings.Count(string(sse), "data: "), "SSE events")
	fmt.Print(fakemodel.FormatRequests(s.Requests(), "summary"))
	fmt.Println(s.Remaining(), "reply left")
	// Output:
	// 7 SSE events
	// #1 model=m tools=[list_dir] tool_choice=- msgs=user last_user="What is here?"
	// 1 reply left
}

package clientmodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/loop"
)

// client plays an MCP client's answers.
type client struct {
	sampling, tools bool
	got             *mcp.CreateMessageWithToolsParams
	res             *mcp.CreateMessageWithToolsResult
	err             error
}

func (c *client) Sampling() (bool, bool) { return c.sampling, c.tools }

func (c *client) CreateMessage(_ context.Context, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	c.got = p
	return c.res, c.err
}

func text(s string) *mcp.CreateMessageWithToolsResult {
	return &mcp.CreateMessageWithToolsResult{Role: "assistant", Content: []mcp.Content{&mcp.TextContent{Text: s}}, StopReason: "endTurn"}
}

var readTool = loop.ToolSpec{Name: "read_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object"}`)}

// TestParams checks how a run's history becomes a sampling request: the
// system prompt, tool calls as tool_use blocks, consecutive tool results
// as one user message, the tools, tool_choice none, the limits.
func TestParams(t *testing.T) {
	temp := 0.5
	m := New(Options{Model: "c", Where: "agents.hcl:1", ModelID: "claude", Temperature: &temp})
	c := &client{sampling: true, tools: true, res: text("ok")}
	req := loop.Request{
		Messages: []loop.Message{
			{Role: loop.RoleSystem, Content: "Be brief."},
			{Role: loop.RoleUser, Content: "Read a and b."},
			{Role: loop.RoleAssistant, ToolCalls: []loop.ToolCall{
				{ID: "1", Name: "read_file", Arguments: `{"path":"a"}`},
				{ID: "2", Name: "read_file", Arguments: `not json`},
			}},
			{Role: loop.RoleTool, ToolCallID: "1", Name: "read_file", Content: "A"},
			{Role: loop.RoleTool, ToolCallID: "2", Name: "read_file", Content: "bad arguments", IsError: true},
			{Role: loop.RoleUser, Content: "Sum up."},
		},
		Tools:      []loop.ToolSpec{readTool},
		ToolChoice: loop.ToolChoiceNone,
	}
	if _, err := m.Stream(WithClient(context.Background(), c), req, nil); err != nil {
		t.Fatal(err)
	}
	p := c.got
	var shape []string
	for _, msg := range p.Messages {
		var kinds []string
		for _, b := range msg.Content {
			switch b := b.(type) {
			case *mcp.TextContent:
				kinds = append(kinds, "text")
			case *mcp.ToolUseContent:
				kinds = append(kinds, fmt.Sprintf("tool_use(%s,%s,%v)", b.ID, b.Name, b.Input))
			case *mcp.ToolResultContent:
				kinds = append(kinds, fmt.Sprintf("tool_result(%s,%v)", b.ToolUseID, b.IsError))
			}
		}
		shape = append(shape, string(msg.Role)+":"+strings.Join(kinds, "+"))
	}
	want := "user:text assistant:tool_use(1,read_file,map[path:a])+tool_use(2,read_file,map[]) user:tool_result(1,false)+tool_result(2,true) user:text"
	if got := strings.Join(shape, " "); got != want {
		t.Errorf("messages:\n got %s\nwant %s", got, want)
	}
	if p.SystemPrompt != "Be brief." || p.MaxTokens != DefaultMaxTokens || p.Temperature != 0.5 {
		t.Errorf("system %q, maxTokens %d, temperature %g; want Be brief., %d, 0.5", p.SystemPrompt, p.MaxTokens, p.Temperature, DefaultMaxTokens)
	}
	if len(p.Tools) != 1 || p.Tools[0].Name != "read_file" || p.ToolChoice == nil || p.ToolChoice.Mode != "none" {
		t.Errorf("tools %v, choice %v; want read_file with choice none", p.Tools, p.ToolChoice)
	}
	if p.ModelPreferences == nil || len(p.ModelPreferences.Hints) != 1 || p.ModelPreferences.Hints[0].Name != "claude" {
		t.Errorf("model preferences %+v; want the hint claude", p.ModelPreferences)
	}
}

// TestAnswer checks how a client's answer becomes a response, and that an
// answer past the bounds, or not the assistant's, is refused.
func TestAnswer(t *testing.T) {
	m := New(Options{Model: "c", Where: "agents.hcl:1"})
	many := &mcp.CreateMessageWithToolsResult{Role: "assistant"}
	for range MaxBlocks + 1 {
		many.Content = append(many.Content, &mcp.TextContent{Text: "x"})
	}
	big := &mcp.CreateMessageWithToolsResult{Role: "assistant", Content: []mcp.Content{
		&mcp.TextContent{Text: strings.Repeat("x", MaxBytes/2)},
		&mcp.ToolUseContent{Name: "read_file", Input: map[string]any{"path": strings.Repeat("y", MaxBytes/2)}},
	}}
	cut := &mcp.CreateMessageWithToolsResult{Role: "assistant", StopReason: "maxTokens", Content: []mcp.Content{
		&mcp.TextContent{Text: "Reading "},
		&mcp.ToolUseContent{ID: "t1", Name: "read_file", Input: map[string]any{"path": "a"}},
	}}
	tests := []struct {
		name  string
		res   *mcp.CreateMessageWithToolsResult
		err   string // substring; "" for success
		check func(loop.Response) string
	}{
		{name: "text", res: text("Hello."), check: func(r loop.Response) string {
			if r.Message.Content != "Hello." || r.Message.Role != loop.RoleAssistant || r.FinishReason != "stop" || !r.Usage.Zero() {
				return fmt.Sprintf("%+v", r)
			}
			return ""
		}},
		{name: "tool call cut by maxTokens", res: cut, check: func(r loop.Response) string {
			if len(r.Message.ToolCalls) != 1 || r.Message.ToolCalls[0].Arguments != `{"path":"a"}` || !r.Truncated || r.FinishReason != "length" {
				return fmt.Sprintf("%+v", r)
			}
			return ""
		}},
		{name: "too many blocks", res: many, err: fmt.Sprintf("%d content blocks; agenthost takes at most %d", MaxBlocks+1, MaxBlocks)},
		{name: "too many bytes", res: big, err: fmt.Sprintf("more than %d bytes", MaxBytes)},
		{name: "not the assistant", res: &mcp.CreateMessageWithToolsResult{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, err: `role is "user"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &client{sampling: true, tools: true, res: tc.res}
			resp, err := m.Stream(WithClient(context.Background(), c), loop.Request{Messages: []loop.Message{{Role: loop.RoleUser, Content: "Go."}}}, nil)
			if tc.err != "" {
				var pe *loop.ProviderError
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &pe) || pe.Retryable {
					t.Fatalf("err = %v; want a provider error, not retryable, containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if msg := tc.check(resp); msg != "" {
				t.Errorf("response %s", msg)
			}
		})
	}
}

// TestNoWay checks the requests that cannot be made: no client, a client
// without sampling, tools for a client without tools in sampling; and
// that a client's error is a provider error not to retry.
func TestNoWay(t *testing.T) {
	m := New(Options{Model: "c", Where: "agents.hcl:7"})
	plain := loop.Request{Messages: []loop.Message{{Role: loop.RoleUser, Content: "Go."}}}
	withTools := plain
	withTools.Tools = []loop.ToolSpec{readTool}
	tests := []struct {
		name string
		c    Client
		req  loop.Request
		err  string
	}{
		{"no client", nil, plain, `model "c" (agents.hcl:7) has provider = "mcp_client": its requests go to the MCP client that calls the agent, and there is none here`},
		{"no sampling", &client{}, plain, `capability "sampling"`},
		{"no tools in sampling", &client{sampling: true}, withTools, `capability "sampling.tools"`},
		{"client error", &client{sampling: true, err: errors.New("user declined")}, plain, "provider: the MCP client: user declined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.c != nil {
				ctx = WithClient(ctx, tc.c)
			}
			_, err := m.Stream(ctx, tc.req, nil)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v; want it to contain %q", err, tc.err)
			}
			var pe *loop.ProviderError
			if errors.As(err, &pe) && pe.Retryable {
				t.Errorf("err %v is retryable", err)
			}
		})
	}
}

package fakemodel

import (
	"strings"
	"testing"
)

var formatReqs = [][]byte{
	[]byte(`{"model":"m","stream":true,"messages":[{"role":"system","content":"sys"},{"role":"user","content":"List the files."}],"tools":[{"type":"function","function":{"name":"read_file","parameters":{}}},{"type":"function","function":{"name":"list_dir"}}]}`),
	[]byte(`{"model":"m","stream":true,"temperature":0.5,"messages":[{"role":"system","content":"sys"},{"role":"user","content":"List the files."},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"zz_91","type":"function","function":{"name":"list_dir","arguments":"{}"}},{"id":"zz_07","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"<a>\"}"}}]},` +
		`{"role":"tool","tool_call_id":"zz_91","content":"a.txt"},{"role":"tool","tool_call_id":"zz_07","content":"x"},` +
		`{"role":"user","content":[{"type":"text","text":"You have reached the step limit. Tools are disabled now; summarise what you did, what remains, and the next step."}]}],` +
		`"tools":[],"tool_choice":"none"}`),
	[]byte(`{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"function","function":{"name":"read_file"}}}`),
	[]byte(`garbage`),
}

func TestFormatSummary(t *testing.T) {
	got := FormatRequests(formatReqs, "summary")
	want := `#1 model=m tools=[read_file,list_dir] tool_choice=- msgs=system,user last_user="List the files."
#2 model=m tools=[] tool_choice=none msgs=system,user,assistant(list_dir,read_file),tool,tool,user last_user="You have reached the step limit. Tools are disabled now; summarise what you did,..."
#3 model=m tools=- tool_choice=function:read_file msgs=user last_user="x"
#4 invalid JSON: invalid character 'g' looking for beginning of value
`
	if got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
	if FormatRequests(formatReqs, "") != got {
		t.Errorf(`mode "" differs from "summary"`)
	}
}

func TestFormatJSON(t *testing.T) {
	got := FormatRequests(formatReqs[1:2], "json")
	want := `#1
{
  "messages": [
    {
      "content": "sys",
      "role": "system"
    },
    {
      "content": "List the files.",
      "role": "user"
    },
    {
      "content": null,
      "role": "assistant",
      "tool_calls": [
        {
          "function": {
            "arguments": "{}",
            "name": "list_dir"
          },
          "id": "call_1",
          "type": "function"
        },
        {
          "function": {
            "arguments": "{\"path\":\"<a>\"}",
            "name": "read_file"
          },
          "id": "call_2",
          "type": "function"
        }
      ]
    },
    {
      "content": "a.txt",
      "role": "tool",
      "tool_call_id": "call_1"
    },
    {
      "content": "x",
      "role": "tool",
      "tool_call_id": "call_2"
    },
    {
      "content": [
        {
          "text": "You have reached the step limit. Tools are disabled now; summarise what you did, what remains, and the next step.",
          "type": "text"
        }
      ],
      "role": "user"
    }
  ],
  "model": "m",
  "stream": true,
  "temperature": 0.5,
  "tool_choice": "none",
  "tools": []
}
`
	if got != want {
		t.Errorf("json:\n%s\nwant:\n%s", got, want)
	}
	if got := FormatRequests(formatReqs, "yaml"); !strings.Contains(got, `unknown format mode "yaml"`) {
		t.Errorf("unknown mode: %q", got)
	}
}

package prompts

import (
	"strings"
	"testing"
)

func TestDefaultTexts(t *testing.T) {
	d := Default()
	tests := []struct {
		name string
		text string
		want []string // phrases (lower case) the text must contain
	}{
		{"max_steps", d.MaxSteps, []string{"step limit", "tools are now disabled", "summarise what you did", "what remains", "next step"}},
		{"budget", d.Budget, []string{"tool-call budget", "tools are now disabled", "summarise what you did", "what remains", "next step"}},
		{"tokens", d.Tokens, []string{"token limit", "tools are now disabled", "summarise what you did", "what remains", "next step"}},
		{"cost", d.Cost, []string{"cost limit", "tools are now disabled", "summarise what you did", "what remains", "next step"}},
		{"doom_loop", d.DoomLoop, []string{"repeating the same tool call", "tools are now disabled", "summarise what you did", "what remains", "next step"}},
		{"doom_warn", d.DoomWarn, []string{"not executed", "do not repeat"}},
		{"compaction", d.Compaction, []string{"summarise", "what remains"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.text == "" {
				t.Fatal("text is empty")
			}
			if tt.text != strings.TrimSpace(tt.text) {
				t.Errorf("text has surrounding white space")
			}
			lower := strings.ToLower(tt.text)
			for _, w := range tt.want {
				if !strings.Contains(lower, w) {
					t.Errorf("text lacks %q:\n%s", w, tt.text)
				}
			}
		})
	}
}

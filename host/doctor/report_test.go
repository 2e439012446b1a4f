package doctor

import (
	"strings"
	"testing"
)

// The table gives a row per check, the time when measured, the fix under a
// failed check, and a last line saying whether all passed; text from
// servers goes through the escaper.
func TestWriteDoctorTable(t *testing.T) {
	rep := Report{
		Models: []Model{{Model: "m", BaseURL: "http://REDACTED@h/v1", Checks: []Check{
			{Name: "tcp", Status: OK, Detail: "connected", MS: 1.4},
			{Name: "auth", Status: Fail, Detail: "GET /models answered 401\x1b[2J", Hint: "check api_key"},
		}}},
		Plugins: []Plugin{{Plugin: "core", Checks: []Check{{Name: "kind", Status: OK, Detail: "agenthost"}}}},
	}
	var sb strings.Builder
	WriteTable(&sb, rep, func(s string) string { return strings.ReplaceAll(s, "\x1b", `\x1b`) })
	out := sb.String()
	for _, want := range []string{
		"WHAT", "model m (http://REDACTED@h/v1)  tcp", "ok", "1ms", "connected",
		"auth   fail", `answered 401\x1b[2J`, "fix: check api_key",
		"plugin core", "agenthost", "some checks failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("table holds a raw escape:\n%s", out)
	}
	rep.OK = true
	sb.Reset()
	WriteTable(&sb, rep, func(s string) string { return s })
	if !strings.HasSuffix(sb.String(), "all checks passed\n") {
		t.Errorf("passing report:\n%s", sb.String())
	}
}

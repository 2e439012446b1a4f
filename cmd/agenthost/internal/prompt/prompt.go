// Package prompt makes the prompt of `agenthost run` from its arguments, a
// prompt file (-f) and piped stdin, at most Max bytes.
package prompt

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// Max is the most `run` reads of a prompt, from stdin or a file, and the
// most a whole prompt may be: 16 MiB. A bigger prompt is refused, never
// cut.
const Max = 16 << 20

// tooBig is the advice of a prompt over Max.
const tooBig = "nothing was run: put the material in a file under a mount and name it in the prompt"

// UsageError is a prompt that cannot be made from what was given: no
// prompt, one over Max, a prompt file that cannot be read. The command
// exits 2 with it; any other error of Build is reading stdin.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

func usage(format string, a ...any) error {
	return &UsageError{fmt.Sprintf(format, a...)}
}

// Build makes the prompt of run: the arguments joined by spaces (stdin
// with "-", FILE's text with "@FILE" as the only argument, "@@..." a
// literal "@..."), then the text of file (-f) and then piped stdin (when
// stdinTTY is false, not empty, and not read already), each trimmed and
// after a blank line.
func Build(args []string, file string, stdin io.Reader, stdinTTY bool) (string, error) {
	var parts []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	piped := !stdinTTY
	switch {
	case len(args) == 1 && args[0] == "-":
		b, err := readStdin(stdin)
		if err != nil {
			return "", err
		}
		if strings.TrimSpace(string(b)) == "" {
			return "", usage("run: the prompt read from stdin is empty")
		}
		add(string(b))
		piped = false
	case len(args) == 1 && strings.HasPrefix(args[0], "@@"):
		add(args[0][1:])
	case len(args) == 1 && strings.HasPrefix(args[0], "@"):
		s, err := readFile(args[0][1:], " (a prompt that starts with @ names a file; write @@ for a literal @)")
		if err != nil {
			return "", err
		}
		add(s)
	default:
		add(strings.Join(args, " "))
	}
	if file != "" {
		s, err := readFile(file, "")
		if err != nil {
			return "", err
		}
		add(s)
	}
	if piped {
		b, err := readStdin(stdin)
		if err != nil {
			return "", err
		}
		add(string(b))
	}
	p := strings.Join(parts, "\n\n")
	switch {
	case p == "":
		return "", usage("run needs a prompt: agenthost run \"your task\" (or - to read it from stdin)")
	case len(p) > Max:
		return "", usage("run: the prompt is more than %d MiB, the most run reads; %s", Max>>20, tooBig)
	}
	return p, nil
}

// readStdin reads stdin whole, at most Max.
func readStdin(stdin io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(stdin, Max+1))
	if err != nil {
		return nil, fmt.Errorf("reading the prompt from stdin: %v", err)
	}
	if len(b) > Max {
		return nil, usage("run: the prompt on stdin is more than %d MiB, the most run reads; %s", Max>>20, tooBig)
	}
	return b, nil
}

// readFile reads a prompt file, at most Max; hint ends the message of a
// file that cannot be read.
func readFile(name, hint string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", usage("run: reading the prompt file: %v%s", err, hint)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, Max+1))
	if err != nil {
		return "", usage("run: reading the prompt file: %v%s", err, hint)
	}
	if len(b) > Max {
		return "", usage("run: the prompt file %s is more than %d MiB, the most run reads; %s", name, Max>>20, tooBig)
	}
	return string(b), nil
}

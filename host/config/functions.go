package config

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// Functions is the function table of agents.hcl, evaluated once at load:
//
//	env(name)           the variable's value; an error when it is unset or empty
//	env(name, default)  the variable's value, or default when it is unset or empty
//	file(path)          the content of a regular file of at most MaxFileSize
//	                    (4 MiB), path relative to baseDir
//
// lookupEnv is os.LookupEnv when nil; tests inject their own.
func Functions(baseDir string, lookupEnv func(string) (string, bool)) map[string]function.Function {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	return map[string]function.Function{
		"env":  envFunc(lookupEnv),
		"file": fileFunc(baseDir),
	}
}

func envFunc(lookupEnv func(string) (string, bool)) function.Function {
	return function.New(&function.Spec{
		Description: "Returns the value of an environment variable, or the default when it is unset.",
		Params:      []function.Parameter{{Name: "name", Type: cty.String}},
		VarParam:    &function.Parameter{Name: "default", Type: cty.String},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if len(args) > 2 {
				return cty.NilVal, function.NewArgErrorf(2, "env takes a name and at most one default, got %d arguments", len(args))
			}
			name := args[0].AsString()
			if name == "" {
				return cty.NilVal, function.NewArgErrorf(0, "the variable name is empty")
			}
			// Empty counts as unset, as in the shell's ${NAME:-default}.
			if v, ok := lookupEnv(name); ok && v != "" {
				return cty.StringVal(v), nil
			}
			if len(args) == 2 {
				return args[1], nil
			}
			return cty.NilVal, function.NewArgErrorf(0,
				"environment variable %s is not set (or empty); set it (export %s=...) or give a default: env(%q, \"\")",
				name, name, name)
		},
	})
}

func fileFunc(baseDir string) function.Function {
	return function.New(&function.Spec{
		Description: "Returns the content of a file; a relative path is relative to the config file's directory.",
		Params:      []function.Parameter{{Name: "path", Type: cty.String}},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p := args[0].AsString()
			abs := p
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(baseDir, p)
			}
			b, size, mode, err := readConfigFile(abs)
			if err != nil {
				switch {
				case os.IsNotExist(err):
					return cty.NilVal, function.NewArgErrorf(0, "no file %q (looked for %s; relative paths start at the config file's directory)", p, abs)
				case errors.Is(err, errNotRegular):
					return cty.NilVal, function.NewArgErrorf(0, "%q is %s, not a regular file: file() reads regular files only", p, kindOf(mode))
				case errors.Is(err, errTooBig):
					return cty.NilVal, function.NewArgErrorf(0, "file %q is %d bytes, more than the %d MiB file() reads: agents.hcl is for configuration and prompts; keep big data in a mounted directory the tools read", p, size, MaxFileSize>>20)
				default:
					return cty.NilVal, function.NewArgErrorf(0, "reading %q: %v", p, err)
				}
			}
			if !utf8.Valid(b) {
				return cty.NilVal, function.NewArgErrorf(0, "file %q is not UTF-8 text", p)
			}
			return cty.StringVal(string(b)), nil
		},
	})
}

// callFunctions are the functions available to wasi_cli argv and stdin
// expressions, which are evaluated per call: pure functions only (no env,
// no file: those belong to load time). The table is built once.
func callFunctions() map[string]function.Function { return callFuncs }

var callFuncs = map[string]function.Function{
	"jsonencode": stdlib.JSONEncodeFunc,
	"format":     stdlib.FormatFunc,
	"join":       stdlib.JoinFunc,
	"lower":      stdlib.LowerFunc,
	"upper":      stdlib.UpperFunc,
	"tostring":   stdlib.MakeToFunc(cty.String),
	"coalesce":   stdlib.CoalesceFunc,
	"try":        tryfunc.TryFunc,
	"can":        tryfunc.CanFunc,
	"concat":     stdlib.ConcatFunc,
	"replace":    stdlib.ReplaceFunc,
	"trimprefix": stdlib.TrimPrefixFunc,
	"trimsuffix": stdlib.TrimSuffixFunc,
	"split":      stdlib.SplitFunc,
	"length":     lengthFunc,
	"contains":   containsFunc,
}

// lengthFunc is the number of characters of a string, elements of a list
// or attributes of an object.
var lengthFunc = function.New(&function.Spec{
	Description: "Returns the number of characters of a string, elements of a list or attributes of an object.",
	Params:      []function.Parameter{{Name: "value", Type: cty.DynamicPseudoType, AllowDynamicType: true}},
	Type:        function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		v := args[0]
		ty := v.Type()
		switch {
		case ty == cty.String:
			return stdlib.Strlen(v)
		case ty.IsObjectType():
			return cty.NumberIntVal(int64(len(ty.AttributeTypes()))), nil
		case ty.IsListType() || ty.IsTupleType() || ty.IsSetType() || ty.IsMapType():
			return v.Length(), nil
		}
		return cty.NilVal, function.NewArgErrorf(0, "length takes a string, a list or an object, not %s", ty.FriendlyName())
	},
})

// containsFunc is whether a list holds a value, or a string a substring.
var containsFunc = function.New(&function.Spec{
	Description: "Returns whether a list contains a value, or a string a substring.",
	Params: []function.Parameter{
		{Name: "haystack", Type: cty.DynamicPseudoType, AllowDynamicType: true},
		{Name: "needle", Type: cty.DynamicPseudoType, AllowDynamicType: true},
	},
	Type: function.StaticReturnType(cty.Bool),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if args[0].Type() == cty.String {
			needle, err := convert.Convert(args[1], cty.String)
			if err != nil || needle.IsNull() {
				return cty.NilVal, function.NewArgErrorf(1, "contains on a string looks for a string, not %s", args[1].Type().FriendlyName())
			}
			return cty.BoolVal(strings.Contains(args[0].AsString(), needle.AsString())), nil
		}
		return stdlib.Contains(args[0], args[1])
	},
})

func callFunctionNames() string {
	var names []string
	for n := range callFunctions() {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

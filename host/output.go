package host

import (
	"encoding/json"
	"errors"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/plugin"
)

// outputSchema is an agent's output_schema as loop.Policy takes it: nil
// without one.
func outputSchema(schema []byte) json.RawMessage {
	if schema == nil {
		return nil
	}
	return json.RawMessage(schema)
}

// outputValidator is the loop.Agent.ValidateOutput of an output schema (nil
// without one). The schema was checked at load, so it compiles.
func outputValidator(schema []byte) func(v any) error {
	if schema == nil {
		return nil
	}
	compiled, err := config.CompileOutputSchema(schema)
	if err != nil {
		return nil
	}
	return func(v any) error {
		err := compiled.Validate(v)
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errors.New(schemaErrors(ve))
		}
		return err
	}
}

// OutputValidator returns the validator of an output schema, as
// loop.Agent.ValidateOutput takes it: for the processes that rebuild
// agents from their policies (the Temporal workflow).
func OutputValidator(schema []byte) func(v any) error { return outputValidator(schema) }

// schemaErrors renders a validation error as lines "at PATH: what", the
// schema's internal URL left out: the model reads them.
func schemaErrors(ve *jsonschema.ValidationError) string {
	return plugin.SchemaErrorText(ve, "\n")
}

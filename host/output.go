package host

import (
	"encoding/json"
	"errors"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/plugin"
	"github.com/agenthost/agenthost/loop"
)

// outputSpec is the loop.Output of an agent's output_schema (nil without
// one), asked for as the provider's structured_output says. The schema was
// checked at load, so it compiles.
func outputSpec(schema []byte, mode config.StructuredOutput) *loop.Output {
	if schema == nil {
		return nil
	}
	compiled, err := config.CompileOutputSchema(schema)
	if err != nil {
		return nil
	}
	return &loop.Output{
		Schema: json.RawMessage(schema),
		Mode:   loop.OutputMode(mode),
		Validate: func(v any) error {
			err := compiled.Validate(v)
			var ve *jsonschema.ValidationError
			if errors.As(err, &ve) {
				return errors.New(schemaErrors(ve))
			}
			return err
		},
	}
}

// OutputValidator returns a validator for an output schema as loop.Output
// takes it: for the processes that rebuild agents from their specs (the
// Temporal workflow).
func OutputValidator(schema []byte, mode string) *loop.Output {
	return outputSpec(schema, config.StructuredOutput(mode))
}

// schemaErrors renders a validation error as lines "at PATH: what", the
// schema's internal URL left out: the model reads them.
func schemaErrors(ve *jsonschema.ValidationError) string {
	return plugin.SchemaErrorText(ve, "\n")
}

package sandbox

import "fmt"

// PinError is a module whose sha256 is not the one its plugin block pins.
type PinError struct {
	Source   string // the module, as the config names it
	Sum, Pin string // hex
}

func (e *PinError) Error() string {
	return fmt.Sprintf("%s has sha256 %s, but the config expects %s. If the file changed on purpose, set sha256 = %q.", e.Source, e.Sum, e.Pin, e.Sum)
}

// CheckPin compares sum, the sha256 of the module source (hex), with the
// digest its plugin block pins; pin "" pins nothing. Config validation
// and every kind's load check with it.
func CheckPin(source, sum, pin string) error {
	if pin == "" || sum == pin {
		return nil
	}
	return &PinError{Source: source, Sum: sum, Pin: pin}
}

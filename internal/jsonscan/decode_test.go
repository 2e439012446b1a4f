package jsonscan

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestDecodeOne(t *testing.T) {
	v, err := DecodeOne(strings.NewReader(` {"n": 12345678901234567890} `))
	if err != nil {
		t.Fatal(err)
	}
	if n := v.(map[string]any)["n"]; n != json.Number("12345678901234567890") {
		t.Errorf("n = %#v, want the exact json.Number", n)
	}
	if _, err := DecodeOne(strings.NewReader(`{} {}`)); !errors.Is(err, ErrMore) {
		t.Errorf("two values: err = %v, want ErrMore", err)
	}
	if _, err := DecodeOne(strings.NewReader(`{"a":`)); err == nil || errors.Is(err, ErrMore) {
		t.Errorf("truncated: err = %v, want encoding/json's", err)
	}
}

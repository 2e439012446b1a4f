package jsonenc

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

// The appenders must write exactly what encoding/json writes, so that hand
// encoders built on them give the same bytes as the reflection they
// replace.

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "plain", `quote " and \ backslash`, "tab\tnl\ncr\r\b\f\x00\x1f\x7f",
		"<html> & </html>", "ünïcödé 日本 🙂", "line\u2028sep\u2029para",
		"bad \xff utf8 \xe2\x82", "\xed\xa0\x80 surrogate",
	} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("a<b>\"c\"\\\n\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	})
}

// checkFloat compares AppendFloat with encoding/json for f.
func checkFloat(t *testing.T, f float64) {
	t.Helper()
	want, err := json.Marshal(f)
	got, ok := AppendFloat([]byte("x"), f)
	if ok != (err == nil) || ok && string(got) != "x"+string(want) || !ok && string(got) != "x" {
		t.Errorf("AppendFloat(%v) = %s, %v; encoding/json: %s, %v", f, got, ok, want, err)
	}
}

func TestAppendFloatMatchesEncodingJSON(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1.5e-7, 1e-6, 9.99e-7, 1e20, 1e21, 123456789e15,
		0.000123, 3.14159, -2.5e-10, math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1), math.Inf(-1)} {
		checkFloat(t, f)
	}
}

func FuzzAppendFloat(f *testing.F) {
	f.Add(0.0123)
	f.Add(1e-9)
	f.Add(2e21)
	f.Fuzz(checkFloat)
}

// checkTime compares AppendTime with encoding/json for t.
func checkTime(t *testing.T, tm time.Time) {
	t.Helper()
	want, err := json.Marshal(tm)
	got, ok := AppendTime([]byte("x"), tm)
	if ok != (err == nil) || ok && string(got) != "x"+string(want) || !ok && string(got) != "x" {
		t.Errorf("AppendTime(%v) = %s, %v; encoding/json: %s, %v", tm, got, ok, want, err)
	}
}

func TestAppendTimeMatchesEncodingJSON(t *testing.T) {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC)
	for _, tm := range []time.Time{
		t0, t0.Truncate(time.Second), t0.Truncate(time.Millisecond), time.Time{}, time.Now(),
		t0.In(time.FixedZone("", 2*3600+30*60)), t0.In(time.FixedZone("", -5*3600)),
		t0.In(time.FixedZone("", 24*3600)), t0.In(time.FixedZone("", 3600+17)),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		checkTime(t, tm)
	}
}

func FuzzAppendTime(f *testing.F) {
	f.Add(int64(1735787045), int64(123456789), int32(0))
	f.Add(int64(-62135596800), int64(0), int32(86400))
	f.Add(int64(253402300800), int64(1), int32(-3600))
	f.Fuzz(func(t *testing.T, sec, nsec int64, offset int32) {
		checkTime(t, time.Unix(sec, nsec).In(time.FixedZone("", int(offset))))
	})
}

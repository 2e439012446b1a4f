// Package filltest fills a value's every exported field, recursively, with
// a value other than its zero, for tests that check that plain data (such
// as loop.Policy) survives a trip whole: a field added later is covered
// without a change to the test.
package filltest

import (
	"fmt"
	"reflect"
	"time"
)

// Fill sets every exported field of the value ptr points to, nested ones
// included: strings to their path, numbers to the path's length (a
// fraction added to floats), booleans to true, pointers to a new filled
// value, slices to two filled elements ([]byte to a JSON object, so that
// json.RawMessage stays valid), maps to one filled entry. It fails on a
// kind that is not plain data (func, chan, interface), naming the field.
func Fill(ptr any) error {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("filltest.Fill wants a non-nil pointer, not %T", ptr)
	}
	return fill(v.Elem(), v.Elem().Type().Name())
}

func fill(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				if err := fill(v.Field(i), path+"."+f.Name); err != nil {
					return err
				}
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		return fill(v.Elem(), path)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte(`{"type":"object"}`))
			return nil
		}
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			if err := fill(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		if err := fill(k, path+"[key]"); err != nil {
			return err
		}
		if err := fill(e, path+"[value]"); err != nil {
			return err
		}
		v.SetMapIndex(k, e)
	case reflect.String:
		v.SetString(path)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := int64(len(path))
		if v.Type() == reflect.TypeOf(time.Duration(0)) {
			n *= int64(time.Millisecond)
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(len(path)))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(len(path)) + 0.25)
	default:
		return fmt.Errorf("%s is a %s, not plain data", path, v.Kind())
	}
	return nil
}

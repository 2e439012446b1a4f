package component

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/agenthost/agenthost/internal/hostmem"
)

// fuzzBudget is the host budget of FuzzLift's calls: a quarter of the
// guest's memory limit (4 pages), so that aliased values run into it.
const fuzzBudget = 64 << 10

// abiTypes are the value types of the test components' functions,
// exported and imported (parameters and results), and every type nested
// in them.
func abiTypes(tb testing.TB) []*Type {
	var out []*Type
	seen := map[*Type]bool{}
	var walk func(t *Type)
	walk = func(t *Type) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		out = append(out, t)
		walk(t.Elem)
		walk(t.Ok)
		walk(t.Err)
		switch t.Kind {
		case Record, Tuple:
			for _, m := range t.members() {
				walk(m)
			}
		case Variant:
			for _, c := range t.caseTypes() {
				walk(c)
			}
		}
	}
	for _, n := range []string{"abi.wasm", "wasi.wasm", "alias.wasm"} {
		k := loadTestdata(tb, n, Options{})
		fts := []*FuncType{}
		for _, f := range k.Funcs() {
			fts = append(fts, f.Type)
		}
		for _, f := range k.c.funcs {
			if f.kind == fnImport {
				fts = append(fts, f.ft)
			}
		}
		for _, ft := range fts {
			for _, p := range ft.Params {
				walk(p.Type)
			}
			walk(ft.Result)
		}
	}
	return out
}

// hostileOnly re-panics what lifting and lowering must never panic with:
// a Go runtime error (an index out of range, a nil pointer) or a value
// of the host that does not fit its type. A Trap, a refusal of the budget
// and an error of the guest's realloc end the crossing as they should.
func hostileOnly(r any) error {
	switch e := r.(type) {
	case nil:
		return nil
	case *Trap:
		return e
	case *hostmem.Error:
		return e
	case *hostError:
		panic(fmt.Sprintf("host value does not fit its type: %v", e))
	case runtime.Error:
		panic(r)
	case error:
		return e
	}
	panic(r)
}

// valueBytes is what the host holds for a lifted value at the least: the
// bytes of its strings and byte lists and a 16-byte slot per element of
// its lists, records and tuples. A lift must have charged at least as
// much to the budget.
func valueBytes(v Value) uint64 {
	switch x := v.(type) {
	case string:
		return uint64(len(x))
	case []byte:
		return uint64(len(x))
	case []Value:
		n := uint64(len(x)) * fieldCost
		for _, e := range x {
			n += valueBytes(e)
		}
		return n
	case Var:
		return valueBytes(x.Val)
	}
	return 0
}

// FuzzLift: whatever the guest's memory holds, lifting a value of a real
// type (from memory or from flat core values) returns a value or ends
// with a Trap or a refusal of the call's budget, never another panic; the
// budget is charged for at least what the value holds, and never past
// its limit. A lifted value lowered into the guest's memory and lifted
// again is the same value.
func FuzzLift(f *testing.F) {
	types := abiTypes(f)
	// The memory and realloc of abi.wat's core module, its memory limited
	// to 4 pages.
	k := loadTestdata(f, "abi.wasm", Options{MemoryLimitPages: 4})
	ctx := context.Background()
	index := map[string]uint8{}
	for i, t := range types {
		if _, ok := index[t.String()]; !ok {
			index[t.String()] = uint8(i)
		}
	}
	// list<string>: 300 elements at 64, each naming the same 1000 bytes
	// at 4096.
	aliased := make([]byte, 8192)
	binary.LittleEndian.PutUint32(aliased[0:], 64)
	binary.LittleEndian.PutUint32(aliased[4:], 300)
	for i := range 300 {
		binary.LittleEndian.PutUint32(aliased[8+8*i:], 4096)
		binary.LittleEndian.PutUint32(aliased[12+8*i:], 1000)
	}
	copy(aliased[64:], aliased[8:8+8*300])
	for i := 4096; i < 5096; i++ {
		aliased[i] = 'a'
	}
	f.Add(index["list<string>"], uint8(0), uint32(0), aliased)
	f.Add(index["list<list<u8>>"], uint8(0), uint32(0), aliased)
	f.Add(index["list<string>"], uint8(2), uint32(0), aliased)
	f.Add(index["list<string>"], uint8(0x81), uint32(0), aliased)
	f.Add(uint8(0), uint8(0), uint32(0), []byte("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10"))
	f.Fuzz(func(t *testing.T, typ, mode uint8, ptr uint32, mem []byte) {
		ty := types[int(typ)%len(types)]
		mod, err := k.rt.InstantiateModule(ctx, k.compiled[0], wazero.NewModuleConfig().WithName(""))
		if err != nil {
			t.Fatal(err)
		}
		defer mod.Close(ctx)
		m := mod.ExportedMemory("memory")
		if len(mem) > int(m.Size()) {
			mem = mem[:m.Size()]
		}
		m.Write(0, mem)
		st := &call{k: k, budget: hostmem.New(fuzzBudget)}
		a := &abi{ctx: ctx, st: st, mem: m, realloc: mod.ExportedFunction("cabi_realloc"), enc: mode & 3 % 3, what: "the fuzzed value"}
		crossing := func(do func()) (err error) {
			defer func() { err = hostileOnly(recover()) }()
			do()
			return nil
		}
		var v Value
		err = crossing(func() {
			if mode&0x80 == 0 {
				v = a.load(ptr%(m.Size()+8), ty)
				return
			}
			// Flat values: taken from the memory's first bytes.
			vals := make([]uint64, len(ty.flat))
			for i := range vals {
				x, _ := m.ReadUint64Le(uint32(8 * i))
				vals[i] = x
			}
			v = a.liftFlat(vals, ty)
		})
		if used := st.budget.Used(); used > fuzzBudget || used != a.held {
			t.Fatalf("lifting %s: the budget holds %d bytes, the lift charged %d, the limit is %d", ty, used, a.held, fuzzBudget)
		}
		if err != nil {
			if !errors.As(err, new(*Trap)) && !errors.Is(err, hostmem.ErrExceeded) {
				t.Fatalf("lifting %s: %v", ty, err)
			}
			return
		}
		if vb := valueBytes(v); vb > a.held {
			t.Fatalf("lifting %s: the value holds %d bytes, the budget was charged %d", ty, vb, a.held)
		}
		// Lowered and lifted again: the same value.
		a.release()
		var again Value
		err = crossing(func() {
			p := a.alloc(ty.align, ty.size)
			a.store(p, ty, v)
			again = a.load(p, ty)
		})
		if err != nil {
			return // the guest's memory or the budget is full
		}
		if fmt.Sprint(again) != fmt.Sprint(v) {
			t.Fatalf("%s: lowered %v, lifted back %v", ty, v, again)
		}
	})
}

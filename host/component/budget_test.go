package component

import (
	"context"
	"errors"
	"fmt"
	"github.com/agenthost/agenthost/internal/sandbox"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/hostmem"
)

// budgetPages is the memory limit of the budget tests: 4 MiB, the
// component's budget too.
const budgetPages = 64

// allocated runs f and returns how many bytes the process allocated
// meanwhile (runtime.MemStats.TotalAlloc).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// wantBudgetFailure checks that err is a memory failure for the host
// budget, naming what.
func wantBudgetFailure(t *testing.T, err error, what string) {
	t.Helper()
	f := failure(t, err, sandbox.FailureMemory)
	if !errors.Is(f.Err, ErrHostBudget) || !errors.Is(f.Err, hostmem.ErrExceeded) {
		t.Fatalf("err = %v, want the host budget", f.Err)
	}
	if !strings.Contains(f.Err.Error(), what) || !strings.Contains(f.Err.Error(), "budget of 4194304 bytes") {
		t.Errorf("err = %q, want it to name %q and the budget", f.Err, what)
	}
}

// maxAlloc bounds what a refused call may allocate: the budget, the
// instances (the guest's 1.4 MiB memory among them) and the call's own
// bookkeeping, with room to spare; the copies the guest asks for are
// 2 GiB and 8 GiB.
const maxAlloc = 32 << 20

// TestHostBudgetResult: a result whose 2048 or 8192 list elements all point
// at the same 1 MiB of the guest's memory fails the call with the host
// budget (the memory limit, 4 MiB) once the copies reach it, instead of
// copying 2 or 8 GiB; the host allocates a few MiB. A result within the
// budget is returned.
func TestHostBudgetResult(t *testing.T) {
	k := loadTestdata(t, "alias.wasm", Options{MemoryLimitPages: budgetPages})
	if got := k.HostBudget(); got != 4<<20 {
		t.Fatalf("HostBudget = %d, want the memory limit", got)
	}
	for _, tool := range []string{"strings", "byte-lists"} {
		for _, n := range []string{"2048", "8192"} {
			var err error
			a := allocated(func() { _, err = callTool(t, k, tool, `{"n":`+n+`,"len":1048576}`, nil) })
			wantBudgetFailure(t, err, "the result of "+tool)
			if a > maxAlloc {
				t.Errorf("%s(%s): the call allocated %d MiB, want at most %d MiB", tool, n, a>>20, maxAlloc>>20)
			}
			t.Logf("%s(%s): allocated %.1f MiB", tool, n, float64(a)/(1<<20))
		}
	}
	out := mustCall(t, k, "strings", `{"n":2,"len":3}`, nil)
	if string(out.JSON) != `{"result":["aaa","aaa"]}` {
		t.Errorf("strings(2, 3) = %s", out.JSON)
	}
}

// TestHostBudgetImportArguments: the arguments a guest passes to an import
// are charged as they are lifted: fields.from-list with 2048 values that
// are all the same 1 MiB fails with the budget before the host copies 2
// GiB (the 1 MiB cap of a header set was checked only after the copy).
// Cloning a header set again and again, every clone kept, runs into the
// budget too.
func TestHostBudgetImportArguments(t *testing.T) {
	k := loadTestdata(t, "alias.wasm", Options{MemoryLimitPages: budgetPages})
	var err error
	a := allocated(func() { _, err = callTool(t, k, "from-list", `{"n":2048}`, nil) })
	wantBudgetFailure(t, err, "the arguments of wasi:http/types@0.2.3#[static]fields.from-list")
	if a > maxAlloc {
		t.Errorf("from-list: the call allocated %d MiB, want at most %d MiB", a>>20, maxAlloc>>20)
	}
	t.Logf("from-list(2048): allocated %.1f MiB", float64(a)/(1<<20))

	// 16384 entries and 2000 clones: 1.3 GB of slice headers without
	// the budget.
	a = allocated(func() { _, err = callTool(t, k, "clone", `{"n":16384,"k":2000}`, nil) })
	wantBudgetFailure(t, err, "HTTP fields")
	if a > maxAlloc {
		t.Errorf("clone: the call allocated %d MiB, want at most %d MiB", a>>20, maxAlloc>>20)
	}
	t.Logf("clone(16384, 2000): allocated %.1f MiB", float64(a)/(1<<20))

	if out := mustCall(t, k, "clone", `{"n":16,"k":10}`, nil); string(out.JSON) != `{"result":0}` {
		t.Errorf("clone(16, 10) = %s", out.JSON)
	}
}

// TestHostBudgetGivenBack: what the host lifts for an import is given back
// when the import returns, so a guest that writes more to stdout over the
// call than the budget holds meets the output limit, not the budget.
func TestHostBudgetGivenBack(t *testing.T) {
	k := loadTestdata(t, "wasi.wasm", Options{MemoryLimitPages: budgetPages})
	_, err := callTool(t, k, "flood", `{}`, &Sandbox{MaxOutput: 8 << 20})
	failure(t, err, sandbox.FailureOutput)
}

// TestHostBudgetHTTPBodies: the bodies the host keeps for a guest are
// charged to its call's budget: a response body until the guest has read
// it or dropped the response (a response that would pass the budget is
// not read on, the guest gets an error and the call is left to fail), a
// request body until the request is sent.
func TestHostBudgetHTTPBodies(t *testing.T) {
	big := strings.Repeat("b", 3<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/big" {
			io.WriteString(w, big)
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	sb := &Sandbox{HTTP: &HTTPGrant{Allow: func(*url.URL) bool { return true }}}
	st := &call{sb: sb, ctx: context.Background(), budget: hostmem.New(4 << 20)}
	st.wasi = newWasiState(sb)
	defer st.close()
	send := func(path string, body *outgoingBody) *futureResponse {
		req := &outgoingRequest{headers: &fields{}, method: Var{2, nil}, scheme: some(Var{0, nil}),
			authority: some(u.Host), path: some(path), body: body}
		res := st.handleHTTP(req).(Var)
		if res.Case != 0 {
			t.Fatalf("handle %s: %v", path, res)
		}
		fut := res.Val.(*futureResponse)
		<-fut.done
		return fut
	}
	fut := send("/big", nil)
	if fut.resp == nil || len(fut.resp.body) != len(big) || st.budget.Used() != uint64(len(big)) {
		t.Fatalf("first response: %+v, budget used %d", fut.resp, st.budget.Used())
	}
	// A second 3 MiB body passes the 4 MiB budget.
	second := send("/big", nil)
	if second.resp != nil || !strings.Contains(fmt.Sprint(second.err), "budget of 4194304 bytes") {
		t.Errorf("second response: %+v, err %v; want the budget's refusal", second.resp, second.err)
	}
	if !errors.Is(st.budget.Refused(), hostmem.ErrExceeded) || st.budget.Used() != uint64(len(big)) {
		t.Errorf("after the refusal: refused %v, used %d", st.budget.Refused(), st.budget.Used())
	}
	// Read through its stream, the first body is given back.
	impl := func(name string, args ...Value) Value { return hostFuncs["wasi:http/types#"+name](st, args) }
	body := impl("[method]incoming-response.consume", fut.resp).(Var).Val
	rd := impl("[method]incoming-body.stream", body).(Var).Val.(*bodyReader)
	for len(rd.data) > 0 {
		rd.read(st, maxIO, true)
	}
	if st.budget.Used() != 0 {
		t.Errorf("after reading the body: budget used %d, want 0", st.budget.Used())
	}
	// A request body is held until the request is sent.
	ob := &outgoingBody{max: DefaultMaxHTTPBody, finished: make(chan struct{})}
	(&bodyWriter{ob}).write(st, []byte(big[:1<<20]))
	if st.budget.Used() != 1<<20 {
		t.Errorf("after writing 1 MiB of a request body: budget used %d", st.budget.Used())
	}
	ob.drop()
	if fut := send("/small", ob); fut.resp == nil || st.budget.Used() != 0 {
		t.Errorf("after sending the body: %+v, budget used %d, want 0", fut, st.budget.Used())
	}
}

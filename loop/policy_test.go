package loop

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agenthost/agenthost/internal/filltest"
)

// TestPolicyJSON: a Policy with every field set (nested ones included)
// survives the JSON round trip a durable run makes it take. A field JSON
// cannot carry (a func, an interface), one tagged "-", or one a custom
// encoding drops fails, whichever field it is: the test lists none.
func TestPolicyJSON(t *testing.T) {
	var p Policy
	if err := filltest.Fill(&p); err != nil {
		t.Fatalf("Policy must be plain data (it travels as JSON to durable runs): %v", err)
	}
	if p.Retry.Initial == 0 || p.Prompts.Compaction == "" || p.Price.CachedInput == 0 || len(p.Approve) != 2 {
		t.Fatalf("Fill left fields zero: %+v", p)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back Policy
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, p) {
		t.Errorf("Policy changed in the JSON round trip:\nsent %+v\ngot  %+v\nJSON %s", p, back, b)
	}
}

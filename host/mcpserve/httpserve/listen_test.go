package httpserve

import "testing"

// TestCheckListenAddr: without a token only loopback addresses are served;
// with one, any host:port is (the token is the protection).
func TestCheckListenAddr(t *testing.T) {
	for _, c := range []struct {
		addr  string
		token bool
		ok    bool
	}{
		{"127.0.0.1:8808", false, true},
		{"127.0.0.1:0", false, true},
		{"[::1]:8808", false, true},
		{"localhost:8808", false, true},
		{"127.1.2.3:80", false, true},
		{"0.0.0.0:8808", false, false},
		{":8808", false, false},
		{"[::]:8808", false, false},
		{"192.168.1.2:8808", false, false},
		{"example.com:8808", false, false},
		{"0.0.0.0:8808", true, true},
		{"example.com:8808", true, true},
		{"127.0.0.1", false, false},
		{"127.0.0.1", true, false},
	} {
		err := CheckListenAddr(c.addr, c.token)
		if (err == nil) != c.ok {
			t.Errorf("CheckListenAddr(%q, token=%v) = %v, want ok=%v", c.addr, c.token, err, c.ok)
		}
	}
}

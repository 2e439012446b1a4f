package fakemodel

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func get(t *testing.T, url, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestCatalog(t *testing.T) {
	s, err := Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if code, body := get(t, s.URL()+"/models", ""); code != 200 || !strings.Contains(body, `"id":"fakemodel"`) {
		t.Errorf("default models: %d %s", code, body)
	}
	s.SetModels(0, "a", "b")
	if code, body := get(t, s.URL()+"/models", ""); code != 200 || !strings.Contains(body, `"id":"a"`) || !strings.Contains(body, `"id":"b"`) || strings.Contains(body, `"id":"fakemodel"`) {
		t.Errorf("set models: %d %s", code, body)
	}
	s.SetModels(404)
	if code, _ := get(t, s.URL()+"/models", ""); code != 404 {
		t.Errorf("models status 404: got %d", code)
	}
	s.SetModels(0, "a")
	s.RequireKey("k1")
	if code, body := get(t, s.URL()+"/models", "wrong"); code != 401 || !strings.Contains(body, "Incorrect API key") {
		t.Errorf("wrong key: %d %s", code, body)
	}
	if code, _ := get(t, s.URL()+"/models", "k1"); code != 200 {
		t.Errorf("right key: %d", code)
	}
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(`{"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("chat without key: %d", resp.StatusCode)
	}
}

package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
)

// catalog is what GET /v1/models answers and the API key the server
// demands, both settable after Start (SetModels, RequireKey) so that
// tests can make a server fail the way real ones do: a model not pulled,
// no /models endpoint, a key refused.
type catalog struct {
	mu     sync.Mutex
	set    bool
	status int // 0: list ids
	ids    []string
	key    string // "" accepts any request
}

// SetModels makes GET /v1/models list ids (in order); with status not 0
// it answers that HTTP status instead (404: a server without /models).
func (s *Server) SetModels(status int, ids ...string) {
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	s.cat.set, s.cat.status, s.cat.ids = true, status, append([]string(nil), ids...)
}

// RequireKey makes every request without "Authorization: Bearer key" get
// 401 with an OpenAI-shaped error; "" accepts any request again.
func (s *Server) RequireKey(key string) {
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	s.cat.key = key
}

// authorized answers 401 and returns false when a key is required and the
// request lacks it.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	s.cat.mu.Lock()
	key := s.cat.key
	s.cat.mu.Unlock()
	if key == "" || r.Header.Get("Authorization") == "Bearer "+key {
		return true
	}
	writeError(w, http.StatusUnauthorized, "invalid_request_error", "fakemodel: Incorrect API key provided")
	return false
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	s.cat.mu.Lock()
	set, status, ids := s.cat.set, s.cat.status, s.cat.ids
	s.cat.mu.Unlock()
	if !set {
		ids = []string{"fakemodel"}
	}
	if status != 0 {
		writeError(w, status, errorType(status), fmt.Sprintf("fakemodel: HTTP %d", status))
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int    `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, id := range ids {
		list.Data = append(list.Data, model{ID: id, Object: "model", OwnedBy: "fakemodel"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}

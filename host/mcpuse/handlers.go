package mcpuse

import (
	"context"
	"net/url"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientOptions are the SDK client's handlers of what a server asks or
// tells: elicitation (Spec.Elicit, else declined), sampling (Spec.Sample,
// else not advertised), roots (Spec.Roots, else none advertised) and
// tools/list_changed (the tools are listed again).
func (s *Server) clientOptions() *mcp.ClientOptions {
	caps := &mcp.ClientCapabilities{}
	if len(s.spec.Roots) > 0 {
		caps.RootsV2 = &mcp.RootCapabilities{}
	}
	opts := &mcp.ClientOptions{
		Capabilities:       caps,
		ElicitationHandler: s.elicit,
		ToolListChangedHandler: func(ctx context.Context, _ *mcp.ToolListChangedRequest) {
			s.toolsChanged()
		},
	}
	if s.spec.Sample != nil {
		opts.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			res, err := s.spec.Sample.Sample(ctx, s.spec.Name, req.Params)
			if err != nil {
				s.log.Info().Str("error", err.Error()).Msg("MCP server's sampling request refused")
				return nil, err
			}
			return res, nil
		}
	}
	return opts
}

// elicit answers an elicitation/create through Spec.Elicit; without one, it
// declines.
func (s *Server) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if s.spec.Elicit == nil || req.Params == nil {
		s.log.Info().Msg("MCP server asked the user a question (elicitation): declined, nobody can answer")
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	res, err := s.spec.Elicit.Elicit(ctx, s.spec.Name, req.Params)
	if err != nil {
		return nil, err
	}
	s.log.Info().Str("action", res.Action).Msg("MCP server asked the user a question (elicitation)")
	return res, nil
}

// roots are the root directories of Spec.Roots as file URIs.
func (s *Server) roots() []*mcp.Root {
	var out []*mcp.Root
	for _, d := range s.spec.Roots {
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(d)}
		out = append(out, &mcp.Root{URI: u.String(), Name: filepath.Base(d)})
	}
	return out
}

// toolsChanged lists the tools again, at once (on another goroutine, one
// listing at a time: the handler must not hold up the connection); a call
// made before that listing is stored lists them itself (relist).
func (s *Server) toolsChanged() {
	s.mu.Lock()
	s.gen++
	s.changed = true
	busy := s.refreshing
	s.refreshing = true
	s.mu.Unlock()
	s.log.Info().Msg("MCP server's tools changed (notifications/tools/list_changed): listing them again")
	if busy {
		return
	}
	go func() {
		for {
			s.mu.Lock()
			g := s.gen
			if s.listedGen == g || s.closed {
				s.refreshing = false
				s.mu.Unlock()
				return
			}
			s.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), s.spec.Timeout)
			tools, err := s.listTools(ctx)
			cancel()
			s.storeTools(g, tools, err)
			if s.spec.ToolsListed != nil {
				s.spec.ToolsListed()
			}
		}
	}()
}

// ToolsGen counts the server's notifications/tools/list_changed so far: a
// value other than the last RefreshTools returned means the tools may have
// changed since.
func (s *Server) ToolsGen() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

// RefreshTools lists the tools again, now, when the server said they
// changed and they were not listed since, and returns the count of
// notifications the stored list reflects (Tools returns it).
func (s *Server) RefreshTools(ctx context.Context) int {
	s.mu.Lock()
	g, stale := s.gen, s.listedGen != s.gen && !s.closed
	s.mu.Unlock()
	if stale {
		tools, err := s.listTools(ctx)
		s.storeTools(g, tools, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listedGen
}

// storeTools keeps tools (or err), listed after change g, unless a later
// listing was stored already.
func (s *Server) storeTools(g int, tools []*mcp.Tool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g < s.listedGen {
		return
	}
	s.tools, s.toolsErr, s.listedGen = tools, err, g
}

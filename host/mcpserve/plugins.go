package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host/plugin"
)

// Bounds on what a plugin may offer besides tools: its list exports run
// once, when the server starts, and what they return past these counts is
// not served (a warning says so).
const (
	maxResources = 1000
	maxTemplates = 100
	maxPrompts   = 1000
	// maxCompletions is MCP's own cap on the values of a completion.
	maxCompletions = 100
)

// offers is what the plugins offer besides tools: the plugin serving each
// prompt, resource and resource template, for completions, subscriptions
// and the lists a plugin says changed.
type offers struct {
	mu        sync.Mutex
	prompts   map[string]*plugin.Plugin // by prompt name
	templates map[string]*plugin.Plugin // by URI template
	resources map[string]*plugin.Plugin // by URI of a direct resource
}

func newOffers() *offers {
	return &offers{prompts: map[string]*plugin.Plugin{}, templates: map[string]*plugin.Plugin{}, resources: map[string]*plugin.Plugin{}}
}

// prompt, template and resource look up the plugin serving a prompt, a
// resource template or a direct resource; nil when none does.
func (o *offers) prompt(name string) *plugin.Plugin {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.prompts[name]
}

func (o *offers) template(uri string) *plugin.Plugin {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.templates[uri]
}

func (o *offers) resource(uri string) *plugin.Plugin {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.resources[uri]
}

// listOf calls a plugin's list export fn and reads the array under key.
func listOf[T any](ctx context.Context, p *plugin.Plugin, fn, key string, max int) []T {
	log := zerolog.Ctx(ctx)
	out, err := p.MCPRequest(ctx, fn, nil)
	if err != nil {
		log.Warn().Err(err).Str("plugin", p.Name()).Msgf("not served over MCP: what %s lists", fn)
		return nil
	}
	var doc map[string]json.RawMessage
	var items []T
	if json.Unmarshal(out, &doc) != nil || json.Unmarshal(doc[key], &items) != nil {
		log.Warn().Str("plugin", p.Name()).Msgf("not served over MCP: %s did not return {%q: [...]}", fn, key)
		return nil
	}
	if len(items) > max {
		log.Warn().Str("plugin", p.Name()).Int("listed", len(items)).Int("max", max).Msgf("%s listed too many; serving the first %d", fn, max)
		items = items[:max]
	}
	return items
}

// addPluginOffers adds the resources, resource templates and prompts of
// the hyper-mcp v2 plugins of plugins to srv. A name or URI offered twice
// is served by the first plugin (a warning names the other).
func (s *Server) addPluginOffers(ctx context.Context, plugins []*plugin.Plugin, o *offers) {
	for _, p := range plugins {
		s.listResources(ctx, p, o)
		s.listPrompts(ctx, p, o)
	}
}

// listResources serves the resources and resource templates plugin p
// lists now, in place of those it listed before.
func (s *Server) listResources(ctx context.Context, p *plugin.Plugin, o *offers) {
	log := zerolog.Ctx(ctx)
	var resources []*mcp.Resource
	var templates []*mcp.ResourceTemplate
	if p.Offers("list_resources") && p.Offers("read_resource") {
		resources = listOf[*mcp.Resource](ctx, p, "list_resources", "resources", maxResources)
	}
	if p.Offers("list_resource_templates") && p.Offers("read_resource") {
		templates = listOf[*mcp.ResourceTemplate](ctx, p, "list_resource_templates", "resourceTemplates", maxTemplates)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	s.RemoveResources(dropOwned(o.resources, p)...)
	s.RemoveResourceTemplates(dropOwned(o.templates, p)...)
	serveOwned(log, p, o.resources, resources, func(r *mcp.Resource) string { return r.URI }, "resource without a URI",
		func(r *mcp.Resource) bool {
			s.AddResource(r, s.readResource(p))
			return true
		})
	serveOwned(log, p, o.templates, templates, func(t *mcp.ResourceTemplate) string { return t.URITemplate }, "resource template without a URI template",
		func(t *mcp.ResourceTemplate) bool {
			if err := addTemplate(s.Server, t, s.readResource(p)); err != nil {
				log.Warn().Err(err).Str("plugin", p.Name()).Str("template", t.URITemplate).Msg("resource template not served")
				return false
			}
			return true
		})
}

// listPrompts serves the prompts plugin p lists now, in place of those it
// listed before.
func (s *Server) listPrompts(ctx context.Context, p *plugin.Plugin, o *offers) {
	if !p.Offers("list_prompts") || !p.Offers("get_prompt") {
		return
	}
	log := zerolog.Ctx(ctx)
	prompts := listOf[*mcp.Prompt](ctx, p, "list_prompts", "prompts", maxPrompts)
	o.mu.Lock()
	defer o.mu.Unlock()
	s.RemovePrompts(dropOwned(o.prompts, p)...)
	serveOwned(log, p, o.prompts, prompts, func(pr *mcp.Prompt) string { return pr.Name }, "prompt without a name",
		func(pr *mcp.Prompt) bool {
			s.AddPrompt(pr, s.getPrompt(p))
			return true
		})
}

// serveOwned serves, with serve, each of the items plugin p lists that has
// a key (a URI, a name) no item has in owned yet, and marks it p's there
// unless serve fails (false). The others are not served: a warning says
// "<what>, or with one offered already".
func serveOwned[T any](log *zerolog.Logger, p *plugin.Plugin, owned map[string]*plugin.Plugin, items []*T, key func(*T) string, what string, serve func(*T) bool) {
	for _, it := range items {
		k := ""
		if it != nil {
			k = key(it)
		}
		if k == "" || owned[k] != nil {
			log.Warn().Str("plugin", p.Name()).Msg(what + ", or with one offered already: not served")
			continue
		}
		owned[k] = p
		if !serve(it) {
			delete(owned, k)
		}
	}
}

// dropOwned removes from m the keys p serves and returns them.
func dropOwned(m map[string]*plugin.Plugin, p *plugin.Plugin) []string {
	var out []string
	for k, q := range m {
		if q == p {
			out = append(out, k)
			delete(m, k)
		}
	}
	return out
}

// pluginNews serves what the hyper-mcp v2 plugins said during a served
// request or call: resources or prompts that changed are listed again
// (the SDK tells the clients, notifications/*/list_changed), and the
// resources updated are told to the clients subscribed to them
// (notifications/resources/updated). It costs a few atomic loads when
// they said nothing.
func (s *Server) pluginNews(ctx context.Context) {
	for _, p := range s.plugins {
		resources, prompts := p.TakeListsChanged()
		if resources {
			s.listResources(ctx, p, s.offers)
		}
		if prompts {
			s.listPrompts(ctx, p, s.offers)
		}
		for _, uri := range p.TakeResourceUpdates() {
			if err := s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
				zerolog.Ctx(ctx).Debug().Err(err).Str("uri", uri).Msg("resource update not sent")
			}
		}
	}
}

// addTemplate is AddResourceTemplate, whose panic on a bad template is an
// error here: the template comes from a plugin.
func addTemplate(srv *mcp.Server, t *mcp.ResourceTemplate, h mcp.ResourceHandler) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("bad URI template: %v", v)
		}
	}()
	srv.AddResourceTemplate(t, h)
	return nil
}

// request runs a served request of a plugin's export: counted as a call
// (Wait), with the client's CallClient.
func (s *Server) request(ctx context.Context, ss *mcp.ServerSession, token any, p *plugin.Plugin, fn string, params any) (json.RawMessage, error) {
	ctx, _, end := s.serving(ctx)
	defer end()
	defer s.pluginNews(ctx)
	return p.MCPRequest(withClient(ctx, ss, token), fn, params)
}

// requestOf is request, the plugin's answer decoded as an R; what names an
// R in the error when the answer is not one.
func requestOf[R any](ctx context.Context, s *Server, ss *mcp.ServerSession, token any, p *plugin.Plugin, fn string, params any, what string) (*R, error) {
	out, err := s.request(ctx, ss, token, p, fn, params)
	if err != nil {
		return nil, err
	}
	var res R
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("plugin %q: %s did not return %s: %v", p.Name(), fn, what, err)
	}
	return &res, nil
}

func (s *Server) readResource(p *plugin.Plugin) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return requestOf[mcp.ReadResourceResult](ctx, s, req.Session, req.Params.GetProgressToken(), p, "read_resource", map[string]any{"uri": req.Params.URI},
			"MCP resource contents")
	}
}

func (s *Server) getPrompt(p *plugin.Plugin) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return requestOf[mcp.GetPromptResult](ctx, s, req.Session, req.Params.GetProgressToken(), p, "get_prompt", map[string]any{"name": req.Params.Name, "arguments": req.Params.Arguments},
			"an MCP prompt")
	}
}

// complete serves completion/complete from the plugin that offers the
// prompt or resource template referred to, when it exports complete;
// anything else completes to nothing.
func (s *Server) complete(o *offers) func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		empty := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
		if req.Params == nil || req.Params.Ref == nil {
			return empty, nil
		}
		var p *plugin.Plugin
		switch req.Params.Ref.Type {
		case "ref/prompt":
			p = o.prompt(req.Params.Ref.Name)
		case "ref/resource":
			p = o.template(req.Params.Ref.URI)
		}
		if p == nil || !p.Offers("complete") {
			return empty, nil
		}
		res, err := requestOf[mcp.CompleteResult](ctx, s, req.Session, nil, p, "complete", req.Params, "an MCP completion")
		if err != nil {
			return nil, err
		}
		if len(res.Completion.Values) > maxCompletions {
			res.Completion.Values, res.Completion.HasMore = res.Completion.Values[:maxCompletions], true
		}
		if res.Completion.Values == nil {
			res.Completion.Values = []string{}
		}
		return res, nil
	}
}

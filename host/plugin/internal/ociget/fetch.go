package ociget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/agenthost/agenthost/internal/ociref"
)

// Bounds are the limits on what a registry controls
// (docs/configuration.md lists them). A hostile registry can make
// agenthost hold at most Wasm bytes of a module, read at most Layer bytes
// of a layer and expand at most Expanded bytes of a tar.gz, and wait at
// most Timeout.
type Bounds struct {
	Manifest int64         // bytes of a manifest or an index
	Layers   int           // layers of a manifest, manifests of an index
	Wasm     int64         // bytes of the module
	Layer    int64         // bytes of a tar or tar.gz layer, as stored
	Expanded int64         // bytes of a layer's tar stream, expanded
	Entries  int           // entries of a layer's tar stream
	Redirect int           // redirects followed by one request
	Timeout  time.Duration // one Fetch, from the first request to the last byte
}

// DefaultBounds are the bounds of every fetch.
var DefaultBounds = Bounds{
	Manifest: 4 << 20,
	Layers:   32,
	Wasm:     256 << 20,
	Layer:    256 << 20,
	Expanded: 512 << 20,
	Entries:  10000,
	Redirect: 5,
	Timeout:  5 * time.Minute,
}

// Artifact is what Fetch found: the module, and where it came from.
type Artifact struct {
	Wasm []byte
	// Manifest is the digest of the image manifest the module came from
	// (what a lock file pins); Index that of the index it was chosen
	// from, or "".
	Manifest digest.Digest
	Index    digest.Digest
	// Layout names the artifact's layout, for messages: "hyper-mcp
	// artifact", "wasm artifact" (the CNCF layout), "image".
	Layout string
	// Stale is set when the registry could not be reached and a tag was
	// taken to the digest it last resolved to (from the cache).
	Stale bool
}

// Fetcher fetches artifacts, keeping them in its cache directory.
type Fetcher struct {
	cache  cache
	http   *http.Client
	bounds Bounds
}

// New returns a Fetcher whose cache is dir ("" keeps nothing: every load
// fetches). dir must be private to the user: host/plugin puts it in the
// compilation cache, which the host checks is.
func New(dir string) *Fetcher { return newFetcher(dir, DefaultBounds) }

func newFetcher(dir string, b Bounds) *Fetcher {
	return &Fetcher{cache: cache{dir: dir}, http: httpClient(b.Redirect), bounds: b}
}

// Fetch returns the module ref names. The transport rule (ociref) is
// checked first, before anything is contacted. A digest ref is read from
// the cache when it is there, without contacting the registry; a tag is
// resolved by the registry, or, when the registry cannot be reached, to
// the digest it last resolved to (Artifact.Stale). Every manifest and
// blob is verified against its digest, from the registry or the cache; a
// mismatch is an error and nothing is returned.
func (f *Fetcher) Fetch(ctx context.Context, ref ociref.Ref, insecure bool) (*Artifact, error) {
	if err := ref.CheckTransport(insecure); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.bounds.Timeout)
	defer cancel()
	repo, err := remote.NewRepository(ref.Registry + "/" + ref.Repository)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	repo.PlainHTTP = ref.PlainHTTP()
	repo.MaxMetadataBytes = f.bounds.Manifest
	repo.Client = &auth.Client{Client: f.http, Cache: auth.NewCache(), Header: http.Header{"User-Agent": {"agenthost"}}}
	g := &get{f: f, b: f.bounds, ref: ref, repo: repo}
	a, err := g.fetch(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return a, nil
}

// get is one Fetch.
type get struct {
	f     *Fetcher
	b     Bounds
	ref   ociref.Ref
	repo  *remote.Repository
	stale bool // the registry is unreachable: everything from the cache
}

func (g *get) fetch(ctx context.Context) (*Artifact, error) {
	dgst, data, err := g.top(ctx)
	if err != nil {
		return nil, err
	}
	a := &Artifact{Stale: g.stale}
	m, err := g.manifest(ctx, dgst, data, a)
	if err != nil {
		return nil, err
	}
	if err := g.module(ctx, m, a); err != nil {
		return nil, err
	}
	// The tag's digest is remembered only once all it names was fetched
	// and verified: a fallback to it finds everything in the cache.
	if g.ref.Digest == "" && !g.stale {
		g.f.cache.setTag(g.ref, dgst)
	}
	return a, nil
}

// top returns the manifest (or index) the ref names, verified.
func (g *get) top(ctx context.Context) (digest.Digest, []byte, error) {
	if g.ref.Digest != "" {
		d := digest.Digest(g.ref.Digest)
		data, err := g.f.cache.read(d, g.b.Manifest)
		if err == nil || !errors.Is(err, errNotCached) {
			return d, data, err
		}
		desc, data, err := oras.FetchBytes(ctx, g.repo, g.ref.Digest, oras.FetchBytesOptions{MaxBytes: g.b.Manifest})
		if err != nil {
			return "", nil, reachErr(err)
		}
		if desc.Digest != d {
			return "", nil, fmt.Errorf("the registry answered %s for %s; refused", desc.Digest, d)
		}
		g.f.cache.write(d, data)
		return d, data, nil
	}
	desc, data, err := oras.FetchBytes(ctx, g.repo, g.ref.Tag, oras.FetchBytesOptions{MaxBytes: g.b.Manifest})
	if err != nil {
		if !unreachable(err) {
			return "", nil, reachErr(err)
		}
		d := g.f.cache.tag(g.ref)
		if d == "" {
			return "", nil, fmt.Errorf("%w, and the tag was never resolved here (nothing cached to run)", reachErr(err))
		}
		g.stale = true
		data, err := g.f.cache.read(d, g.b.Manifest)
		if err != nil {
			return "", nil, fmt.Errorf("%w; and its last digest %s: %w", reachErr(err), d, err)
		}
		return d, data, nil
	}
	// FetchBytes verified data against desc, whose digest is the
	// registry's Docker-Content-Digest or, without one, data's own.
	if err := desc.Digest.Validate(); err != nil || desc.Digest.Algorithm() != digest.SHA256 {
		return "", nil, fmt.Errorf("the registry gave the digest %q, not a sha256 digest", desc.Digest)
	}
	g.f.cache.write(desc.Digest, data)
	return desc.Digest, data, nil
}

// manifest reads the image manifest of data (digest d): data itself, or,
// for an index, the manifest it holds for WebAssembly.
func (g *get) manifest(ctx context.Context, d digest.Digest, data []byte, a *Artifact) (*ocispec.Manifest, error) {
	var head struct {
		MediaType string            `json:"mediaType"`
		Manifests []json.RawMessage `json:"manifests"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("manifest %s is not JSON: %w", d, err)
	}
	if head.MediaType == ocispec.MediaTypeImageIndex || head.MediaType == mediaTypeDockerList || head.MediaType == "" && head.Manifests != nil {
		var idx ocispec.Index
		if err := json.Unmarshal(data, &idx); err != nil {
			return nil, fmt.Errorf("index %s: %w", d, err)
		}
		desc, err := pickManifest(idx, g.b.Layers)
		if err != nil {
			return nil, fmt.Errorf("index %s: %w", d, err)
		}
		a.Index = d
		if data, err = g.blob(ctx, desc, g.b.Manifest, true); err != nil {
			return nil, err
		}
		d = desc.Digest
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", d, err)
	}
	switch m.MediaType {
	case ocispec.MediaTypeImageManifest, mediaTypeDockerManifest, "":
	default:
		return nil, fmt.Errorf("manifest %s has media type %q, not an image manifest", d, m.MediaType)
	}
	if len(m.Layers) == 0 || len(m.Layers) > g.b.Layers {
		return nil, fmt.Errorf("manifest %s has %d layers; a plugin has 1 to %d", d, len(m.Layers), g.b.Layers)
	}
	a.Manifest = d
	return &m, nil
}

// pickManifest chooses the manifest of an index that holds the module:
// the one for the wasm architecture or a wasi OS, else the only one that
// is not an attestation (platform unknown/unknown).
func pickManifest(idx ocispec.Index, max int) (ocispec.Descriptor, error) {
	if len(idx.Manifests) == 0 || len(idx.Manifests) > max {
		return ocispec.Descriptor{}, fmt.Errorf("%d manifests; an index of a plugin has 1 to %d", len(idx.Manifests), max)
	}
	var others []ocispec.Descriptor
	for _, m := range idx.Manifests {
		p := m.Platform
		switch {
		case p != nil && (p.Architecture == "wasm" || p.OS == "wasip1" || p.OS == "wasip2" || p.OS == "wasi"):
			return m, nil
		case p != nil && p.Architecture == "unknown" && p.OS == "unknown":
		default:
			others = append(others, m)
		}
	}
	if len(others) != 1 {
		return ocispec.Descriptor{}, fmt.Errorf("no manifest for platform wasm among %d", len(idx.Manifests))
	}
	return others[0], nil
}

// blob returns the blob desc names, verified: from the cache, or from
// the registry (and then kept) unless the registry is unreachable. A blob
// over max bytes is refused before it is read.
func (g *get) blob(ctx context.Context, desc ocispec.Descriptor, max int64, manifest bool) ([]byte, error) {
	if err := desc.Digest.Validate(); err != nil || desc.Digest.Algorithm() != digest.SHA256 {
		return nil, fmt.Errorf("descriptor digest %q is not a sha256 digest", desc.Digest)
	}
	if desc.Size < 0 || desc.Size > max {
		return nil, fmt.Errorf("%s is %d bytes; at most %d are read", desc.Digest, desc.Size, max)
	}
	data, err := g.f.cache.read(desc.Digest, max)
	if err == nil || !errors.Is(err, errNotCached) {
		if err == nil && int64(len(data)) != desc.Size {
			err = fmt.Errorf("cached %s is %d bytes, its descriptor says %d", desc.Digest, len(data), desc.Size)
		}
		return data, err
	}
	if g.stale {
		return nil, fmt.Errorf("%s is not in the cache and the registry is unreachable", desc.Digest)
	}
	var fetch func(context.Context, ocispec.Descriptor) (io.ReadCloser, error)
	if manifest {
		fetch = func(ctx context.Context, d ocispec.Descriptor) (io.ReadCloser, error) {
			return g.repo.Manifests().Fetch(ctx, d)
		}
	} else {
		fetch = func(ctx context.Context, d ocispec.Descriptor) (io.ReadCloser, error) {
			return g.repo.Blobs().Fetch(ctx, d)
		}
	}
	rc, err := fetch(ctx, desc)
	if err != nil {
		return nil, reachErr(err)
	}
	defer rc.Close()
	// ReadAll reads exactly desc.Size bytes and checks their digest.
	data, err = content.ReadAll(rc, desc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", desc.Digest, err)
	}
	g.f.cache.write(desc.Digest, data)
	return data, nil
}

// Media types of Docker's manifests, which oras-go's ocispec does not name.
const (
	mediaTypeDockerManifest = "application/vnd.docker.distribution.manifest.v2+json"
	mediaTypeDockerList     = "application/vnd.docker.distribution.manifest.list.v2+json"
)

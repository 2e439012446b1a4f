package ociget

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/agenthost/agenthost/internal/ociref"
)

// The tests run a real registry (go-containerregistry's, in memory) on
// loopback, behind a switch that can make it fail, lie or hang.

// testRegistry is a registry on loopback; mode is "" (serve), "down"
// (500 to everything), "gone" (404), or "hang" (wait for the client to
// give up).
type testRegistry struct {
	srv  *httptest.Server
	mode atomic.Value
	host string
}

func startRegistry(t *testing.T) *testRegistry {
	t.Helper()
	r := &testRegistry{}
	r.mode.Store("")
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch r.mode.Load().(string) {
		case "down":
			http.Error(w, "down", http.StatusInternalServerError)
		case "gone":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"gone"}]}`)
		case "hang":
			<-req.Context().Done()
		default:
			reg.ServeHTTP(w, req)
		}
	}))
	t.Cleanup(r.srv.Close)
	u, _ := url.Parse(r.srv.URL)
	r.host = u.Host
	return r
}

func (r *testRegistry) repo(t *testing.T, name string) *remote.Repository {
	t.Helper()
	repo, err := remote.NewRepository(r.host + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	return repo
}

// push pushes blobs and a manifest (tagged tag) and returns the
// manifest's digest.
func push(t *testing.T, repo *remote.Repository, tag string, manifest any, blobs ...[]byte) digest.Digest {
	t.Helper()
	ctx := context.Background()
	for _, b := range blobs {
		d := content.NewDescriptorFromBytes("application/octet-stream", b)
		if err := repo.Blobs().Push(ctx, d, bytes.NewReader(b)); err != nil && !strings.Contains(err.Error(), "exists") {
			t.Fatal(err)
		}
	}
	data, err := json.Marshal(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		MediaType string `json:"mediaType"`
	}
	json.Unmarshal(data, &head)
	d := content.NewDescriptorFromBytes(head.MediaType, data)
	if err := repo.PushReference(ctx, d, bytes.NewReader(data), tag); err != nil {
		t.Fatal(err)
	}
	return d.Digest
}

func desc(mediaType string, b []byte) ocispec.Descriptor {
	return content.NewDescriptorFromBytes(mediaType, b)
}

var (
	module = append([]byte("\x00asm\x01\x00\x00\x00"), bytes.Repeat([]byte("code"), 100)...)
	empty  = []byte("{}")
)

func manifest(artifactType string, config ocispec.Descriptor, layers ...ocispec.Descriptor) ocispec.Manifest {
	m := ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest, ArtifactType: artifactType, Config: config, Layers: layers}
	m.SchemaVersion = 2
	return m
}

// tarGz is an image layer holding files (name, bytes, ...).
func tarGz(t *testing.T, files ...any) []byte {
	t.Helper()
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	for i := 0; i < len(files); i += 2 {
		data := files[i+1].([]byte)
		if err := tw.WriteHeader(&tar.Header{Name: files[i].(string), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(data)
	}
	tw.Close()
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(tb.Bytes())
	zw.Close()
	return zb.Bytes()
}

func ref(t *testing.T, s string) ociref.Ref {
	t.Helper()
	r, err := ociref.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestLayouts fetches a module published in each layout the issue lists,
// and from an index that holds an attestation beside the image.
func TestLayouts(t *testing.T) {
	reg := startRegistry(t)
	img := tarGz(t, "etc/README", []byte("x"), "plugin.wasm", module)
	imgCfg := []byte(`{"architecture":"wasm","os":"wasip1"}`)
	wasmCfg := []byte(`{"architecture":"wasm","os":"wasip2"}`)
	dockerImg := ocispec.Manifest{MediaType: mediaTypeDockerManifest, Config: desc("application/vnd.docker.container.image.v1+json", imgCfg),
		Layers: []ocispec.Descriptor{desc("application/vnd.docker.image.rootfs.diff.tar.gzip", img)}}
	dockerImg.SchemaVersion = 2
	for _, tc := range []struct {
		name, layout string
		m            any
		blobs        [][]byte
	}{
		{"hyper", "hyper-mcp artifact", manifest(artifactHyperMCP, ocispec.DescriptorEmptyJSON, desc("application/wasm", module)), [][]byte{empty, module}},
		{"image", "image", manifest("", desc(ocispec.MediaTypeImageConfig, imgCfg), desc(ocispec.MediaTypeImageLayerGzip, img)), [][]byte{imgCfg, img}},
		{"docker", "image", dockerImg, [][]byte{imgCfg, img}},
		{"cncf", "wasm artifact", manifest("", desc(configWasm, wasmCfg), desc("application/wasm", module)), [][]byte{wasmCfg, module}},
		{"component", "wasm artifact", manifest("", desc(configWasm, wasmCfg), desc("application/vnd.wasm.component.v1", module)), [][]byte{wasmCfg, module}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := New(t.TempDir())
			d := push(t, reg.repo(t, "p/"+tc.name), "1", tc.m, tc.blobs...)
			a, err := f.Fetch(context.Background(), ref(t, "oci://"+reg.host+"/p/"+tc.name+":1"), false)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Wasm, module) || a.Manifest != d || a.Layout != tc.layout || a.Stale {
				t.Errorf("got %d bytes, manifest %s (want %s), layout %q, stale %v", len(a.Wasm), a.Manifest, d, a.Layout, a.Stale)
			}
		})
	}
	t.Run("index", func(t *testing.T) {
		repo := reg.repo(t, "p/index")
		m := manifest("", desc(ocispec.MediaTypeImageConfig, imgCfg), desc(ocispec.MediaTypeImageLayerGzip, img))
		md := push(t, repo, "img", m, imgCfg, img)
		att := manifest("", desc(ocispec.MediaTypeImageConfig, empty), desc("application/vnd.in-toto+json", empty))
		ad := push(t, repo, "att", att, empty)
		mb, _ := json.Marshal(m)
		ab, _ := json.Marshal(att)
		idx := ocispec.Index{MediaType: ocispec.MediaTypeImageIndex, Manifests: []ocispec.Descriptor{
			{MediaType: ocispec.MediaTypeImageManifest, Digest: ad, Size: int64(len(ab)), Platform: &ocispec.Platform{OS: "unknown", Architecture: "unknown"}},
			{MediaType: ocispec.MediaTypeImageManifest, Digest: md, Size: int64(len(mb)), Platform: &ocispec.Platform{OS: "wasip1", Architecture: "wasm"}},
		}}
		idx.SchemaVersion = 2
		id := push(t, repo, "1", idx)
		a, err := New(t.TempDir()).Fetch(context.Background(), ref(t, "oci://"+reg.host+"/p/index:1"), false)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Wasm, module) || a.Manifest != md || a.Index != id {
			t.Errorf("got manifest %s index %s, want %s %s", a.Manifest, a.Index, md, id)
		}
	})
}

// TestBounds: what a hostile registry controls is bounded, each refusal
// saying which bound.
func TestBounds(t *testing.T) {
	reg := startRegistry(t)
	small := DefaultBounds
	small.Wasm, small.Expanded, small.Entries, small.Manifest, small.Layers = 100, 1<<20, 10, 2000, 3
	many := make([]ocispec.Descriptor, 4)
	for i := range many {
		many[i] = desc("application/wasm", []byte{byte(i)})
	}
	var files []any
	for i := 0; i < 11; i++ {
		files = append(files, fmt.Sprintf("f%d", i), []byte{})
	}
	bomb := tarGz(t, "zeros", make([]byte, 2<<20), "plugin.wasm", module[:50])
	entries := tarGz(t, files...)
	big := tarGz(t, "plugin.wasm", module)
	for _, tc := range []struct {
		name  string
		m     ocispec.Manifest
		blobs [][]byte
		want  string
	}{
		{"layers", manifest(artifactHyperMCP, ocispec.DescriptorEmptyJSON, many...), nil, "has 4 layers; a plugin has 1 to 3"},
		{"wasm", manifest(artifactHyperMCP, ocispec.DescriptorEmptyJSON, desc("application/wasm", module)), [][]byte{module}, "is 408 bytes; at most 100 are read"},
		{"expanded", manifest("", ocispec.DescriptorEmptyJSON, desc(ocispec.MediaTypeImageLayerGzip, bomb)), [][]byte{bomb}, "layer too large: expands to more than 1048576 bytes"},
		{"entries", manifest("", ocispec.DescriptorEmptyJSON, desc(ocispec.MediaTypeImageLayerGzip, entries)), [][]byte{entries}, "layer too large: more than 10 entries"},
		{"file", manifest("", ocispec.DescriptorEmptyJSON, desc(ocispec.MediaTypeImageLayerGzip, big)), [][]byte{big}, "/plugin.wasm is 408 bytes; at most 100 are read"},
		{"manifest", manifest("", ocispec.DescriptorEmptyJSON, desc("application/wasm", bytes.Repeat([]byte("x"), 3000))), nil, "exceeds"},
		{"no wasm", manifest("", ocispec.DescriptorEmptyJSON, desc("text/plain", []byte("hi"))), nil, "no WebAssembly layer (application/wasm) and no image layer holding /plugin.wasm; its layers are text/plain"},
		{"two wasm", manifest("", ocispec.DescriptorEmptyJSON, desc("application/wasm", []byte{1}), desc("application/wasm", []byte{2})), nil, "has 2 WebAssembly layers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			if tc.name == "manifest" {
				m.Annotations = map[string]string{"pad": strings.Repeat("x", 3000)}
			}
			push(t, reg.repo(t, "b/"+strings.ReplaceAll(tc.name, " ", "")), "1", m, tc.blobs...)
			_, err := newFetcher(t.TempDir(), small).Fetch(context.Background(), ref(t, "oci://"+reg.host+"/b/"+strings.ReplaceAll(tc.name, " ", "")+":1"), false)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("timeout", func(t *testing.T) {
		hang := startRegistry(t)
		hang.mode.Store("hang")
		b := DefaultBounds
		b.Timeout = 200 * time.Millisecond
		_, err := newFetcher(t.TempDir(), b).Fetch(context.Background(), ref(t, "oci://"+hang.host+"/x:1"), false)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "could not be reached") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("redirects", func(t *testing.T) {
		var n atomic.Int32
		loop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
		}))
		defer loop.Close()
		u, _ := url.Parse(loop.URL)
		_, err := New(t.TempDir()).Fetch(context.Background(), ref(t, "oci://"+u.Host+"/x:1"), false)
		if err == nil || !strings.Contains(err.Error(), "more than 5 redirects") || n.Load() != 6 {
			t.Errorf("err = %v after %d requests", err, n.Load())
		}
		check := New("").http.CheckRedirect
		from, _ := http.NewRequest("GET", "https://r.example/v2/", nil)
		to, _ := http.NewRequest("GET", "http://cdn.example/blob", nil)
		if err := check(to, []*http.Request{from}); err == nil || !strings.Contains(err.Error(), "redirect from TLS to http://cdn.example/blob refused") {
			t.Errorf("https → http redirect: %v", err)
		}
	})
}

// TestTransport: plain HTTP off loopback is refused before anything is
// contacted (the check is ociref's, applied again here).
func TestTransport(t *testing.T) {
	var n atomic.Int32
	f := New(t.TempDir())
	f.http.Transport = roundTripFunc(func(*http.Request) (*http.Response, error) {
		n.Add(1)
		return nil, errors.New("contacted")
	})
	_, err := f.Fetch(context.Background(), ref(t, "oci+http://registry.example.invalid/x:1"), false)
	if !errors.Is(err, ociref.ErrPlainRemote) || n.Load() != 0 {
		t.Errorf("err = %v after %d requests", err, n.Load())
	}
	_, err = f.Fetch(context.Background(), ref(t, "oci+http://registry.example.invalid/x:1"), true)
	if err == nil || !strings.Contains(err.Error(), "contacted") || n.Load() == 0 {
		t.Errorf("insecure: err = %v after %d requests", err, n.Load())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestCache: a digest runs from the cache without the registry; a tag
// falls back to its last digest only when the registry cannot answer (a
// server error, or down), never when it says the tag is gone; whatever
// does not match its digest, cached or served, is refused.
func TestCache(t *testing.T) {
	reg := startRegistry(t)
	dir := t.TempDir()
	m := manifest(artifactHyperMCP, ocispec.DescriptorEmptyJSON, desc("application/wasm", module))
	d := push(t, reg.repo(t, "c/p"), "1", m, empty, module)
	ctx := context.Background()
	tag, pinned := ref(t, "oci://"+reg.host+"/c/p:1"), ref(t, "oci://"+reg.host+"/c/p@"+d.String())
	for _, r := range []ociref.Ref{tag, pinned} {
		if _, err := New(dir).Fetch(ctx, r, false); err != nil {
			t.Fatal(err)
		}
	}

	reg.mode.Store("down") // a server error: the tag's last digest, said so
	a, err := New(dir).Fetch(ctx, tag, false)
	if err != nil || !a.Stale || a.Manifest != d || !bytes.Equal(a.Wasm, module) {
		t.Fatalf("tag, registry failing: %v, %+v", err, a)
	}
	if a, err := New(dir).Fetch(ctx, pinned, false); err != nil || a.Stale {
		t.Fatalf("digest, registry failing: %v", err)
	}
	reg.mode.Store("gone") // the registry answers: no fallback
	if _, err := New(dir).Fetch(ctx, tag, false); err == nil || !strings.Contains(err.Error(), "not found in the registry") {
		t.Errorf("tag gone: %v", err)
	}
	reg.srv.Close() // down
	if a, err := New(dir).Fetch(ctx, tag, false); err != nil || !a.Stale {
		t.Errorf("tag, registry down: %v", err)
	}
	if _, err := New(t.TempDir()).Fetch(ctx, tag, false); err == nil || !strings.Contains(err.Error(), "never resolved here") {
		t.Errorf("tag, registry down, empty cache: %v", err)
	}

	// a cached blob changed: refused, not fetched again
	blob := filepath.Join(dir, "blobs", "sha256", digest.FromBytes(module).Encoded())
	if err := os.WriteFile(blob, []byte("\x00asm\x01\x00\x00\x00evil"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(dir).Fetch(ctx, pinned, false); err == nil || !strings.Contains(err.Error(), "does not match its digest") {
		t.Errorf("changed blob: %v", err)
	}
}

// TestServedMismatch: a registry that serves other bytes than the digest
// asked for is refused.
func TestServedMismatch(t *testing.T) {
	evil := []byte("\x00asm\x01\x00\x00\x00evil")
	m := manifest(artifactHyperMCP, ocispec.DescriptorEmptyJSON, desc("application/wasm", module))
	mb, _ := json.Marshal(m)
	md := digest.FromBytes(mb)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.Contains(r.URL.Path, "/manifests/"):
			w.Header().Set("Content-Type", ocispec.MediaTypeImageManifest)
			w.Header().Set("Docker-Content-Digest", md.String())
			w.Write(mb)
		case strings.Contains(r.URL.Path, "/blobs/"):
			w.Write(append(evil, bytes.Repeat([]byte{0}, len(module)-len(evil))...))
		default:
			w.WriteHeader(http.StatusOK)
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	dir := t.TempDir()
	_, err := New(dir).Fetch(context.Background(), ref(t, "oci://"+u.Host+"/x@"+md.String()), false)
	if err == nil || !strings.Contains(err.Error(), "mismatch") {
		t.Errorf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "blobs", "sha256", digest.FromBytes(module).Encoded())); !os.IsNotExist(err) {
		t.Errorf("the refused blob was cached: %v", err)
	}
}

// TestTagRememberedWhole: a tag's digest is remembered only when all it
// names was fetched and verified, so a fallback never meets a manifest
// whose module was refused.
func TestTagRememberedWhole(t *testing.T) {
	reg := startRegistry(t)
	dir := t.TempDir()
	small := DefaultBounds
	small.Wasm = 100
	push(t, reg.repo(t, "w/p"), "1", manifest(artifactHyperMCP, ocispec.DescriptorEmptyJSON, desc("application/wasm", module)), empty, module)
	r := ref(t, "oci://"+reg.host+"/w/p:1")
	if _, err := newFetcher(dir, small).Fetch(context.Background(), r, false); err == nil {
		t.Fatal("a module over the bound was fetched")
	}
	reg.mode.Store("down")
	if _, err := New(dir).Fetch(context.Background(), r, false); err == nil || !strings.Contains(err.Error(), "never resolved here") {
		t.Errorf("err = %v", err)
	}
}

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/registry"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/rogpeppe/go-internal/testscript"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/agenthost/agenthost/plugins"
)

// registries are the registries the scripts started, by script and name.
var registries sync.Map // registryKey → *httptest.Server

type registryKey struct {
	ts   *testscript.TestScript
	name string
}

// cmdRegistry runs a real OCI registry (go-containerregistry's
// pkg/registry, in memory) on loopback for a script, and pushes plugins
// to it the ways their authors publish them:
//
//	registry start NAME              serve; $NAME is its HOST:PORT
//	registry stop NAME               stop it (the port then refuses connections)
//	registry push LAYOUT FILE REF    push FILE (a .wasm, or builtin:NAME) to REF (HOST:PORT/REPO:TAG)
//
// LAYOUT is hyper-mcp (an ORAS artifact of type
// application/vnd.hyper-mcp.plugin.v2, empty config, one application/wasm
// layer), image (an OCI image FROM scratch: /plugin.wasm in a tar.gz
// layer), wasm (the CNCF layout: config application/vnd.wasm.config.v0+json,
// one application/wasm layer) or component (the CNCF layout with an
// application/vnd.wasm.component.v1 layer). push sets $PUSHED_MANIFEST to
// the manifest's digest, $PUSHED_MANIFEST_HEX and $PUSHED_LAYER_HEX to the
// hex of the manifest's and of the layer's sha256 (their file names in the
// registry cache).
func cmdRegistry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: registry start|stop NAME | registry push LAYOUT FILE REF")
	}
	switch {
	case args[0] == "start" && len(args) == 2:
		s := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
		registries.Store(registryKey{ts, args[1]}, s)
		ts.Defer(s.Close)
		ts.Setenv(args[1], strings.TrimPrefix(s.URL, "http://"))
	case args[0] == "stop" && len(args) == 2:
		s, ok := registries.LoadAndDelete(registryKey{ts, args[1]})
		if !ok {
			ts.Fatalf("registry %s is not running", args[1])
		}
		s.(*httptest.Server).Close()
	case args[0] == "push" && len(args) == 4:
		wasm, ok := plugins.Builtin(strings.TrimPrefix(args[2], "builtin:"))
		if !ok || !strings.HasPrefix(args[2], "builtin:") {
			var err error
			wasm, err = os.ReadFile(ts.MkAbs(args[2]))
			ts.Check(err)
		}
		m, layer, err := pushPlugin(context.Background(), args[1], wasm, args[3])
		ts.Check(err)
		ts.Setenv("PUSHED_MANIFEST", m.Digest.String())
		ts.Setenv("PUSHED_MANIFEST_HEX", m.Digest.Encoded())
		ts.Setenv("PUSHED_LAYER_HEX", layer.Digest.Encoded())
	default:
		ts.Fatalf("usage: registry start|stop NAME | registry push LAYOUT FILE REF")
	}
}

// pushPlugin pushes wasm to ref (plain HTTP: the registry is on loopback)
// in layout, and returns the manifest's descriptor and the layer's.
func pushPlugin(ctx context.Context, layout string, wasm []byte, ref string) (m, layer ocispec.Descriptor, err error) {
	repo, err := remote.NewRepository(ref)
	if err != nil {
		return m, layer, err
	}
	repo.PlainHTTP = true
	repo.Client = http.DefaultClient
	opts := oras.PackManifestOptions{}
	artifactType := ""
	var layerBytes []byte
	switch layout {
	case "hyper-mcp":
		artifactType = "application/vnd.hyper-mcp.plugin.v2"
		layer = content.NewDescriptorFromBytes("application/wasm", wasm)
		layerBytes = wasm
	case "wasm", "component":
		mt, osName := "application/wasm", "wasip1"
		if layout == "component" {
			mt, osName = "application/vnd.wasm.component.v1", "wasip2"
		}
		layer = content.NewDescriptorFromBytes(mt, wasm)
		layerBytes = wasm
		cfg, _ := json.Marshal(map[string]any{"architecture": "wasm", "os": osName, "layerDigests": []string{layer.Digest.String()}})
		c, err := pushBytes(ctx, repo, "application/vnd.wasm.config.v0+json", cfg)
		if err != nil {
			return m, layer, err
		}
		opts.ConfigDescriptor = &c
	case "image":
		tgz, diffID, err := pluginTarGz(wasm)
		if err != nil {
			return m, layer, err
		}
		layer = content.NewDescriptorFromBytes(ocispec.MediaTypeImageLayerGzip, tgz)
		layerBytes = tgz
		cfg, _ := json.Marshal(map[string]any{"architecture": "wasm", "os": "wasip1", "rootfs": map[string]any{"type": "layers", "diff_ids": []string{diffID}}})
		c, err := pushBytes(ctx, repo, ocispec.MediaTypeImageConfig, cfg)
		if err != nil {
			return m, layer, err
		}
		opts.ConfigDescriptor = &c
	default:
		return m, layer, errUsage("layout " + layout + ": want hyper-mcp, image, wasm or component")
	}
	if err := repo.Push(ctx, layer, bytes.NewReader(layerBytes)); err != nil {
		return m, layer, err
	}
	opts.Layers = []ocispec.Descriptor{layer}
	if m, err = oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, artifactType, opts); err != nil {
		return m, layer, err
	}
	return m, layer, repo.Tag(ctx, m, repo.Reference.Reference)
}

type errUsage string

func (e errUsage) Error() string { return string(e) }

func pushBytes(ctx context.Context, repo *remote.Repository, mediaType string, b []byte) (ocispec.Descriptor, error) {
	d := content.NewDescriptorFromBytes(mediaType, b)
	return d, repo.Push(ctx, d, bytes.NewReader(b))
}

// pluginTarGz is the layer of an image FROM scratch that copies the
// plugin to /plugin.wasm (with a README beside it, as such images have),
// and the sha256 of its tar (the image config's diff_id).
func pluginTarGz(wasm []byte) ([]byte, string, error) {
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	for _, f := range []struct {
		name string
		data []byte
	}{{"README.md", []byte("a plugin\n")}, {"plugin.wasm", wasm}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			return nil, "", err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, "", err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(tb.Bytes())
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(tb.Bytes())
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return zb.Bytes(), "sha256:" + hex.EncodeToString(sum[:]), nil
}

package ociget

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// The layouts a plugin is published in. A layer of a wasm media type is
// the module itself (hyper-mcp's ORAS artifact, the CNCF wasm layout); an
// image's tar layers hold it as /plugin.wasm (hyper-mcp's images FROM
// scratch).
const (
	artifactHyperMCP = "application/vnd.hyper-mcp.plugin.v2"
	configWasm       = "application/vnd.wasm.config.v0+json"
	pluginFile       = "plugin.wasm"
)

// wasmLayers are the media types of a layer that is the module.
var wasmLayers = map[string]bool{
	"application/wasm":                           true,
	"application/vnd.wasm.component.v1":          true,
	"application/vnd.wasm.content.layer.v1+wasm": true, // wasm-to-oci, before the CNCF layout
}

// tarLayers are the media types of an image's file system layers, and
// whether each is gzipped.
var tarLayers = map[string]bool{
	ocispec.MediaTypeImageLayerGzip:                     true,
	"application/vnd.docker.image.rootfs.diff.tar.gzip": true,
	ocispec.MediaTypeImageLayer:                         false,
	"application/vnd.docker.image.rootfs.diff.tar":      false,
}

// module sets a.Wasm and a.Layout from manifest m.
func (g *get) module(ctx context.Context, m *ocispec.Manifest, a *Artifact) error {
	var wasm []ocispec.Descriptor
	var tars []ocispec.Descriptor
	for _, l := range m.Layers {
		if wasmLayers[l.MediaType] {
			wasm = append(wasm, l)
		} else if _, ok := tarLayers[l.MediaType]; ok {
			tars = append(tars, l)
		}
	}
	switch {
	case len(wasm) > 1:
		return fmt.Errorf("manifest %s has %d WebAssembly layers; a plugin artifact has one", a.Manifest, len(wasm))
	case len(wasm) == 1:
		a.Layout = "wasm artifact"
		if m.ArtifactType == artifactHyperMCP {
			a.Layout = "hyper-mcp artifact"
		} else if m.Config.MediaType != configWasm {
			a.Layout = "artifact"
		}
		b, err := g.blob(ctx, wasm[0], g.b.Wasm, false)
		a.Wasm = b
		return err
	case len(tars) > 0:
		a.Layout = "image"
		// The last layer that has the file decides, as in the image's
		// file system.
		for i := len(tars) - 1; i >= 0; i-- {
			b, err := g.blob(ctx, tars[i], g.b.Layer, false)
			if err != nil {
				return err
			}
			w, err := fromTar(b, tarLayers[tars[i].MediaType], g.b)
			if err != nil {
				return fmt.Errorf("layer %s: %w", tars[i].Digest, err)
			}
			if w != nil {
				a.Wasm = w
				return nil
			}
		}
		return fmt.Errorf("image %s has no /%s in its layers; an image plugin holds its module there", a.Manifest, pluginFile)
	}
	types := make([]string, len(m.Layers))
	for i, l := range m.Layers {
		types[i] = l.MediaType
	}
	return fmt.Errorf("manifest %s has no WebAssembly layer (application/wasm) and no image layer holding /%s; its layers are %s", a.Manifest, pluginFile, strings.Join(types, ", "))
}

// errTooBig is a tar stream over its bounds.
var errTooBig = errors.New("layer too large")

// fromTar returns the bytes of /plugin.wasm in a tar layer (gzipped or
// not), or nil when it has none; the expanded stream, its entries and the
// file are bounded (b.Expanded, b.Entries, b.Wasm).
func fromTar(layer []byte, gz bool, b Bounds) ([]byte, error) {
	var r io.Reader = bytes.NewReader(layer)
	if gz {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	}
	lr := &io.LimitedReader{R: r, N: b.Expanded + 1}
	tr := tar.NewReader(lr)
	var found []byte
	for n := 0; ; n++ {
		if n > b.Entries {
			return nil, fmt.Errorf("%w: more than %d entries", errTooBig, b.Entries)
		}
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if lr.N <= 0 {
				return nil, fmt.Errorf("%w: expands to more than %d bytes", errTooBig, b.Expanded)
			}
			return nil, err
		}
		name := path.Clean("/" + h.Name)
		if name == "/.wh."+pluginFile {
			found = nil // deleted by this layer
			continue
		}
		if name != "/"+pluginFile {
			continue
		}
		if h.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("/%s is not a regular file", pluginFile)
		}
		if h.Size > b.Wasm {
			return nil, fmt.Errorf("/%s is %d bytes; at most %d are read", pluginFile, h.Size, b.Wasm)
		}
		found = make([]byte, h.Size)
		if _, err := io.ReadFull(tr, found); err != nil {
			return nil, err
		}
	}
	return found, nil
}

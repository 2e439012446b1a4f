// Package ociget fetches a plugin's WebAssembly from an OCI registry, for
// a plugin block whose source is oci://... (internal/ociref), and keeps
// what it fetched in a content-addressed cache. It speaks to the registry
// through oras-go; it knows the artifact layouts plugins are published in
// (hyper-mcp's ORAS artifact, a Docker or OCI image FROM scratch holding
// /plugin.wasm, the CNCF wasm layout), bounds everything a registry
// controls (sizes, layers, redirects, time), and verifies the sha256 of
// every manifest and blob it reads, from the registry or from the cache.
// It returns the module's bytes and the manifest digest they came from;
// host/plugin loads those bytes as it loads a file.
package ociget

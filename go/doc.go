// Package acpengine is the Go binding of acp-engine: the Agent Client
// Protocol (ACP) over the engine's C library (libacp_engine, found with
// pkg-config), which does the framing, validation, ordering, cancellation
// and lifecycle; this package converts between Go and the engine.
//
// An agent implements Agent (and any optional handler interface, such as
// LoadSessionHandler) and serves it with RunAgent; a client implements
// Client and starts its agent with SpawnAgent. Every method takes a
// context.Context: cancelling it cancels the request on the peer
// ($/cancel_request), and a handler's ctx is cancelled when the peer
// cancels its request or the connection closes. Errors from the peer are
// *RequestError values carrying the JSON-RPC code.
//
// The protocol types (schema_gen.go) and the method table (methods_gen.go)
// are generated from the official ACP schema by tools/codegen/gen_go.py.
package acpengine

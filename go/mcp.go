package acpengine

// MCP-over-ACP (unstable): MCP servers one side offers the other over the
// ACP connection itself (MCP 2026-07-28 carried in `mcp/message`), named as
// the official TypeScript SDK names them (McpOverAcpProvider,
// McpOverAcpCaller). The binding's rules (envelope, request meta, outcome
// carriers, duplicate ids, per-server limits, error mapping) are the
// engine's (acp_mcp_* in the C library); this file runs the Go handlers.
// Both connections need Options.Unstable.

/*
#include <stdlib.h>
#include "bridge.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"sync"

	json "github.com/goccy/go-json"
)

// McpProtocolError is an inner MCP error a server handler returns: it is
// answered inside a successful ACP response's `error` carrier, for the MCP
// client to see (an unknown tool, say). Any other error is an outer ACP
// error (-33002, or -32800 once cancelled).
type McpProtocolError struct {
	Code    int64
	Message string
	Data    any
}

func (e *McpProtocolError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// McpError is an inner MCP error an McpOverAcpCaller received.
type McpError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// McpOutcome is an MCP request's answer: its Result, or its Error.
type McpOutcome struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *McpError       `json:"error,omitempty"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// McpNotification is an MCP notification scoped to a running request
// (progress, say), as an McpOverAcpCaller's listener gets it.
type McpNotification struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// McpOperationContext is what a server handler gets for one MCP request.
type McpOperationContext struct {
	ServerID           string          `json:"serverId"`
	RequestID          string          `json:"requestId"`
	Method             string          `json:"method"`
	Params             json.RawMessage `json:"params,omitempty"`
	ProtocolVersion    string          `json:"protocolVersion"`
	ClientCapabilities json.RawMessage `json:"clientCapabilities"`
	ClientInfo         json.RawMessage `json:"clientInfo,omitempty"`
	EnvelopeMeta       json.RawMessage `json:"envelopeMeta,omitempty"`

	operation *C.acp_mcp_operation
	conn      *Conn
}

// Notify sends an MCP notification scoped to this request (dropped once
// the request finished). params is any value encoding/json writes (nil:
// none).
func (c *McpOperationContext) Notify(ctx context.Context, method string, params any) error {
	body, err := optionalJSON(params)
	if err != nil {
		return err
	}
	methodText := cString(method)
	var out *C.char
	C.acp_mcp_operation_notification(c.operation, cPtr(methodText), cPtr(body), &out)
	if out == nil {
		return nil
	}
	notification := goBytes(out)
	C.acp_string_free(out)
	return c.conn.Notify(ctx, MethodMcpMessage, json.RawMessage(notification))
}

// McpHandler serves one MCP server: the MCP result of a request (any value
// encoding/json writes), or an error (*McpProtocolError for an inner MCP
// error). ctx is cancelled when the caller cancels the request, the
// registration is disposed or the connection closes.
type McpHandler func(ctx context.Context, operation *McpOperationContext) (any, error)

// McpServerOptions are a registration's settings; nil means the defaults.
type McpServerOptions struct {
	// ServerID is the server's id ("": a fresh one).
	ServerID string
	// MaxActiveRequests bounds the requests it runs at once (0: the
	// engine's default, 64); more are answered -33000.
	MaxActiveRequests int
}

// McpServerRegistration is a registered server: publish its Declaration
// in a session's McpServers.
type McpServerRegistration struct {
	Name        string
	ServerID    string
	declaration json.RawMessage
	release     func()
}

// Declaration is `{"type": "acp", "name", "serverId"}`.
func (r *McpServerRegistration) Declaration() McpServer {
	return McpServer{Unknown: r.declaration}
}

// Dispose removes the registration: later requests get -33001; running
// handlers see their ctx cancelled, and Dispose returns once they did.
func (r *McpServerRegistration) Dispose() { r.release() }

// McpServerAcp is a session's MCP server offered over ACP, as
// McpServerAcpOf reads it.
type McpServerAcp struct {
	Name     string `json:"name"`
	ServerID string `json:"serverId"`
}

// McpServerAcpOf is server when it is offered over ACP (`"type": "acp"`).
func McpServerAcpOf(server McpServer) (McpServerAcp, bool) {
	var acp McpServerAcp
	if server.Unknown == nil || !C.acp_mcp_server_is_acp(cPtr(cString(string(server.Unknown)))) || json.Unmarshal(server.Unknown, &acp) != nil {
		return McpServerAcp{}, false
	}
	return acp, true
}

// mcpServer is a registered server's handler and what it runs.
type mcpServer struct {
	handler McpHandler
	ctx     context.Context
	cancel  context.CancelFunc
	running sync.WaitGroup
}

// mcpProviderState is one connection's provider in the engine and its servers.
type mcpProviderState struct {
	// live guards provider: calls hold it for reading; the connection's
	// close frees the provider holding it for writing, and sets it nil.
	live     sync.RWMutex
	provider *C.acp_mcp_provider
	mu       sync.Mutex
	servers  map[string]*mcpServer
}

// withProvider runs call with the engine's provider, unless the
// connection closed and freed it (then it returns false).
func (s *mcpProviderState) withProvider(call func(provider *C.acp_mcp_provider)) bool {
	s.live.RLock()
	defer s.live.RUnlock()
	if s.provider == nil {
		return false
	}
	call(s.provider)
	return true
}

// McpOverAcpProvider serves MCP servers to an ACP peer over `mcp/message`;
// one per program. A client answers MethodMcpMessage requests (in its
// ExtMethod) with HandleRequest.
type McpOverAcpProvider struct {
	mu     sync.Mutex
	states map[*Conn]*mcpProviderState
}

// NewMcpOverAcpProvider is a provider with no servers.
func NewMcpOverAcpProvider() *McpOverAcpProvider {
	return &McpOverAcpProvider{states: map[*Conn]*mcpProviderState{}}
}

// stateOf is conn's state, made on first use and freed when conn closes.
func (p *McpOverAcpProvider) stateOf(conn *Conn) *mcpProviderState {
	p.mu.Lock()
	defer p.mu.Unlock()
	if state, ok := p.states[conn]; ok {
		return state
	}
	state := &mcpProviderState{provider: C.acp_mcp_provider_new(), servers: map[string]*mcpServer{}}
	p.states[conn] = state
	go func() {
		<-conn.Done()
		p.mu.Lock()
		delete(p.states, conn)
		p.mu.Unlock()
		state.mu.Lock()
		for _, server := range state.servers {
			server.cancel()
		}
		state.mu.Unlock()
		// Operations hold the engine's provider alive; this releases ours.
		state.live.Lock()
		C.acp_mcp_provider_free(state.provider)
		state.provider = nil
		state.live.Unlock()
	}()
	return state
}

// RegisterServer registers a server named name on conn, served by handler;
// it is ready at once (publish its declaration afterwards). An id already
// registered on conn is an error.
func (p *McpOverAcpProvider) RegisterServer(conn *Conn, name string, handler McpHandler, options *McpServerOptions) (*McpServerRegistration, error) {
	if options == nil {
		options = &McpServerOptions{}
	}
	if options.MaxActiveRequests < 0 {
		return nil, errors.New("acpengine: MaxActiveRequests must not be negative")
	}
	state := p.stateOf(conn)
	nameText := cString(name)
	var idText []byte
	if options.ServerID != "" {
		idText = cString(options.ServerID)
	}
	var out, declaration *C.char
	text := takeErrorText()
	defer text.release()
	rc := C.acp_result(C.ACP_ERR_CLOSED)
	state.withProvider(func(provider *C.acp_mcp_provider) {
		rc = C.acp_go_mcp_register(provider, cPtr(nameText), cPtr(idText), C.uint32_t(options.MaxActiveRequests), &out, &declaration, text.ptr(), text.size())
	})
	if rc != C.ACP_OK {
		return nil, failure(rc, text)
	}
	serverID := C.GoString(out)
	C.acp_string_free(out)
	registration := &McpServerRegistration{Name: name, ServerID: serverID, declaration: goBytes(declaration)}
	C.acp_string_free(declaration)
	server := &mcpServer{handler: handler}
	server.ctx, server.cancel = context.WithCancel(context.Background())
	state.mu.Lock()
	state.servers[serverID] = server
	state.mu.Unlock()
	registration.release = sync.OnceFunc(func() {
		idText := cString(serverID)
		disposed := false
		state.withProvider(func(provider *C.acp_mcp_provider) {
			disposed = bool(C.acp_mcp_provider_dispose(provider, cPtr(idText)))
		})
		if !disposed {
			return
		}
		state.mu.Lock()
		delete(state.servers, serverID)
		state.mu.Unlock()
		server.cancel()
		server.running.Wait()
	})
	return registration, nil
}

// HandleRequest answers an `mcp/message` request (a client's ExtMethod for
// MethodMcpMessage) with the registered server's handler.
func (p *McpOverAcpProvider) HandleRequest(ctx context.Context, conn *Conn, params json.RawMessage) (any, error) {
	state := p.stateOf(conn)
	paramsText := cString(string(params))
	var operation *C.acp_mcp_operation
	var out *C.char
	var rc C.acp_result
	if !state.withProvider(func(provider *C.acp_mcp_provider) {
		rc = C.acp_mcp_provider_start(provider, cPtr(paramsText), &operation, &out)
	}) {
		return nil, conn.closedError()
	}
	answer, err := mcpAnswer(rc, out)
	if operation == nil || err != nil {
		return answer, err
	}
	defer C.acp_mcp_operation_free(operation)
	operationContext := &McpOperationContext{operation: operation, conn: conn}
	if err := json.Unmarshal(answer, operationContext); err != nil {
		return nil, InternalError()
	}
	state.mu.Lock()
	server := state.servers[operationContext.ServerID]
	if server != nil {
		server.running.Add(1)
	}
	state.mu.Unlock()
	if server == nil {
		// Disposed between the engine's check and here.
		C.acp_mcp_operation_cancel(operation)
		return mcpFinish(operation, nil, errors.New("the MCP server registration was disposed"))
	}
	defer server.running.Done()
	handlerCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(server.ctx, cancel)
	defer stop()
	result, handlerErr := server.handler(handlerCtx, operationContext)
	if ctx.Err() != nil {
		// The caller cancelled (the engine answered -32800 already).
		C.acp_mcp_operation_cancel(operation)
	}
	return mcpFinish(operation, result, handlerErr)
}

// mcpFinish is the answer for a handler's result or error.
func mcpFinish(operation *C.acp_mcp_operation, result any, handlerErr error) (any, error) {
	var carrier map[string]any
	var details []byte
	var code C.int64_t
	var protocol *McpProtocolError
	var requestError *RequestError
	switch {
	case errors.As(handlerErr, &protocol):
		failure := map[string]any{"code": protocol.Code, "message": protocol.Message}
		if protocol.Data != nil {
			failure["data"] = protocol.Data
		}
		carrier = map[string]any{"error": failure}
	case errors.As(handlerErr, &requestError):
		details, code = cString(requestError.Message), C.int64_t(requestError.Code)
	case handlerErr != nil:
		details = cString(handlerErr.Error())
	default:
		carrier = map[string]any{"result": result}
	}
	var outcome []byte
	if carrier != nil {
		var err error
		if outcome, err = optionalJSON(carrier); err != nil {
			details = cString(fmt.Sprintf("the handler's outcome is not JSON: %v", err))
		}
	}
	var out *C.char
	rc := C.acp_mcp_operation_finish(operation, cPtr(outcome), cPtr(details), code, &out)
	return mcpAnswer(rc, out)
}

// mcpAnswer reads what an acp_mcp_* call handed out (and frees it): the
// JSON on ACP_OK, the JSON-RPC error on ACP_ERR_REQUEST_FAILED.
func mcpAnswer(rc C.acp_result, out *C.char) (json.RawMessage, error) {
	text := goBytes(out)
	C.acp_string_free(out)
	switch rc {
	case C.ACP_OK:
		return json.RawMessage(text), nil
	case C.ACP_ERR_REQUEST_FAILED:
		failure := &RequestError{}
		if err := json.Unmarshal(text, failure); err != nil {
			return nil, InternalError()
		}
		return nil, failure
	}
	return nil, InternalError().WithData(map[string]string{"reason": fmt.Sprintf("acp_mcp call failed (result %d)", int(rc))})
}

// optionalJSON is value as NUL-terminated JSON (nil: nil).
func optionalJSON(value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	encoded, err := json.Marshal(value)
	if err != nil {
		return nil, InvalidParams().WithData(map[string]string{"reason": err.Error()})
	}
	return cString(string(encoded)), nil
}

// McpRequestOptions are a request's settings; nil means the defaults.
type McpRequestOptions struct {
	// RequestID is the MCP request's id ("": a fresh one).
	RequestID string
	// Meta is the envelope's `_meta` (nil: none).
	Meta any
	// OnNotification gets the request's MCP notifications, in order.
	OnNotification func(McpNotification)
}

// mcpRoute is a running request's listener.
type mcpRoute struct {
	conn      *Conn
	serverID  string
	requestID string
}

// McpOverAcpCaller calls MCP servers an ACP peer declared with
// `"type": "acp"`; one per program. An agent passes MethodMcpMessage
// notifications (its ExtNotification) to HandleNotification.
type McpOverAcpCaller struct {
	capabilities []byte
	clientInfo   []byte
	mu           sync.Mutex
	routes       map[mcpRoute]func(McpNotification)
}

// NewMcpOverAcpCaller is a caller that sends clientCapabilities and
// clientInfo (either may be nil) in each request's MCP meta.
func NewMcpOverAcpCaller(clientCapabilities, clientInfo any) (*McpOverAcpCaller, error) {
	capabilities, err := optionalJSON(clientCapabilities)
	if err != nil {
		return nil, err
	}
	info, err := optionalJSON(clientInfo)
	if err != nil {
		return nil, err
	}
	return &McpOverAcpCaller{capabilities: capabilities, clientInfo: info, routes: map[mcpRoute]func(McpNotification){}}, nil
}

// Request sends one MCP request to serverID over conn and returns its
// outcome (an MCP result or an inner MCP error); outer failures are
// *RequestError (-33001: no such server). Cancelling ctx cancels it.
func (c *McpOverAcpCaller) Request(ctx context.Context, conn *Conn, serverID, method string, params any, options *McpRequestOptions) (*McpOutcome, error) {
	if options == nil {
		options = &McpRequestOptions{}
	}
	body, err := optionalJSON(params)
	if err != nil {
		return nil, err
	}
	var out *C.char
	C.acp_mcp_with_request_meta(cPtr(body), cPtr(c.capabilities), cPtr(c.clientInfo), &out)
	withMeta := json.RawMessage(goBytes(out))
	C.acp_string_free(out)
	requestID := options.RequestID
	if requestID == "" {
		prefix := cString("mcp-request")
		generated := C.acp_mcp_generate_id(cPtr(prefix))
		requestID = C.GoString(generated)
		C.acp_string_free(generated)
	}
	route := mcpRoute{conn, serverID, requestID}
	c.mu.Lock()
	if _, taken := c.routes[route]; taken {
		c.mu.Unlock()
		return nil, fmt.Errorf("acpengine: MCP request %s is already active for server %s", requestID, serverID)
	}
	listener := options.OnNotification
	if listener == nil {
		listener = func(McpNotification) {}
	}
	c.routes[route] = listener
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.routes, route)
		c.mu.Unlock()
	}()
	envelope := map[string]any{"serverId": serverID, "requestId": requestID, "method": method, "params": withMeta}
	if options.Meta != nil {
		envelope["_meta"] = options.Meta
	}
	var response json.RawMessage
	if err := conn.Call(ctx, MethodMcpMessage, envelope, &response); err != nil {
		return nil, err
	}
	responseText := cString(string(response))
	rc := C.acp_mcp_outcome_of_response(cPtr(responseText), &out)
	text, err := mcpAnswer(rc, out)
	if err != nil {
		return nil, err
	}
	outcome := &McpOutcome{}
	if err := json.Unmarshal(text, outcome); err != nil {
		return nil, InternalError()
	}
	return outcome, nil
}

// HandleNotification routes an `mcp/message` notification to the listener
// of the request it belongs to; others are dropped.
func (c *McpOverAcpCaller) HandleNotification(conn *Conn, params json.RawMessage) {
	var scoped struct {
		ServerID  string `json:"serverId"`
		RequestID string `json:"requestId"`
		McpNotification
	}
	if json.Unmarshal(params, &scoped) != nil {
		return
	}
	c.mu.Lock()
	listener := c.routes[mcpRoute{conn, scoped.ServerID, scoped.RequestID}]
	c.mu.Unlock()
	if listener != nil {
		listener(scoped.McpNotification)
	}
}

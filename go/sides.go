package acpengine

import (
	"bytes"
	"context"
	json "github.com/goccy/go-json"
)

// ExtMethodHandler is implemented by an Agent or Client that handles
// requests outside the schema, passed as named: extension methods
// (starting with "_") and the connection's Options.UncheckedMethods.
// Without it they are answered -32601.
type ExtMethodHandler interface {
	ExtMethod(ctx context.Context, method string, params json.RawMessage) (any, error)
}

// ExtNotificationHandler is implemented by an Agent or Client that handles
// notifications outside the schema, passed as named: extension methods
// (starting with "_") and the connection's Options.UncheckedMethods.
// Without it they are dropped.
type ExtNotificationHandler interface {
	ExtNotification(ctx context.Context, method string, params json.RawMessage) error
}

// InvalidNotificationHandler is implemented by an Agent or Client (or a
// connection's Handler) that wants to hear of the notifications from the
// peer whose params fail the ACP schema: the engine drops them (they never
// reach SessionUpdate and the like, and a notification gets no answer).
// err is the -32602 that says what failed (its Data names the field), for
// example claude-agent-acp 0.23's session/update usage_update with
// "used": null. It is called in order with the other notifications. Without
// it each is logged on stderr ("acpengine: dropped a session/update
// notification that fails the schema: ..."). Unknown notification methods
// are dropped without a word.
type InvalidNotificationHandler interface {
	OnInvalidNotification(method string, err *RequestError)
}

// AgentSideConnection is an agent's connection to its client: the Agent
// handles what the client sends, and its methods (SessionUpdate,
// RequestPermission, ReadTextFile, CreateTerminal, ...) send to the client.
type AgentSideConnection struct {
	*Conn
	agent Agent
}

// NewAgentSideConnection serves agent(conn) over stream.
func NewAgentSideConnection(agent func(*AgentSideConnection) Agent, stream Stream, options *Options) (*AgentSideConnection, error) {
	conn, err := open(SideAgent, stream, options)
	if err != nil {
		return nil, err
	}
	side := &AgentSideConnection{Conn: conn}
	side.agent = agent(side)
	conn.start(agentHandler(side.agent))
	return side, nil
}

// RunAgent serves agent(conn) on this process's stdin and stdout until the
// client hangs up.
func RunAgent(agent func(*AgentSideConnection) Agent) error {
	conn, err := NewAgentSideConnection(agent, StdioStream(), nil)
	if err != nil {
		return err
	}
	<-conn.Done()
	return nil
}

// ClientSideConnection is a client's connection to its agent: the Client
// handles what the agent sends, and its methods (Initialize, NewSession,
// Prompt, Cancel, ...) send to the agent.
type ClientSideConnection struct {
	*Conn
	client Client
}

// NewClientSideConnection connects client(conn) to the agent over stream.
func NewClientSideConnection(client func(*ClientSideConnection) Client, stream Stream, options *Options) (*ClientSideConnection, error) {
	conn, err := open(SideClient, stream, options)
	if err != nil {
		return nil, err
	}
	side := &ClientSideConnection{Conn: conn}
	side.client = client(side)
	conn.start(clientHandler(side.client))
	return side, nil
}

// SpawnAgent starts an agent process (command and args, looked up in PATH)
// and connects client(conn) to it. Close the connection when done: the
// agent is then reaped.
func SpawnAgent(client func(*ClientSideConnection) Client, command string, args ...string) (*ClientSideConnection, error) {
	return NewClientSideConnection(client, SpawnStream(command, args, nil), nil)
}

// ConnectAgent connects client(conn) to a remote agent at url (ws://, wss://,
// http:// or https://; see RemoteStream). Close the connection when done.
func ConnectAgent(client func(*ClientSideConnection) Client, url string, options RemoteOptions) (*ClientSideConnection, error) {
	return NewClientSideConnection(client, RemoteStream(url, options), nil)
}

// ExtMethod sends a request outside the schema, method as named: an
// extension method ("_x/y") or one of Options.UncheckedMethods (any other
// method the schema does not have fails with -32601, unsent). It decodes
// the result into result.
func (c *AgentSideConnection) ExtMethod(ctx context.Context, method string, params any, result any) error {
	return c.Conn.Call(ctx, method, params, result)
}

// ExtNotification sends a notification outside the schema, method as
// named (see ExtMethod).
func (c *AgentSideConnection) ExtNotification(ctx context.Context, method string, params any) error {
	return c.Conn.Notify(ctx, method, params)
}

// ExtMethod sends a request outside the schema, method as named: an
// extension method ("_x/y") or one of Options.UncheckedMethods (any other
// method the schema does not have fails with -32601, unsent). It decodes
// the result into result.
func (c *ClientSideConnection) ExtMethod(ctx context.Context, method string, params any, result any) error {
	return c.Conn.Call(ctx, method, params, result)
}

// ExtNotification sends a notification outside the schema, method as
// named (see ExtMethod).
func (c *ClientSideConnection) ExtNotification(ctx context.Context, method string, params any) error {
	return c.Conn.Notify(ctx, method, params)
}

// RequestDispatch is a method table's dispatch of a request (generated):
// false when the method is not one of the side's.
type RequestDispatch func(ctx context.Context, method string, params []byte) (any, bool, error)

// NotificationDispatch is a method table's dispatch of a notification
// (generated): false when the method is not one of the side's.
type NotificationDispatch func(ctx context.Context, method string, params []byte) (bool, error)

// TypedHandler is the Handler of a typed connection: what the peer sends
// goes to the side's method table (request, notification), and what the
// table does not know to target's ExtMethodHandler / ExtNotificationHandler;
// target's InvalidNotificationHandler hears of dropped notifications. The
// table decodes params in place (it copies what it keeps). This package's
// typed connections use it, and so do package acpv2's.
func TypedHandler(target any, request RequestDispatch, notification NotificationDispatch) Handler {
	return typedHandler{handler: target, request: request, notification: notification}
}

type typedHandler struct {
	handler      any
	request      RequestDispatch
	notification NotificationDispatch
}

func (h typedHandler) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if result, ok, err := h.request(ctx, method, params); ok {
		return result, err
	}
	return extRequest(ctx, h.handler, method, bytes.Clone(params))
}

func (h typedHandler) HandleNotification(ctx context.Context, method string, params json.RawMessage) error {
	if ok, err := h.notification(ctx, method, params); ok {
		return err
	}
	return extNotification(ctx, h.handler, method, bytes.Clone(params))
}

func (typedHandler) readsParamsInPlace() {}

func (h typedHandler) target() any { return h.handler }

// agentHandler routes what a client sends to an Agent.
func agentHandler(agent Agent) Handler {
	return TypedHandler(agent,
		func(ctx context.Context, method string, params []byte) (any, bool, error) {
			return dispatchAgentRequest(ctx, agent, method, params)
		},
		func(ctx context.Context, method string, params []byte) (bool, error) {
			return dispatchAgentNotification(ctx, agent, method, params)
		})
}

// clientHandler routes what an agent sends to a Client.
func clientHandler(client Client) Handler {
	return TypedHandler(client,
		func(ctx context.Context, method string, params []byte) (any, bool, error) {
			return dispatchClientRequest(ctx, client, method, params)
		},
		func(ctx context.Context, method string, params []byte) (bool, error) {
			return dispatchClientNotification(ctx, client, method, params)
		})
}

// What reaches these is a method outside the side's table: an extension
// method or one of the connection's unchecked methods (the engine answers
// any other method the side does not know with -32601 itself, and drops
// such notifications).
func extRequest(ctx context.Context, handler any, method string, params json.RawMessage) (any, error) {
	if ext, ok := handler.(ExtMethodHandler); ok {
		return ext.ExtMethod(ctx, method, params)
	}
	return nil, MethodNotFound(method)
}

func extNotification(ctx context.Context, handler any, method string, params json.RawMessage) error {
	if ext, ok := handler.(ExtNotificationHandler); ok {
		return ext.ExtNotification(ctx, method, params)
	}
	return nil
}

// Package acpv2 is ACP version 2 (the draft) in Go: its types
// (schema_gen.go, from schema/v2/schema.json), its method table
// (methods_gen.go) and the typed connections of both sides, on the same
// engine as package acpengine. The connections speak v2 only: the engine
// checks every message against the v2 schema and refuses a v1 peer's
// initialize (-32022). An agent that serves v1 and v2 clients at once is a
// router (acpengine.Options.ProtocolVersions = []int{1, 2} with
// acpengine.NewSideConnection), as the official SDKs have it.
//
// v2 is experimental: its types and methods change with the draft.
package acpv2

import (
	"context"

	acp "github.com/acp-engine/acp-engine/go"
)

// AgentSideConnection is a v2 agent's connection to its client: the Agent
// handles what the client sends, and its methods (UpdateSession,
// RequestPermission, ...) send to the client.
type AgentSideConnection struct {
	*acp.Conn
	agent Agent
}

// NewAgentSideConnection serves agent(conn) over stream, speaking v2
// (options.ProtocolVersions is set to []int{2}).
func NewAgentSideConnection(agent func(*AgentSideConnection) Agent, stream acp.Stream, options *acp.Options) (*AgentSideConnection, error) {
	side := &AgentSideConnection{}
	// The connection is side.Conn from before anything reaches the handler.
	_, err := acp.NewSideConnection(acp.SideAgent, func(conn *acp.Conn) acp.Handler {
		side.Conn = conn
		side.agent = agent(side)
		return agentHandler(side.agent)
	}, stream, v2Only(options))
	if err != nil {
		return nil, err
	}
	return side, nil
}

// ClientSideConnection is a v2 client's connection to its agent: the Client
// handles what the agent sends, and its methods (Initialize, NewSession,
// Prompt, ...) send to the agent.
type ClientSideConnection struct {
	*acp.Conn
	client Client
}

// NewClientSideConnection connects client(conn) to the agent over stream,
// speaking v2 (options.ProtocolVersions is set to []int{2}).
func NewClientSideConnection(client func(*ClientSideConnection) Client, stream acp.Stream, options *acp.Options) (*ClientSideConnection, error) {
	side := &ClientSideConnection{}
	// The connection is side.Conn from before anything reaches the handler.
	_, err := acp.NewSideConnection(acp.SideClient, func(conn *acp.Conn) acp.Handler {
		side.Conn = conn
		side.client = client(side)
		return clientHandler(side.client)
	}, stream, v2Only(options))
	if err != nil {
		return nil, err
	}
	return side, nil
}

// v2Only is options (or the defaults) speaking v2.
func v2Only(options *acp.Options) *acp.Options {
	speaking := acp.Options{}
	if options != nil {
		speaking = *options
	}
	speaking.ProtocolVersions = []int{2}
	return &speaking
}

// agentHandler routes what a client sends to an Agent (acp.TypedHandler:
// v2's method table, then the Agent's extension handlers).
func agentHandler(agent Agent) acp.Handler {
	return acp.TypedHandler(agent,
		func(ctx context.Context, method string, params []byte) (any, bool, error) {
			return dispatchAgentRequest(ctx, agent, method, params)
		},
		func(ctx context.Context, method string, params []byte) (bool, error) {
			return dispatchAgentNotification(ctx, agent, method, params)
		})
}

// clientHandler routes what an agent sends to a Client.
func clientHandler(client Client) acp.Handler {
	return acp.TypedHandler(client,
		func(ctx context.Context, method string, params []byte) (any, bool, error) {
			return dispatchClientRequest(ctx, client, method, params)
		},
		func(ctx context.Context, method string, params []byte) (bool, error) {
			return dispatchClientNotification(ctx, client, method, params)
		})
}

package acpengine_test

// Options.UncheckedMethods: methods outside the ACP schema sent and
// received as they are, between an agent and a client connection of this
// process over two pipes. Listed on both sides, the client's legacy
// "session/set_model" reaches the agent's ExtMethod and its answer {}
// comes back (and a listed notification the other way reaches the
// client's ExtNotification); not listed on the client, the send is refused
// before it leaves (-32601); not listed on the agent, its engine answers
// -32601 and the agent never sees it.

import (
	"context"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	acp "github.com/acp-engine/acp-engine/go"
)

const (
	setModel    = "session/set_model"
	modelChosen = "legacy/model_chosen"
)

var legacyMethods = []string{setModel, modelChosen}

// legacyAgent takes session/set_model in ExtMethod: it tells the client
// (modelChosen, a notification outside the schema) and answers {}.
type legacyAgent struct {
	largeAgent
	conn *acp.AgentSideConnection
	seen chan string // method and params of every ExtMethod call
}

func (a *legacyAgent) ExtMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	a.seen <- method + " " + string(params)
	if method != setModel {
		return nil, acp.MethodNotFound(method)
	}
	var model struct{ ModelId string }
	_ = json.Unmarshal(params, &model)
	if err := a.conn.ExtNotification(ctx, modelChosen, map[string]string{"modelId": model.ModelId}); err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}

// legacyClient records the notifications outside the schema it gets.
type legacyClient struct {
	largeClient
	notes chan string
}

func (c *legacyClient) ExtNotification(ctx context.Context, method string, params json.RawMessage) error {
	c.notes <- method + " " + string(params)
	return nil
}

// legacyPair connects a client and a legacyAgent over two pipes, each with
// or without legacyMethods.
func legacyPair(t *testing.T, clientLists, agentLists bool) (*acp.ClientSideConnection, *legacyAgent, *legacyClient) {
	t.Helper()
	var toAgent, toClient [2]int
	if err := syscall.Pipe(toAgent[:]); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Pipe(toClient[:]); err != nil {
		t.Fatal(err)
	}
	options := func(lists bool) *acp.Options {
		if lists {
			return &acp.Options{UncheckedMethods: legacyMethods}
		}
		return nil
	}
	agent := &legacyAgent{seen: make(chan string, 8)}
	agentConn, err := acp.NewAgentSideConnection(func(conn *acp.AgentSideConnection) acp.Agent {
		agent.conn = conn
		return agent
	}, acp.FDStream(toAgent[0], toClient[1]), options(agentLists))
	if err != nil {
		t.Fatal(err)
	}
	client := &legacyClient{notes: make(chan string, 8)}
	clientConn, err := acp.NewClientSideConnection(func(*acp.ClientSideConnection) acp.Client { return client },
		acp.FDStream(toClient[0], toAgent[1]), options(clientLists))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = clientConn.Close()
		_ = agentConn.Close()
	})
	return clientConn, agent, client
}

var model = map[string]string{"sessionId": "s1", "modelId": "fast"}

func TestUncheckedMethodsGoOutAndReachExtHandlers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, agent, notes := legacyPair(t, true, true)
	var result map[string]any
	if err := client.ExtMethod(ctx, setModel, model, &result); err != nil || result == nil || len(result) != 0 {
		t.Fatalf("session/set_model: %v %v", result, err)
	}
	if got, want := <-agent.seen, setModel+` {"modelId":"fast","sessionId":"s1"}`; got != want {
		t.Errorf("the agent's ExtMethod got %q, want %q", got, want)
	}
	select {
	case got := <-notes.notes:
		if want := modelChosen + ` {"modelId":"fast"}`; got != want {
			t.Errorf("the client's ExtNotification got %q, want %q", got, want)
		}
	case <-ctx.Done():
		t.Error("the agent's legacy notification did not reach the client's ExtNotification")
	}
	// The schema's methods are still checked.
	if err := client.Conn.Call(ctx, acp.MethodSessionNew, map[string]any{"cwd": 5}, nil); acp.CodeOf(err) != acp.CodeInvalidParams {
		t.Errorf("bad params of a schema method: want -32602, got %v", err)
	}
}

func TestUncheckedMethodsNotListedOnTheClientAreRefusedUnsent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, agent, _ := legacyPair(t, false, true)
	// Refused by our side's check (the C door reports it as an invalid
	// argument whose text carries the engine's -32601).
	err := client.ExtMethod(ctx, setModel, model, nil)
	if err == nil || !strings.Contains(err.Error(), "Method not found (-32601)") {
		t.Fatalf("session/set_model not listed: want a refusal naming -32601, got %v", err)
	}
	if err := client.ExtNotification(ctx, setModel, model); err == nil || !strings.Contains(err.Error(), "Method not found (-32601)") {
		t.Errorf("as a notification: want a refusal naming -32601, got %v", err)
	}
	// Nothing went out: the next request is the first the agent sees.
	if err := client.ExtMethod(ctx, "_test/ping", map[string]any{}, nil); acp.CodeOf(err) != acp.CodeMethodNotFound {
		t.Errorf("_test/ping: the agent answers -32601, got %v", err)
	}
	if got := <-agent.seen; got != "_test/ping {}" {
		t.Errorf("the agent saw %q first", got)
	}
}

func TestUncheckedMethodsNotListedOnTheAgentAreUnknownThere(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, agent, _ := legacyPair(t, true, false)
	err := client.ExtMethod(ctx, setModel, model, nil)
	if acp.CodeOf(err) != acp.CodeMethodNotFound {
		t.Fatalf("want -32601 from the agent's engine, got %v", err)
	}
	select {
	case got := <-agent.seen:
		t.Errorf("the agent's ExtMethod ran: %q", got)
	default:
	}
}

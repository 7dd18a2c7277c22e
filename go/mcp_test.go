package acpengine_test

// MCP-over-ACP (McpOverAcpProvider, McpOverAcpCaller; the rules in the
// engine): a Go agent under the official TypeScript SDK's MCP-over-ACP
// client (interop/ts: an @modelcontextprotocol/server server and a handler
// of its own), a Go provider under the official TypeScript agent, and a Go
// pair over pipes for the provider's limit, disposal and cancellation.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goccy/go-json"

	acp "github.com/acp-engine/acp-engine/go"
)

const mcpProgress = "progress=notifications/progress:1,notifications/progress:2,notifications/progress:3"

// mcpWords is what the agents say, with the first `received` progress notifications.
func mcpWords(received int) string {
	progress := []string{}
	for step := 1; step <= received; step++ {
		progress = append(progress, fmt.Sprintf("notifications/progress:%d", step))
	}
	return "tools=add add=5 count=3 progress=" + strings.Join(progress, ",") + " refused=-32602:Unknown tool: nope unavailable=-33001"
}

// mcpAgent calls the MCP servers its client offers over ACP: the Go twin of
// interop/ts/mcp-over-acp-agent.mjs (the same calls, the same words).
type mcpAgent struct {
	client  *acp.AgentSideConnection
	caller  *acp.McpOverAcpCaller
	mu      sync.Mutex
	servers map[string]map[string]string // session -> name -> server id
}

func (a *mcpAgent) Initialize(ctx context.Context, params *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	return &acp.InitializeResponse{ProtocolVersion: 1}, nil
}

func (a *mcpAgent) NewSession(ctx context.Context, params *acp.NewSessionRequest) (*acp.NewSessionResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	session := fmt.Sprintf("s%d", len(a.servers)+1)
	byName := map[string]string{}
	for _, server := range params.McpServers {
		if declared, ok := acp.McpServerAcpOf(server); ok {
			byName[declared.Name] = declared.ServerID
		}
	}
	a.servers[session] = byName
	return &acp.NewSessionResponse{SessionId: acp.SessionId(session)}, nil
}

func (a *mcpAgent) Cancel(ctx context.Context, params *acp.CancelNotification) error { return nil }

func (a *mcpAgent) ExtNotification(ctx context.Context, method string, params json.RawMessage) error {
	if method == acp.MethodMcpMessage {
		a.caller.HandleNotification(a.client.Conn, params)
	}
	return nil
}

func text(outcome *acp.McpOutcome) string {
	var result struct{ Content []struct{ Text string } }
	_ = json.Unmarshal(outcome.Result, &result)
	if len(result.Content) == 0 {
		return ""
	}
	return result.Content[0].Text
}

func (a *mcpAgent) Prompt(ctx context.Context, params *acp.PromptRequest) (*acp.PromptResponse, error) {
	a.mu.Lock()
	byName := a.servers[string(params.SessionId)]
	a.mu.Unlock()
	conn := a.client.Conn
	listed, err := a.caller.Request(ctx, conn, byName["tools"], "tools/list", map[string]any{}, nil)
	if err != nil {
		return nil, err
	}
	var tools struct{ Tools []struct{ Name string } }
	_ = json.Unmarshal(listed.Result, &tools)
	names := []string{}
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	added, err := a.caller.Request(ctx, conn, byName["tools"], "tools/call", map[string]any{"name": "add", "arguments": map[string]int{"a": 2, "b": 3}}, nil)
	if err != nil {
		return nil, err
	}
	var progress []string
	counted, err := a.caller.Request(ctx, conn, byName["counter"], "tools/call", map[string]any{"name": "count", "arguments": map[string]int{"to": 3}},
		&acp.McpRequestOptions{OnNotification: func(notification acp.McpNotification) {
			var step struct{ Progress int }
			_ = json.Unmarshal(notification.Params, &step)
			progress = append(progress, fmt.Sprintf("%s:%d", notification.Method, step.Progress))
		}})
	if err != nil {
		return nil, err
	}
	refused, err := a.caller.Request(ctx, conn, byName["counter"], "tools/call", map[string]any{"name": "nope"}, nil)
	if err != nil || refused.Error == nil {
		return nil, fmt.Errorf("an unknown tool: %v %+v", err, refused)
	}
	unavailable := "none"
	if _, err := a.caller.Request(ctx, conn, "nobody-declared-this", "tools/list", map[string]any{}, nil); err != nil {
		unavailable = fmt.Sprint(acp.CodeOf(err))
	}
	words := fmt.Sprintf("tools=%s add=%s count=%s progress=%s refused=%d:%s unavailable=%s", strings.Join(names, ","), text(added), text(counted),
		strings.Join(progress, ","), refused.Error.Code, refused.Error.Message, unavailable)
	update := acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: words}}}}
	if err := a.client.SessionUpdate(ctx, &acp.SessionNotification{SessionId: params.SessionId, Update: update}); err != nil {
		return nil, err
	}
	return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

// runMcpAgent serves one client on this process's stdio (ACP_GO_TEST_ROLE=mcp-agent).
func runMcpAgent() int {
	caller, err := acp.NewMcpOverAcpCaller(nil, map[string]string{"name": "go-mcp-agent", "version": "1.0.0"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	conn, err := acp.NewAgentSideConnection(func(client *acp.AgentSideConnection) acp.Agent {
		return &mcpAgent{client: client, caller: caller, servers: map[string]map[string]string{}}
	}, acp.StdioStream(), &acp.Options{Unstable: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	<-conn.Done()
	return 0
}

func TestTheOfficialProviderServesTheGoCaller(t *testing.T) {
	command := exec.Command("node", officialTS(t, "mcp-over-acp-client.mjs"), os.Args[0], "-test.run=^$")
	command.Env = append(os.Environ(), "ACP_GO_TEST_ROLE=mcp-agent", "ACP_INTEROP_TRACE=")
	out, err := command.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || lines[len(lines)-1] != "mcp ok" {
		t.Fatalf("%v\n%s", err, out)
	}
	// Every progress notification, in order, before the answer.
	if said := lines[len(lines)-2]; said != mcpWords(3) {
		t.Fatalf("said %q, want %q", said, mcpWords(3))
	}
}

// mcpClient offers its provider's servers and keeps what its agent says.
type mcpClient struct {
	provider *acp.McpOverAcpProvider
	conn     *acp.ClientSideConnection
	mu       sync.Mutex
	said     strings.Builder
}

func (c *mcpClient) RequestPermission(ctx context.Context, params *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	return nil, acp.MethodNotFound(acp.MethodSessionRequestPermission)
}

func (c *mcpClient) SessionUpdate(ctx context.Context, params *acp.SessionNotification) error {
	if chunk := params.Update.AgentMessageChunk; chunk != nil && chunk.Content.Text != nil {
		c.mu.Lock()
		c.said.WriteString(chunk.Content.Text.Text)
		c.mu.Unlock()
	}
	return nil
}

func (c *mcpClient) ExtMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method != acp.MethodMcpMessage {
		return nil, acp.MethodNotFound(method)
	}
	return c.provider.HandleRequest(ctx, c.conn.Conn, params)
}

type mcpArguments struct {
	Name      string
	Arguments struct{ A, B, To int }
}

func mcpText(text string) map[string]any {
	return map[string]any{"content": []map[string]string{{"type": "text", "text": text}}}
}

func toolsServer(ctx context.Context, operation *acp.McpOperationContext) (any, error) {
	if operation.Method == "tools/list" {
		return map[string]any{"tools": []map[string]any{{"name": "add", "inputSchema": map[string]string{"type": "object"}}}}, nil
	}
	var call mcpArguments
	if err := json.Unmarshal(operation.Params, &call); err != nil {
		return nil, err
	}
	return mcpText(fmt.Sprint(call.Arguments.A + call.Arguments.B)), nil
}

func counterServer(ctx context.Context, operation *acp.McpOperationContext) (any, error) {
	var call mcpArguments
	if err := json.Unmarshal(operation.Params, &call); err != nil || call.Name != "count" {
		return nil, &acp.McpProtocolError{Code: -32602, Message: "Unknown tool: " + call.Name}
	}
	for step := 1; step <= call.Arguments.To; step++ {
		if err := operation.Notify(ctx, "notifications/progress", map[string]int{"progress": step, "total": call.Arguments.To}); err != nil {
			return nil, err
		}
	}
	return mcpText(fmt.Sprint(call.Arguments.To)), nil
}

func TestTheGoProviderServesTheOfficialCaller(t *testing.T) {
	client := &mcpClient{provider: acp.NewMcpOverAcpProvider()}
	agent, err := acp.NewClientSideConnection(func(conn *acp.ClientSideConnection) acp.Client {
		client.conn = conn
		return client
	}, acp.SpawnStream("node", []string{officialTS(t, "mcp-over-acp-agent.mjs")}, nil), &acp.Options{Unstable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	tools, err := client.provider.RegisterServer(agent.Conn, "tools", toolsServer, nil)
	if err != nil {
		t.Fatal(err)
	}
	counter, err := client.provider.RegisterServer(agent.Conn, "counter", counterServer, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.provider.RegisterServer(agent.Conn, "again", toolsServer, &acp.McpServerOptions{ServerID: tools.ServerID}); err == nil {
		t.Fatal("a server id was registered twice")
	}
	ctx := context.Background()
	if _, err := agent.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	session, err := agent.NewSession(ctx, &acp.NewSessionRequest{Cwd: "/", McpServers: []acp.McpServer{tools.Declaration(), counter.Declaration()}})
	if err != nil {
		t.Fatal(err)
	}
	prompt := &acp.PromptRequest{SessionId: session.SessionId, Prompt: []acp.ContentBlock{{Text: &acp.TextContent{Text: "call"}}}}
	if _, err := agent.Prompt(ctx, prompt); err != nil {
		t.Fatal(err)
	}
	client.mu.Lock()
	said := client.said.String()
	client.mu.Unlock()
	// The official caller drops the notifications it handles after the answer: a prefix, in order.
	received := strings.Count(said, "notifications/progress:")
	if received < 1 || said != mcpWords(received) {
		t.Fatalf("said %q", said)
	}
}

// mcpPair is a Go provider (the client) and a Go caller (the agent) over pipes.
func mcpPair(t *testing.T) (*mcpClient, *acp.AgentSideConnection, *acp.McpOverAcpCaller) {
	var toAgent, toClient [2]int
	if err := syscall.Pipe(toAgent[:]); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Pipe(toClient[:]); err != nil {
		t.Fatal(err)
	}
	caller, err := acp.NewMcpOverAcpCaller(map[string]any{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	options := &acp.Options{Unstable: true}
	var agentSide *acp.AgentSideConnection
	agentSide, err = acp.NewAgentSideConnection(func(conn *acp.AgentSideConnection) acp.Agent {
		return &mcpAgent{client: conn, caller: caller, servers: map[string]map[string]string{}}
	}, acp.FDStream(toAgent[0], toClient[1]), options)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agentSide.Close() })
	client := &mcpClient{provider: acp.NewMcpOverAcpProvider()}
	clientSide, err := acp.NewClientSideConnection(func(conn *acp.ClientSideConnection) acp.Client {
		client.conn = conn
		return client
	}, acp.FDStream(toClient[0], toAgent[1]), options)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { clientSide.Close() })
	return client, agentSide, caller
}

func TestTheProviderLimitsDisposesAndCancels(t *testing.T) {
	client, agent, caller := mcpPair(t)
	started := make(chan string, 4)
	stopped := make(chan error, 4)
	waiting := func(ctx context.Context, operation *acp.McpOperationContext) (any, error) {
		started <- operation.RequestID
		<-ctx.Done()
		stopped <- ctx.Err()
		return nil, ctx.Err()
	}
	slow, err := client.provider.RegisterServer(client.conn.Conn, "slow", waiting, &acp.McpServerOptions{MaxActiveRequests: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	call := func(ctx context.Context, server *acp.McpServerRegistration, id string) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := caller.Request(ctx, agent.Conn, server.ServerID, "tools/call", map[string]any{"name": "wait"}, &acp.McpRequestOptions{RequestID: id})
			done <- err
		}()
		return done
	}
	first := call(ctx, slow, "r1")
	if id := <-started; id != "r1" {
		t.Fatalf("started %s", id)
	}
	// One at a time: the second is refused while the first runs.
	if err := <-call(ctx, slow, "r2"); acp.CodeOf(err) != acp.CodeMcpResourceLimitExceeded {
		t.Fatalf("past the limit: %v", err)
	}
	// Disposing cancels what runs (the caller gets -32800) and returns once it stopped.
	slow.Dispose()
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the handler stopped with %v", err)
		}
	default:
		t.Fatal("Dispose returned before its handler stopped")
	}
	if err := <-first; acp.CodeOf(err) != acp.CodeRequestCancelled {
		t.Fatalf("a disposed server's request: %v", err)
	}
	if err := <-call(ctx, slow, "r3"); acp.CodeOf(err) != acp.CodeMcpServerUnavailable {
		t.Fatalf("after disposal: %v", err)
	}

	// The caller cancelling its context cancels the handler's.
	again, err := client.provider.RegisterServer(client.conn.Conn, "again", waiting, nil)
	if err != nil {
		t.Fatal(err)
	}
	callCtx, callCancel := context.WithCancel(ctx)
	cancelled := call(callCtx, again, "r4")
	select {
	case <-started:
	case err := <-cancelled:
		t.Fatalf("the call to a running server returned %v", err)
	}
	callCancel()
	if err := <-stopped; !errors.Is(err, context.Canceled) {
		t.Fatalf("the handler stopped with %v", err)
	}
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled call returned %v", err)
	}
	again.Dispose()
}

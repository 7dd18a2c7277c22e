package acpengine_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	acp "github.com/acp-engine/acp-engine/go"
)

func TestMain(m *testing.M) {
	switch os.Getenv("ACP_GO_TEST_ROLE") {
	case "agent":
		os.Exit(runTestAgent())
	case "dual-agent":
		os.Exit(runDualAgent())
	case "mcp-agent":
		os.Exit(runMcpAgent())
	case "proxy":
		os.Exit(runTestProxy())
	}
	os.Exit(m.Run())
}

// testClient handles every method of the client side and records what it
// was sent.
type testClient struct {
	mu       sync.Mutex
	handled  map[string]int
	updates  int
	notified chan string // _test/* notifications, by method (and _test/handled's method)

	permissionCancelled chan error
	holdPermissions     bool
}

func newTestClient() *testClient {
	return &testClient{handled: map[string]int{}, notified: make(chan string, 4096), permissionCancelled: make(chan error, 4)}
}

func (c *testClient) record(method string) {
	c.mu.Lock()
	c.handled[method]++
	c.mu.Unlock()
}

func (c *testClient) RequestPermission(ctx context.Context, params *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	c.record(acp.MethodSessionRequestPermission)
	c.mu.Lock()
	hold := c.holdPermissions
	c.mu.Unlock()
	if hold {
		c.notified <- "permission asked"
		<-ctx.Done()
		c.permissionCancelled <- ctx.Err()
		return nil, ctx.Err()
	}
	return &acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Selected: &acp.SelectedPermissionOutcome{OptionId: params.Options[0].OptionId}}}, nil
}

func (c *testClient) SessionUpdate(ctx context.Context, params *acp.SessionNotification) error {
	c.record(acp.MethodSessionUpdate)
	c.mu.Lock()
	c.updates++
	c.mu.Unlock()
	return nil
}

func (c *testClient) ReadTextFile(ctx context.Context, params *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	c.record(acp.MethodFsReadTextFile)
	return &acp.ReadTextFileResponse{Content: "content of " + params.Path}, nil
}

func (c *testClient) WriteTextFile(ctx context.Context, params *acp.WriteTextFileRequest) (*acp.WriteTextFileResponse, error) {
	c.record(acp.MethodFsWriteTextFile)
	return &acp.WriteTextFileResponse{}, nil
}

func (c *testClient) CreateTerminal(ctx context.Context, params *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
	c.record(acp.MethodTerminalCreate)
	return &acp.CreateTerminalResponse{TerminalId: "t-1"}, nil
}

func (c *testClient) TerminalOutput(ctx context.Context, params *acp.TerminalOutputRequest) (*acp.TerminalOutputResponse, error) {
	c.record(acp.MethodTerminalOutput)
	return &acp.TerminalOutputResponse{Output: "out"}, nil
}

func (c *testClient) WaitForTerminalExit(ctx context.Context, params *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error) {
	c.record(acp.MethodTerminalWaitForExit)
	code := uint32(7)
	return &acp.WaitForTerminalExitResponse{ExitCode: &code}, nil
}

func (c *testClient) KillTerminal(ctx context.Context, params *acp.KillTerminalRequest) (*acp.KillTerminalResponse, error) {
	c.record(acp.MethodTerminalKill)
	return &acp.KillTerminalResponse{}, nil
}

func (c *testClient) ReleaseTerminal(ctx context.Context, params *acp.ReleaseTerminalRequest) (*acp.ReleaseTerminalResponse, error) {
	c.record(acp.MethodTerminalRelease)
	return &acp.ReleaseTerminalResponse{}, nil
}

func (c *testClient) CreateElicitation(ctx context.Context, params *acp.CreateElicitationRequest) (*acp.CreateElicitationResponse, error) {
	c.record(acp.MethodElicitationCreate)
	if params.Mode.Url == nil || params.Mode.Url.Scope.Session == nil {
		return nil, acp.InvalidParams()
	}
	return &acp.CreateElicitationResponse{Action: acp.CreateElicitationResponseAction{Accept: &acp.ElicitationAcceptAction{}}}, nil
}

func (c *testClient) CompleteElicitation(ctx context.Context, params *acp.CompleteElicitationNotification) error {
	c.record(acp.MethodElicitationComplete)
	return nil
}

func (c *testClient) ExtMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	c.record(method)
	return params, nil
}

func (c *testClient) ExtNotification(ctx context.Context, method string, params json.RawMessage) error {
	if method == "_test/handled" {
		var body struct{ Method string }
		_ = json.Unmarshal(params, &body)
		method = "handled " + body.Method
	}
	c.notified <- method
	return nil
}

// spawnTestAgent starts this test binary as the test agent.
func spawnTestAgent(t *testing.T, client *testClient) *acp.ClientSideConnection {
	t.Helper()
	stream := acp.SpawnStream(os.Args[0], []string{"-test.run=^$"}, &acp.SpawnOptions{Env: map[string]string{"ACP_GO_TEST_ROLE": "agent"}})
	conn, err := acp.NewClientSideConnection(func(*acp.ClientSideConnection) acp.Client { return client }, stream, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func prompt(session acp.SessionId, text string) *acp.PromptRequest {
	return &acp.PromptRequest{SessionId: session, Prompt: []acp.ContentBlock{{Text: &acp.TextContent{Text: text}}}}
}

func startSession(t *testing.T, agent *acp.ClientSideConnection) acp.SessionId {
	t.Helper()
	ctx := context.Background()
	if _, err := agent.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: acp.CurrentProtocolVersion}); err != nil {
		t.Fatal(err)
	}
	session, err := agent.NewSession(ctx, &acp.NewSessionRequest{Cwd: "/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	return session.SessionId
}

// waitFor waits for notification `want` (others are skipped).
func waitFor(t *testing.T, client *testClient, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-client.notified:
			if got == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %q within 10 s", want)
		}
	}
}

// waitForAll waits until each of wants was notified (in any order).
func waitForAll(t *testing.T, client *testClient, wants []string) {
	t.Helper()
	missing := map[string]bool{}
	for _, want := range wants {
		missing[want] = true
	}
	deadline := time.After(10 * time.Second)
	for len(missing) > 0 {
		select {
		case got := <-client.notified:
			delete(missing, got)
		case <-deadline:
			t.Fatalf("not notified within 10 s: %v", missing)
		}
	}
}

// schemaMethods reads the wire names of one side's methods from the
// official schema (x-method / x-side), not from a copy.
func schemaMethods(t *testing.T, side string) []string {
	t.Helper()
	data, err := os.ReadFile("../schema/v1/schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs map[string]struct {
			Method string `json:"x-method"`
			Side   string `json:"x-side"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, def := range schema.Defs {
		if def.Method != "" && def.Side == side {
			set[def.Method] = true
		}
	}
	var methods []string
	for method := range set {
		methods = append(methods, method)
	}
	sort.Strings(methods)
	return methods
}

func TestEveryMethodBothWays(t *testing.T) {
	client := newTestClient()
	agent := spawnTestAgent(t, client)
	ctx := context.Background()
	session := startSession(t, agent)

	if _, err := agent.Authenticate(ctx, &acp.AuthenticateRequest{MethodId: "token"}); err != nil {
		t.Error("authenticate:", err)
	}
	if _, err := agent.Authenticate(ctx, &acp.AuthenticateRequest{MethodId: "nope"}); acp.CodeOf(err) != acp.CodeAuthRequired {
		t.Error("authenticate with an unknown method: want -32000, got", err)
	}
	if _, err := agent.LoadSession(ctx, &acp.LoadSessionRequest{SessionId: session, Cwd: "/tmp", McpServers: nil}); err != nil {
		t.Error("session/load:", err)
	}
	list, err := agent.ListSessions(ctx, &acp.ListSessionsRequest{})
	if err != nil || len(list.Sessions) != 1 || list.Sessions[0].SessionId != "s-1" {
		t.Error("session/list:", list, err)
	}
	if _, err := agent.ResumeSession(ctx, &acp.ResumeSessionRequest{SessionId: session, Cwd: "/tmp"}); err != nil {
		t.Error("session/resume:", err)
	}
	if _, err := agent.SetSessionMode(ctx, &acp.SetSessionModeRequest{SessionId: session, ModeId: "fast"}); err != nil {
		t.Error("session/set_mode:", err)
	}
	if _, err := agent.SetSessionConfigOption(ctx, &acp.SetSessionConfigOptionRequest{
		SessionId: session, ConfigId: "verbose",
		Kind: acp.SetSessionConfigOptionRequestKind{Boolean: &acp.SetSessionConfigOptionRequestBoolean{Value: true}},
	}); err != nil {
		t.Error("session/set_config_option:", err)
	}
	turn, err := agent.Prompt(ctx, prompt(session, "client-methods"))
	if err != nil || turn.StopReason != acp.StopReasonEndTurn {
		t.Fatal("session/prompt (the agent calls every client method):", turn, err)
	}
	if err := agent.Cancel(ctx, &acp.CancelNotification{SessionId: session}); err != nil {
		t.Error("session/cancel:", err)
	}
	if _, err := agent.CloseSession(ctx, &acp.CloseSessionRequest{SessionId: session}); err != nil {
		t.Error("session/close:", err)
	}
	if _, err := agent.DeleteSession(ctx, &acp.DeleteSessionRequest{SessionId: session}); err != nil {
		t.Error("session/delete:", err)
	}
	if _, err := agent.Logout(ctx, &acp.LogoutRequest{}); err != nil {
		t.Error("logout:", err)
	}
	var echoed map[string]int
	if err := agent.ExtMethod(ctx, "_test/echo", map[string]int{"n": 3}, &echoed); err != nil || echoed["n"] != 3 {
		t.Error("an extension request to the agent:", echoed, err)
	}

	// Every agent method of the schema reached the Go agent's handler.
	var handled []string
	for _, method := range schemaMethods(t, "agent") {
		handled = append(handled, "handled "+method)
	}
	waitForAll(t, client, handled)
	// Every client method of the schema reached the Go client's handler.
	client.mu.Lock()
	defer client.mu.Unlock()
	for _, method := range schemaMethods(t, "client") {
		if client.handled[method] == 0 {
			t.Errorf("the client never handled %s", method)
		}
	}
	if client.handled["_test/echo"] != 1 {
		t.Error("the client did not handle the agent's extension request")
	}
}

// Each method of the schema can be sent by the connection of the other side
// (found by its params type, as the generator names them).
func TestPeerMethodsCoverTheSchema(t *testing.T) {
	data, err := os.ReadFile("../schema/v1/schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs map[string]map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	senders := map[string]reflect.Type{
		"agent":  reflect.TypeOf(&acp.ClientSideConnection{}),
		"client": reflect.TypeOf(&acp.AgentSideConnection{}),
	}
	checked := 0
	for name, def := range schema.Defs {
		side, _ := def["x-side"].(string)
		sender, ok := senders[side]
		if !ok || def["x-method"] == nil || strings.HasSuffix(name, "Response") {
			continue
		}
		found := false
		for i := 0; i < sender.NumMethod(); i++ {
			method := sender.Method(i).Type
			if method.NumIn() == 3 && method.In(2).String() == "*acpengine."+name {
				found = true
			}
		}
		if !found {
			t.Errorf("%s has no method that sends %s (%s)", sender, def["x-method"], name)
		}
		checked++
	}
	if checked < 20 {
		t.Errorf("only %d methods found in the schema", checked)
	}
}

func TestValidationErrorsKeepTheConnection(t *testing.T) {
	stream := acp.SpawnStream(os.Args[0], []string{"-test.run=^$"}, &acp.SpawnOptions{Env: map[string]string{"ACP_GO_TEST_ROLE": "agent"}})
	raw, err := acp.NewConnection(rawHandler{}, stream, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ctx := context.Background()
	err = raw.Call(ctx, acp.MethodSessionPrompt, map[string]any{"sessionId": 5, "prompt": "no"}, nil)
	if acp.CodeOf(err) != acp.CodeInvalidParams {
		t.Errorf("bad params: want -32602, got %v", err)
	}
	err = raw.Call(ctx, "no/such_method", map[string]any{}, nil)
	if acp.CodeOf(err) != acp.CodeMethodNotFound {
		t.Errorf("an unknown method: want -32601, got %v", err)
	}
	var result acp.InitializeResponse
	if err := raw.Call(ctx, acp.MethodInitialize, map[string]any{"protocolVersion": 1}, &result); err != nil || result.ProtocolVersion != 1 {
		t.Errorf("the connection keeps working: %v %v", result, err)
	}

	// What we send is checked too: nothing goes out.
	client := newTestClient()
	agent := spawnTestAgent(t, client)
	err = agent.Conn.Call(ctx, acp.MethodSessionPrompt, map[string]any{"sessionId": 5}, nil)
	if acp.CodeOf(err) != acp.CodeInvalidParams {
		t.Errorf("sending bad params: want -32602, got %v", err)
	}
}

type rawHandler struct{}

func (rawHandler) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	return nil, acp.MethodNotFound(method)
}

func (rawHandler) HandleNotification(ctx context.Context, method string, params json.RawMessage) error {
	return nil
}

func TestHandlerErrorsAndPanics(t *testing.T) {
	client := newTestClient()
	agent := spawnTestAgent(t, client)
	ctx := context.Background()
	session := startSession(t, agent)

	_, err := agent.Prompt(ctx, prompt(session, "panic"))
	var requestError *acp.RequestError
	if !errors.As(err, &requestError) || requestError.Code != acp.CodeInternalError {
		t.Errorf("a panic: want -32603, got %v", err)
	}
	_, err = agent.Prompt(ctx, prompt(session, "plain-error"))
	if !errors.As(err, &requestError) || requestError.Code != acp.CodeInternalError || strings.Contains(err.Error(), "secret") {
		t.Errorf("a plain error: want a bare -32603, got %v", err)
	}
	_, err = agent.Prompt(ctx, prompt(session, "error"))
	if !errors.As(err, &requestError) || requestError.Code != acp.CodeResourceNotFound || !strings.Contains(string(requestError.Data), "file:///missing") {
		t.Errorf("a RequestError goes out as itself, got %v", err)
	}
	// The agent lives on.
	if turn, err := agent.Prompt(ctx, prompt(session, "updates 1")); err != nil || turn.StopReason != acp.StopReasonEndTurn {
		t.Errorf("after a panic: %v %v", turn, err)
	}
}

func TestUpdatesArriveBeforeTheTurnEnds(t *testing.T) {
	client := newTestClient()
	agent := spawnTestAgent(t, client)
	session := startSession(t, agent)
	for _, n := range []int{1, 100, 5000} {
		client.mu.Lock()
		client.updates = 0
		client.mu.Unlock()
		if _, err := agent.Prompt(context.Background(), prompt(session, "updates "+strconv.Itoa(n))); err != nil {
			t.Fatal(err)
		}
		client.mu.Lock()
		got := client.updates
		client.mu.Unlock()
		if got != n {
			t.Errorf("%d updates sent, %d handled before the turn's response", n, got)
		}
	}
}

func TestCancellationBothWays(t *testing.T) {
	client := newTestClient()
	agent := spawnTestAgent(t, client)
	session := startSession(t, agent)

	// Ours: a cancelled ctx cancels the agent's handler.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := agent.Prompt(ctx, prompt(session, "wait-cancel"))
		done <- err
	}()
	waitFor(t, client, "_test/started")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled prompt returns context.Canceled, got %v", err)
	}
	waitFor(t, client, "_test/cancelled")

	// Theirs: the agent's cancelled request cancels our handler's ctx.
	client.mu.Lock()
	client.holdPermissions = true
	client.mu.Unlock()
	if turn, err := agent.Prompt(context.Background(), prompt(session, "cancel-permission")); err != nil || turn.StopReason != acp.StopReasonEndTurn {
		t.Errorf("the agent cancels its permission request: %v %v", turn, err)
	}
	waitFor(t, client, "permission asked")
	select {
	case err := <-client.permissionCancelled:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("our handler's ctx: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("our permission handler's ctx was not cancelled")
	}

	// session/cancel answers the session's open permission requests `cancelled`.
	turns := make(chan *acp.PromptResponse, 1)
	go func() {
		turn, _ := agent.Prompt(context.Background(), prompt(session, "cancel-me"))
		turns <- turn
	}()
	waitFor(t, client, "permission asked")
	if err := agent.Cancel(context.Background(), &acp.CancelNotification{SessionId: session}); err != nil {
		t.Fatal(err)
	}
	if turn := <-turns; turn == nil || turn.StopReason != acp.StopReasonCancelled {
		t.Errorf("after session/cancel: %v", turn)
	}
}

func TestPeerCrashFailsEveryPendingRequest(t *testing.T) {
	client := newTestClient()
	agent := spawnTestAgent(t, client)
	session := startSession(t, agent)
	const pending = 5
	errs := make(chan error, pending)
	for i := 0; i < pending; i++ {
		go func() {
			_, err := agent.Prompt(context.Background(), prompt(session, "hang"))
			errs <- err
		}()
	}
	for i := 0; i < pending; i++ {
		waitFor(t, client, "_test/started")
	}
	if err := syscall.Kill(agent.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < pending; i++ {
		if err := <-errs; !acp.IsConnectionClosed(err) {
			t.Errorf("a pending request after the crash: %v", err)
		}
	}
	<-agent.Done()
	if _, err := agent.Prompt(context.Background(), prompt(session, "updates 1")); !acp.IsConnectionClosed(err) {
		t.Errorf("a request after the crash: %v", err)
	}
	if agent.CloseReason() == "" {
		t.Error("no close reason")
	}
}

func TestNotificationHandlerCannotWait(t *testing.T) {
	client := &waitingClient{testClient: newTestClient(), result: make(chan error, 1)}
	stream := acp.SpawnStream(os.Args[0], []string{"-test.run=^$"}, &acp.SpawnOptions{Env: map[string]string{"ACP_GO_TEST_ROLE": "agent"}})
	agent, err := acp.NewClientSideConnection(func(conn *acp.ClientSideConnection) acp.Client {
		client.conn = conn
		return client
	}, stream, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	session := startSession(t, agent)
	if _, err := agent.Prompt(context.Background(), prompt(session, "updates 1")); err != nil {
		t.Fatal(err)
	}
	if err := <-client.result; err == nil || !strings.Contains(err.Error(), "notification handler") {
		t.Errorf("a request from a notification handler: want an error at once, got %v", err)
	}
}

// waitingClient sends a request from its notification handler (a mistake).
type waitingClient struct {
	*testClient
	conn   *acp.ClientSideConnection
	result chan error
}

func (c *waitingClient) SessionUpdate(ctx context.Context, params *acp.SessionNotification) error {
	_, err := c.conn.ListSessions(ctx, &acp.ListSessionsRequest{})
	c.result <- err
	return nil
}

// Only one Call at a time waits in C; the others get their answers from the
// dispatch thread: cancellation and answers work the same there.
func TestConcurrentCallsAnswersAndCancellation(t *testing.T) {
	client := newTestClient()
	agent := spawnTestAgent(t, client)
	session := startSession(t, agent)
	hanging := make(chan error, 1)
	go func() {
		_, err := agent.Prompt(context.Background(), prompt(session, "hang"))
		hanging <- err
	}()
	waitFor(t, client, "_test/started")

	// Answered while the hanging prompt's Call waits.
	for i := 0; i < 20; i++ {
		if turn, err := agent.Prompt(context.Background(), prompt(session, "updates 3")); err != nil || turn.StopReason != acp.StopReasonEndTurn {
			t.Fatalf("a second prompt: %v %v", turn, err)
		}
	}
	// Cancelled while the hanging prompt's Call waits.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := agent.Prompt(ctx, prompt(session, "wait-cancel"))
		done <- err
	}()
	waitFor(t, client, "_test/started")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled prompt returns context.Canceled, got %v", err)
	}
	waitFor(t, client, "_test/cancelled")

	// Closing fails the hanging prompt.
	if err := agent.Close(); err != nil {
		t.Error(err)
	}
	if err := <-hanging; !acp.IsConnectionClosed(err) {
		t.Errorf("the hanging prompt after Close: %v", err)
	}
}

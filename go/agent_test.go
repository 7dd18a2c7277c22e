package acpengine_test

// The test agent: this test binary, started again with ACP_GO_TEST_ROLE=agent
// (so every test talks to a real process over real pipes). It handles every
// method of the agent side, and tells the client each method it handled
// with an extension notification (_test/handled). Its prompts are
// scenarios: see prompt().

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	acp "github.com/acp-engine/acp-engine/go"
)

type testAgent struct {
	client *acp.AgentSideConnection
}

func runTestAgent() int {
	err := acp.RunAgent(func(client *acp.AgentSideConnection) acp.Agent { return &testAgent{client: client} })
	if err != nil {
		fmt.Fprintln(os.Stderr, "test agent:", err)
		return 1
	}
	return 0
}

// handled tells the client that method reached its handler.
func (a *testAgent) handled(method string) {
	_ = a.client.ExtNotification(context.Background(), "_test/handled", map[string]string{"method": method})
}

func (a *testAgent) Initialize(ctx context.Context, params *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	a.handled(acp.MethodInitialize)
	return &acp.InitializeResponse{ProtocolVersion: params.ProtocolVersion, AgentInfo: &acp.Implementation{Name: "go-test-agent", Version: "1"}}, nil
}

func (a *testAgent) Authenticate(ctx context.Context, params *acp.AuthenticateRequest) (*acp.AuthenticateResponse, error) {
	a.handled(acp.MethodAuthenticate)
	if params.MethodId != "token" {
		return nil, acp.AuthRequired()
	}
	return &acp.AuthenticateResponse{}, nil
}

func (a *testAgent) Logout(ctx context.Context, params *acp.LogoutRequest) (*acp.LogoutResponse, error) {
	a.handled(acp.MethodLogout)
	return &acp.LogoutResponse{}, nil
}

func (a *testAgent) NewSession(ctx context.Context, params *acp.NewSessionRequest) (*acp.NewSessionResponse, error) {
	a.handled(acp.MethodSessionNew)
	return &acp.NewSessionResponse{SessionId: acp.SessionId("s-" + params.Cwd)}, nil
}

func (a *testAgent) LoadSession(ctx context.Context, params *acp.LoadSessionRequest) (*acp.LoadSessionResponse, error) {
	a.handled(acp.MethodSessionLoad)
	return &acp.LoadSessionResponse{}, nil
}

func (a *testAgent) ListSessions(ctx context.Context, params *acp.ListSessionsRequest) (*acp.ListSessionsResponse, error) {
	a.handled(acp.MethodSessionList)
	return &acp.ListSessionsResponse{Sessions: []acp.SessionInfo{{SessionId: "s-1", Cwd: "/tmp"}}}, nil
}

func (a *testAgent) DeleteSession(ctx context.Context, params *acp.DeleteSessionRequest) (*acp.DeleteSessionResponse, error) {
	a.handled(acp.MethodSessionDelete)
	return &acp.DeleteSessionResponse{}, nil
}

func (a *testAgent) ResumeSession(ctx context.Context, params *acp.ResumeSessionRequest) (*acp.ResumeSessionResponse, error) {
	a.handled(acp.MethodSessionResume)
	return &acp.ResumeSessionResponse{}, nil
}

func (a *testAgent) CloseSession(ctx context.Context, params *acp.CloseSessionRequest) (*acp.CloseSessionResponse, error) {
	a.handled(acp.MethodSessionClose)
	return &acp.CloseSessionResponse{}, nil
}

func (a *testAgent) SetSessionMode(ctx context.Context, params *acp.SetSessionModeRequest) (*acp.SetSessionModeResponse, error) {
	a.handled(acp.MethodSessionSetMode)
	return &acp.SetSessionModeResponse{}, nil
}

func (a *testAgent) SetSessionConfigOption(ctx context.Context, params *acp.SetSessionConfigOptionRequest) (*acp.SetSessionConfigOptionResponse, error) {
	a.handled(acp.MethodSessionSetConfigOption)
	if params.Kind.Boolean == nil || !params.Kind.Boolean.Value {
		return nil, acp.InvalidParams().WithData("expected the boolean true")
	}
	return &acp.SetSessionConfigOptionResponse{}, nil
}

func (a *testAgent) Cancel(ctx context.Context, params *acp.CancelNotification) error {
	a.handled(acp.MethodSessionCancel)
	return nil
}

func (a *testAgent) Prompt(ctx context.Context, params *acp.PromptRequest) (*acp.PromptResponse, error) {
	a.handled(acp.MethodSessionPrompt)
	var text string
	for _, block := range params.Prompt {
		if block.Text != nil {
			text += block.Text.Text
		}
	}
	scenario, argument, _ := strings.Cut(text, " ")
	session := params.SessionId
	switch scenario {
	case "updates":
		// Ordering: the client must have every update before this answer.
		n, _ := strconv.Atoi(argument)
		for i := 0; i < n; i++ {
			update := acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: strconv.Itoa(i)}}}}
			if err := a.client.SessionUpdate(ctx, &acp.SessionNotification{SessionId: session, Update: update}); err != nil {
				return nil, err
			}
		}
	case "client-methods":
		if err := a.callClientMethods(ctx, session); err != nil {
			return nil, acp.InternalError().WithData(err.Error())
		}
	case "wait-cancel":
		// The client cancels the request: this ctx ends.
		_ = a.client.ExtNotification(context.Background(), "_test/started", nil)
		<-ctx.Done()
		_ = a.client.ExtNotification(context.Background(), "_test/cancelled", map[string]string{"err": ctx.Err().Error()})
		return nil, ctx.Err()
	case "cancel-permission":
		// We cancel our own request: the client's handler ctx ends.
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_, err := a.client.RequestPermission(short, permissionRequest(session))
		if !errors.Is(err, context.DeadlineExceeded) {
			return nil, acp.InternalError().WithData(fmt.Sprintf("expected the deadline, got %v", err))
		}
	case "cancel-me":
		// The client sends session/cancel, which answers this `cancelled`.
		response, err := a.client.RequestPermission(ctx, permissionRequest(session))
		if err != nil {
			return nil, err
		}
		if response.Outcome.Cancelled {
			return &acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
		}
	case "hang":
		_ = a.client.ExtNotification(context.Background(), "_test/started", nil)
		select {}
	case "panic":
		panic("a handler bug")
	case "error":
		return nil, acp.ResourceNotFound("file:///missing")
	case "plain-error":
		return nil, errors.New("secret detail that stays here")
	}
	return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

func permissionRequest(session acp.SessionId) *acp.RequestPermissionRequest {
	return &acp.RequestPermissionRequest{
		SessionId: session,
		ToolCall:  acp.ToolCallUpdate{ToolCallId: "call-1"},
		Options:   []acp.PermissionOption{{OptionId: "allow", Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce}},
	}
}

// callClientMethods sends every method of the client side and checks what
// the test client answers.
func (a *testAgent) callClientMethods(ctx context.Context, session acp.SessionId) error {
	c := a.client
	file, err := c.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionId: session, Path: "/x"})
	if err != nil || file.Content != "content of /x" {
		return fmt.Errorf("fs/read_text_file: %v %v", file, err)
	}
	if _, err := c.WriteTextFile(ctx, &acp.WriteTextFileRequest{SessionId: session, Path: "/y", Content: "data"}); err != nil {
		return fmt.Errorf("fs/write_text_file: %v", err)
	}
	permission, err := c.RequestPermission(ctx, permissionRequest(session))
	if err != nil || permission.Outcome.Selected == nil || permission.Outcome.Selected.OptionId != "allow" {
		return fmt.Errorf("session/request_permission: %v %v", permission, err)
	}
	terminal, err := c.CreateTerminal(ctx, &acp.CreateTerminalRequest{SessionId: session, Command: "echo"})
	if err != nil || terminal.ID != "t-1" {
		return fmt.Errorf("terminal/create: %v %v", terminal, err)
	}
	output, err := terminal.CurrentOutput(ctx)
	if err != nil || output.Output != "out" {
		return fmt.Errorf("terminal/output: %v %v", output, err)
	}
	exit, err := terminal.WaitForExit(ctx)
	if err != nil || exit.ExitCode == nil || *exit.ExitCode != 7 {
		return fmt.Errorf("terminal/wait_for_exit: %v %v", exit, err)
	}
	if _, err := terminal.Kill(ctx); err != nil {
		return fmt.Errorf("terminal/kill: %v", err)
	}
	if err := terminal.Release(ctx); err != nil || terminal.Release(ctx) != nil || !terminal.Released() {
		return fmt.Errorf("terminal/release: %v", err)
	}
	elicitation, err := c.CreateElicitation(ctx, &acp.CreateElicitationRequest{
		Message: "Your name?",
		Mode: acp.CreateElicitationRequestMode{Url: &acp.ElicitationUrlMode{
			ElicitationId: "e-1", Url: "https://example.com/form",
			Scope: acp.ElicitationScope{Session: &acp.ElicitationSessionScope{SessionId: session}},
		}},
	})
	if err != nil || elicitation.Action.Accept == nil {
		return fmt.Errorf("elicitation/create: %v %v", elicitation, err)
	}
	if err := c.CompleteElicitation(ctx, &acp.CompleteElicitationNotification{ElicitationId: "e-1"}); err != nil {
		return fmt.Errorf("elicitation/complete: %v", err)
	}
	var ext map[string]string
	if err := c.ExtMethod(ctx, "_test/echo", map[string]string{"say": "hi"}, &ext); err != nil || ext["say"] != "hi" {
		return fmt.Errorf("_test/echo: %v %v", ext, err)
	}
	return c.SessionUpdate(ctx, &acp.SessionNotification{SessionId: session, Update: acp.SessionUpdate{
		Plan: &acp.Plan{Entries: []acp.PlanEntry{}},
	}})
}

// So that the test agent answers unknown extension requests itself.
func (a *testAgent) ExtMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	a.handled(method)
	return params, nil
}

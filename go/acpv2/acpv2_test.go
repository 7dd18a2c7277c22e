package acpv2_test

// ACP v2's typed connections against the official TypeScript SDK 2.4.0's
// `experimental/v2` (interop/ts, installed by interop/setup.sh): a typed
// agent in this test binary under the official v2 client, and a typed
// client driving the official router agent, through initialize, a session
// and a turn told in state updates.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/acp-engine/acp-engine/go"
	"github.com/acp-engine/acp-engine/go/acpv2"
)

func TestMain(m *testing.M) {
	if os.Getenv("ACP_ACPV2_TEST_ROLE") == "agent" {
		os.Exit(runEchoAgent())
	}
	os.Exit(m.Run())
}

// echoAgent says "echo: <text>" to each prompt: it acknowledges the prompt
// with a messageId, then tells the turn (running, the chunk, idle).
type echoAgent struct {
	conn     *acpv2.AgentSideConnection
	mu       sync.Mutex
	sessions int
}

func (a *echoAgent) Initialize(ctx context.Context, params *acpv2.InitializeRequest) (*acpv2.InitializeResponse, error) {
	if params.Info.Name == "" {
		return nil, acp.InvalidParams()
	}
	return &acpv2.InitializeResponse{ProtocolVersion: 2, Info: acpv2.Implementation{Name: "go-acpv2-agent", Version: "1.0.0"}}, nil
}

func (a *echoAgent) NewSession(ctx context.Context, params *acpv2.NewSessionRequest) (*acpv2.NewSessionResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sessions++
	return &acpv2.NewSessionResponse{SessionId: acpv2.SessionId(fmt.Sprintf("s%d", a.sessions))}, nil
}

func (a *echoAgent) Prompt(ctx context.Context, params *acpv2.PromptRequest) (*acpv2.PromptResponse, error) {
	text := ""
	for _, block := range params.Prompt {
		if block.Text != nil {
			text += block.Text.Text
		}
	}
	session := params.SessionId
	go func() {
		send := func(update acpv2.SessionUpdate) {
			_ = a.conn.UpdateSession(context.Background(), &acpv2.UpdateSessionNotification{SessionId: session, Update: update})
		}
		send(acpv2.SessionUpdate{StateUpdate: &acpv2.StateUpdate{Running: &acpv2.RunningStateUpdate{}}})
		send(acpv2.SessionUpdate{AgentMessageChunk: &acpv2.ContentChunk{
			MessageId: "m2",
			Content:   acpv2.ContentBlock{Text: &acpv2.TextContent{Text: "echo: " + text}},
		}})
		idle := &acpv2.IdleStateUpdate{StopReason: acpv2.IdleStateUpdateStopReason{EndTurn: true}}
		send(acpv2.SessionUpdate{StateUpdate: &acpv2.StateUpdate{Idle: idle}})
	}()
	return &acpv2.PromptResponse{MessageId: "m1"}, nil
}

func runEchoAgent() int {
	conn, err := acpv2.NewAgentSideConnection(func(conn *acpv2.AgentSideConnection) acpv2.Agent {
		return &echoAgent{conn: conn}
	}, acp.StdioStream(), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	<-conn.Done()
	return 0
}

func officialTS(t *testing.T, script string) string {
	t.Helper()
	ts, err := filepath.Abs(filepath.Join("..", "..", "interop", "ts"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ts, "node_modules", "@agentclientprotocol", "sdk")); err != nil {
		t.Fatalf("the official TypeScript SDK is not installed: run interop/setup.sh (%v)", err)
	}
	return filepath.Join(ts, script)
}

func TestTheOfficialV2ClientDrivesATypedAgent(t *testing.T) {
	command := exec.Command("node", officialTS(t, "v2-client.mjs"), os.Args[0], "-test.run=^$")
	command.Env = append(os.Environ(), "ACP_ACPV2_TEST_ROLE=agent", "ACP_INTEROP_TRACE=")
	out, err := command.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || lines[len(lines)-1] != "v2 ok" {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), `agent said "echo: Hello"`) {
		t.Fatalf("the official client did not read the agent's chunk:\n%s", out)
	}
}

// turnClient keeps what the agent tells of its turns and says when one ended.
type turnClient struct {
	mu    sync.Mutex
	said  string
	ended chan acpv2.IdleStateUpdateStopReason
}

func (c *turnClient) RequestPermission(ctx context.Context, params *acpv2.RequestPermissionRequest) (*acpv2.RequestPermissionResponse, error) {
	return nil, acp.MethodNotFound("session/request_permission")
}

func (c *turnClient) UpdateSession(ctx context.Context, params *acpv2.UpdateSessionNotification) error {
	update := params.Update
	switch {
	case update.AgentMessageChunk != nil && update.AgentMessageChunk.Content.Text != nil:
		c.mu.Lock()
		c.said += update.AgentMessageChunk.Content.Text.Text
		c.mu.Unlock()
	case update.StateUpdate != nil && update.StateUpdate.Idle != nil:
		select {
		case c.ended <- update.StateUpdate.Idle.StopReason:
		default: // the first idle ended the turn
		}
	}
	return nil
}

func TestATypedClientDrivesTheOfficialRouterAgent(t *testing.T) {
	client := &turnClient{ended: make(chan acpv2.IdleStateUpdateStopReason, 1)}
	stream := acp.SpawnStream("node", []string{officialTS(t, "dual-agent.mjs")}, nil)
	conn, err := acpv2.NewClientSideConnection(func(*acpv2.ClientSideConnection) acpv2.Client { return client }, stream, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	initialized, err := conn.Initialize(ctx, &acpv2.InitializeRequest{ProtocolVersion: 2, Info: acpv2.Implementation{Name: "go-acpv2-client", Version: "1.0.0"}})
	if err != nil {
		t.Fatal(err)
	}
	if initialized.ProtocolVersion != 2 || initialized.Info.Name != "official-dual-agent" {
		t.Fatalf("initialize: %+v", initialized)
	}
	session, err := conn.NewSession(ctx, &acpv2.NewSessionRequest{Cwd: "/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	prompt := []acpv2.ContentBlock{{Text: &acpv2.TextContent{Text: "Hello"}}}
	acknowledged, err := conn.Prompt(ctx, &acpv2.PromptRequest{SessionId: session.SessionId, Prompt: prompt})
	if err != nil {
		t.Fatal(err)
	}
	if acknowledged.MessageId == "" {
		t.Fatal("the prompt's acknowledgement has no messageId")
	}
	select {
	case stop := <-client.ended:
		if !stop.EndTurn {
			t.Fatalf("the turn ended with %+v, not end_turn", stop)
		}
	case <-ctx.Done():
		t.Fatal("the session never went idle")
	}
	client.mu.Lock()
	defer client.mu.Unlock()
	if client.said != "echo: Hello" {
		t.Fatalf("the agent said %q", client.said)
	}
}

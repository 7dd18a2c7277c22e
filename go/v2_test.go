package acpengine_test

// The ACP version 2 draft on the untyped side connection
// (NewSideConnection, Options.ProtocolVersions): a dual-version agent in
// this test binary, driven by the official TypeScript SDK 2.4.0's v2 client
// and its v1 client (interop/ts, installed by interop/setup.sh); the engine
// selects the version at initialize and checks every message against it.
// A v2-only connection refuses a v1 client's initialize with -32022.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goccy/go-json"

	acp "github.com/acp-engine/acp-engine/go"
)

// dualAgent answers initialize, session/new and session/prompt in the
// version its connection selected: on a prompt it says "echo: <text>"; in v1
// as an update and the prompt's answer, in v2 as an acknowledgement with a
// message id and state updates after it.
type dualAgent struct {
	conn *acp.Conn
}

func newDualAgent(conn *acp.Conn) acp.Handler { return &dualAgent{conn: conn} }

func (a *dualAgent) update(sessionID string, update map[string]any) {
	_ = a.conn.Notify(context.Background(), acp.MethodSessionUpdate, map[string]any{"sessionId": sessionID, "update": update})
}

func (a *dualAgent) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	info := map[string]string{"name": "go-dual-agent", "version": "1.0.0"}
	switch method {
	case acp.MethodInitialize:
		if a.conn.ProtocolVersion() == 2 {
			return map[string]any{"protocolVersion": 2, "info": info, "capabilities": map[string]any{}}, nil
		}
		return map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{}, "agentInfo": info}, nil
	case acp.MethodSessionNew:
		return map[string]string{"sessionId": "s1"}, nil
	case acp.MethodSessionPrompt:
		var prompt struct {
			SessionID string `json:"sessionId"`
			Prompt    []struct{ Type, Text string }
		}
		if err := json.Unmarshal(params, &prompt); err != nil {
			return nil, acp.InvalidParams()
		}
		text := ""
		for _, block := range prompt.Prompt {
			text += block.Text
		}
		chunk := map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]string{"type": "text", "text": "echo: " + text}}
		if a.conn.ProtocolVersion() == 1 {
			a.update(prompt.SessionID, chunk)
			return map[string]string{"stopReason": "end_turn"}, nil
		}
		// v2 acknowledges the prompt; the turn goes on after the answer.
		go func() {
			time.Sleep(10 * time.Millisecond)
			a.update(prompt.SessionID, map[string]any{"sessionUpdate": "state_update", "state": "running"})
			chunk["messageId"] = "m2"
			a.update(prompt.SessionID, chunk)
			a.update(prompt.SessionID, map[string]any{"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
		}()
		return map[string]string{"messageId": "m1"}, nil
	}
	return nil, acp.MethodNotFound(method)
}

func (a *dualAgent) HandleNotification(ctx context.Context, method string, params json.RawMessage) error {
	return nil
}

// runDualAgent serves one client on this process's stdio (ACP_GO_TEST_ROLE=dual-agent).
func runDualAgent() int {
	conn, err := acp.NewSideConnection(acp.SideAgent, newDualAgent, acp.StdioStream(), &acp.Options{ProtocolVersions: []int{1, 2}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	<-conn.Done()
	return 0
}

func officialTS(t *testing.T, script string) string {
	t.Helper()
	ts, err := filepath.Abs(filepath.Join("..", "interop", "ts"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ts, "node_modules", "@agentclientprotocol", "sdk")); err != nil {
		t.Fatalf("the official TypeScript SDK is not installed: run interop/setup.sh (%v)", err)
	}
	return filepath.Join(ts, script)
}

func TestTheOfficialClientsGetTheVersionTheyAskFor(t *testing.T) {
	for script, want := range map[string]string{"v2-client.mjs": "v2 ok", "readme-client.mjs": "readme ok"} {
		command := exec.Command("node", officialTS(t, script), os.Args[0], "-test.run=^$")
		command.Env = append(os.Environ(), "ACP_GO_TEST_ROLE=dual-agent", "ACP_INTEROP_TRACE=")
		out, err := command.CombinedOutput()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err != nil || lines[len(lines)-1] != want {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
	}
}

func TestAV2OnlyConnectionRefusesAV1Initialize(t *testing.T) {
	var toAgent, toClient [2]int
	if err := syscall.Pipe(toAgent[:]); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Pipe(toClient[:]); err != nil {
		t.Fatal(err)
	}
	agentConn, err := acp.NewSideConnection(acp.SideAgent, newDualAgent, acp.FDStream(toAgent[0], toClient[1]), &acp.Options{ProtocolVersions: []int{2}})
	if err != nil {
		t.Fatal(err)
	}
	defer agentConn.Close()
	client, err := acp.NewSideConnection(acp.SideClient, newDualAgent, acp.FDStream(toClient[0], toAgent[1]), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for try := 0; try < 2; try++ {
		var result json.RawMessage
		err := client.Call(context.Background(), acp.MethodInitialize, map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, &result)
		var refused *acp.RequestError
		if !errors.As(err, &refused) || refused.Code != acp.CodeUnsupportedProtocolVersion {
			t.Fatalf("try %d: %v", try, err)
		}
	}
	if version := agentConn.ProtocolVersion(); version != 2 {
		t.Fatalf("a v2-only connection speaks %d", version)
	}
	if _, err := acp.NewSideConnection(acp.SideAgent, newDualAgent, acp.FDStream(toAgent[0], toClient[1]), &acp.Options{ProtocolVersions: []int{3}}); err == nil {
		t.Fatal("version 3 was taken")
	}
}

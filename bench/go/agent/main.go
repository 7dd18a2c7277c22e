// The benchmark agent (bench/README.md) in Go on the acpengine package:
// answers initialize, session/new and session/prompt "<scenario> <N>",
// sending what the scenario asks of the client; exits at EOF.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	acp "github.com/acp-engine/acp-engine/go"
)

const largeSize = 16 * 1024 * 1024 // the `large` scenario's file size

type benchAgent struct {
	client *acp.AgentSideConnection
}

func (a *benchAgent) Initialize(ctx context.Context, params *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	return &acp.InitializeResponse{ProtocolVersion: 1, AgentCapabilities: &acp.AgentCapabilities{}, AuthMethods: []acp.AuthMethod{}}, nil
}

func (a *benchAgent) NewSession(ctx context.Context, params *acp.NewSessionRequest) (*acp.NewSessionResponse, error) {
	return &acp.NewSessionResponse{SessionId: "bench-session"}, nil
}

func (a *benchAgent) Cancel(ctx context.Context, params *acp.CancelNotification) error { return nil }

func (a *benchAgent) Prompt(ctx context.Context, params *acp.PromptRequest) (*acp.PromptResponse, error) {
	var text string
	if len(params.Prompt) > 0 && params.Prompt[0].Text != nil {
		text = params.Prompt[0].Text.Text
	}
	scenario, count, _ := strings.Cut(text, " ")
	n, err := strconv.Atoi(count)
	if err != nil {
		return nil, acp.InvalidParams()
	}
	if err := a.run(ctx, params.SessionId, scenario, n); err != nil {
		return nil, err
	}
	return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

func (a *benchAgent) run(ctx context.Context, session acp.SessionId, scenario string, n int) error {
	c := a.client
	read := &acp.ReadTextFileRequest{SessionId: session, Path: "/bench/file.txt"}
	switch scenario {
	case "stream":
		update := &acp.SessionNotification{SessionId: session, Update: acp.SessionUpdate{
			AgentMessageChunk: &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: "chunk of agent text"}}},
		}}
		for i := 0; i < n; i++ {
			if err := c.SessionUpdate(ctx, update); err != nil {
				return err
			}
		}
	case "rpc":
		for i := 0; i < n; i++ {
			if _, err := c.ReadTextFile(ctx, read); err != nil {
				return err
			}
		}
	case "perm":
		for i := 0; i < n; i++ {
			if _, err := c.RequestPermission(ctx, &acp.RequestPermissionRequest{
				SessionId: session,
				ToolCall:  acp.ToolCallUpdate{ToolCallId: acp.ToolCallId(fmt.Sprintf("call-%d", i))},
				Options:   []acp.PermissionOption{{OptionId: "allow", Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce}},
			}); err != nil {
				return err
			}
		}
	case "concurrent":
		// All in flight from this goroutine (Conn.Go, as net/rpc's
		// Client.Go): no goroutine per request.
		done := make(chan *acp.Call, n)
		for i := 0; i < n; i++ {
			c.Go(ctx, acp.MethodFsReadTextFile, read, &acp.ReadTextFileResponse{}, done)
		}
		for i := 0; i < n; i++ {
			if call := <-done; call.Error != nil {
				return call.Error
			}
		}
	case "large":
		content := strings.Repeat("x", largeSize)
		for i := 0; i < n; i++ {
			if _, err := c.WriteTextFile(ctx, &acp.WriteTextFileRequest{SessionId: session, Path: "/bench/large.txt", Content: content}); err != nil {
				return err
			}
			file, err := c.ReadTextFile(ctx, read)
			if err != nil {
				return err
			}
			if len(file.Content) != largeSize {
				return acp.InternalError().WithData("fs/read_text_file: content is not 16 MiB")
			}
		}
	default:
		return acp.InvalidParams().WithData("unknown scenario " + scenario)
	}
	return nil
}

func main() {
	if err := acp.RunAgent(func(c *acp.AgentSideConnection) acp.Agent { return &benchAgent{client: c} }); err != nil {
		fmt.Fprintln(os.Stderr, "go-bench-agent:", err)
		os.Exit(1)
	}
}

// An ACP agent on this process's stdio, built on acpengine's Agent.
//
// On a prompt it streams a reply, asks the user's permission, reads a file
// through the client, writes one, runs `echo hi` in a client terminal and
// reports what it said. The prompt "cancel me" instead waits on a
// permission request until the client cancels the turn, and ends it with
// stop reason cancelled. To a client that can show them (it advertises
// session.notices and session.compaction), the turn also reports a notice
// and a context compaction. (This is the interop contract: see
// interop/README.md.)
//
//	go run ./examples/client go run ./examples/agent
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	acp "github.com/acp-engine/acp-engine/go"
)

type exampleAgent struct {
	client *acp.AgentSideConnection

	mu              sync.Mutex
	sessions        map[acp.SessionId]string // session id -> cwd
	nextSession     int
	clientShowsNews bool // notices and compactions (its capabilities)
	// What the client said it can do: an agent asks only for that.
	clientReads, clientWrites, clientTerminals bool
}

// isTrue reads an optional capability flag.
func isTrue(flag *bool) bool { return flag != nil && *flag }

func (a *exampleAgent) Initialize(ctx context.Context, params *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	if capabilities := params.ClientCapabilities; capabilities != nil {
		a.mu.Lock()
		if fs := capabilities.Fs; fs != nil {
			a.clientReads, a.clientWrites = isTrue(fs.ReadTextFile), isTrue(fs.WriteTextFile)
		}
		a.clientTerminals = isTrue(capabilities.Terminal)
		if session := capabilities.Session; session != nil {
			a.clientShowsNews = session.Notices != nil && session.Compaction != nil
		}
		a.mu.Unlock()
	}
	return &acp.InitializeResponse{
		ProtocolVersion:   acp.CurrentProtocolVersion,
		AgentCapabilities: &acp.AgentCapabilities{},
		AuthMethods:       []acp.AuthMethod{},
		AgentInfo:         &acp.Implementation{Name: "acp-engine-go-example-agent", Version: "0.1.0"},
	}, nil
}

func (a *exampleAgent) NewSession(ctx context.Context, params *acp.NewSessionRequest) (*acp.NewSessionResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.nextSession++
	id := acp.SessionId(fmt.Sprintf("session-%d", a.nextSession))
	a.sessions[id] = params.Cwd
	return &acp.NewSessionResponse{SessionId: id}, nil
}

func (a *exampleAgent) Prompt(ctx context.Context, params *acp.PromptRequest) (*acp.PromptResponse, error) {
	a.mu.Lock()
	cwd, ok := a.sessions[params.SessionId]
	a.mu.Unlock()
	if !ok {
		return nil, acp.SessionNotFound(params.SessionId)
	}
	var text strings.Builder
	for _, block := range params.Prompt {
		if block.Text != nil {
			text.WriteString(block.Text.Text)
		}
	}
	if strings.TrimSpace(text.String()) == "cancel me" {
		// Waits until the client cancels the turn, which answers the
		// permission request `cancelled`.
		allowed, err := a.askPermission(ctx, params.SessionId)
		if err != nil {
			return nil, err
		}
		if allowed == nil {
			return &acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
		}
		return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}
	stop, err := a.sayHello(ctx, params.SessionId, cwd)
	if err != nil {
		return nil, err
	}
	return &acp.PromptResponse{StopReason: stop}, nil
}

func (a *exampleAgent) Cancel(ctx context.Context, params *acp.CancelNotification) error {
	fmt.Fprintf(os.Stderr, "[go-agent] the client cancelled the turn of %s\n", params.SessionId)
	return nil
}

func text(value string) acp.ContentBlock {
	return acp.ContentBlock{Text: &acp.TextContent{Text: value}}
}

func (a *exampleAgent) say(ctx context.Context, session acp.SessionId, value string) error {
	return a.client.SessionUpdate(ctx, &acp.SessionNotification{
		SessionId: session,
		Update:    acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{Content: text(value)}},
	})
}

// askPermission asks to read hello.txt: the user's choice, or nil if the
// turn was cancelled.
func (a *exampleAgent) askPermission(ctx context.Context, session acp.SessionId) (*bool, error) {
	title, kind, status := "Read hello.txt", acp.ToolKindRead, acp.ToolCallStatusPending
	response, err := a.client.RequestPermission(ctx, &acp.RequestPermissionRequest{
		SessionId: session,
		ToolCall:  acp.ToolCallUpdate{ToolCallId: "call-1", Title: &title, Kind: &kind, Status: &status},
		Options: []acp.PermissionOption{
			{OptionId: "allow", Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce},
			{OptionId: "reject", Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
		},
	})
	if err != nil {
		return nil, err
	}
	if selected := response.Outcome.Selected; selected != nil {
		allowed := selected.OptionId == "allow"
		return &allowed, nil
	}
	return nil, nil
}

// news is a notice, and a context compaction from start to end with its
// summary.
func news() []acp.SessionUpdate {
	description := "Older messages were summarized."
	return []acp.SessionUpdate{
		{Notice: &acp.Notice{Severity: acp.NoticeSeverityInfo, Title: "Context compacted", Description: &description}},
		{CompactionUpdate: &acp.CompactionUpdate{CompactionId: "compaction-1", Status: acp.CompactionStatusInProgress}},
		{CompactionSummaryChunk: &acp.CompactionSummaryChunk{CompactionId: "compaction-1", Content: text("The user asked for a greeting.")}},
		{CompactionUpdate: &acp.CompactionUpdate{CompactionId: "compaction-1", Status: acp.CompactionStatusCompleted}},
	}
}

func (a *exampleAgent) sayHello(ctx context.Context, session acp.SessionId, cwd string) (acp.StopReason, error) {
	a.mu.Lock()
	showsNews, reads, writes, terminals := a.clientShowsNews, a.clientReads, a.clientWrites, a.clientTerminals
	a.mu.Unlock()
	if showsNews {
		for _, update := range news() {
			if err := a.client.SessionUpdate(ctx, &acp.SessionNotification{SessionId: session, Update: update}); err != nil {
				return "", err
			}
		}
	}
	if err := a.say(ctx, session, "Hello! "); err != nil {
		return "", err
	}
	if !reads {
		if err := a.say(ctx, session, "(this client cannot read files: nothing read)"); err != nil {
			return "", err
		}
	} else if stop, err := a.readHello(ctx, session, cwd); stop != "" || err != nil {
		return stop, err
	}
	if writes {
		if _, err := a.client.WriteTextFile(ctx, &acp.WriteTextFileRequest{
			SessionId: session, Path: filepath.Join(cwd, "written.txt"), Content: "written by agent",
		}); err != nil {
			return "", err
		}
	}
	if !terminals {
		return acp.StopReasonEndTurn, nil
	}
	return a.runEcho(ctx, session)
}

// readHello asks to read hello.txt, then reads it and says what it holds; a
// stop reason when the turn ends there (cancelled, or the read refused).
func (a *exampleAgent) readHello(ctx context.Context, session acp.SessionId, cwd string) (acp.StopReason, error) {
	allowed, err := a.askPermission(ctx, session)
	if err != nil {
		return "", err
	}
	if allowed == nil {
		return acp.StopReasonCancelled, nil
	}
	if !*allowed {
		return acp.StopReasonEndTurn, a.say(ctx, session, "You did not let me read hello.txt.")
	}
	file, err := a.client.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionId: session, Path: filepath.Join(cwd, "hello.txt")})
	if err != nil {
		return "", err
	}
	return "", a.say(ctx, session, file.Content)
}

// runEcho runs `echo hi` in a terminal of the client's and says what it printed.
func (a *exampleAgent) runEcho(ctx context.Context, session acp.SessionId) (acp.StopReason, error) {
	terminal, err := a.client.CreateTerminal(ctx, &acp.CreateTerminalRequest{SessionId: session, Command: "echo", Args: []string{"hi"}})
	if err != nil {
		return "", err
	}
	defer terminal.Release(context.Background())
	if _, err := terminal.WaitForExit(ctx); err != nil {
		return "", err
	}
	output, err := terminal.CurrentOutput(ctx)
	if err != nil {
		return "", err
	}
	return acp.StopReasonEndTurn, a.say(ctx, session, "terminal said: "+strings.TrimSpace(output.Output))
}

func main() {
	err := acp.RunAgent(func(client *acp.AgentSideConnection) acp.Agent {
		return &exampleAgent{client: client, sessions: map[acp.SessionId]string{}}
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-agent:", err)
		os.Exit(1)
	}
}

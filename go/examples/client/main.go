// An ACP client built on acpengine's Client: spawns the agent given on the
// command line and runs two turns against it, "Say hello" (serving
// permission, file and terminal requests for real, printing the streamed
// reply) and "cancel me" (it cancels the turn while the agent waits for
// permission). It shows notices and context compactions (and says so in
// its capabilities). Prints "interop ok" when every check passed; with
// ACP_INTEROP_NEWS=1 it also expects the notice and compaction updates of
// interop/news.json.
//
//	go run ./examples/client go run ./examples/agent
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"

	acp "github.com/acp-engine/acp-engine/go"
)

// terminal is a command the agent runs through us, with its output collected.
type terminal struct {
	cmd    *exec.Cmd
	output bytes.Buffer // guarded by the client's mu
	done   chan struct{}
	exit   *acp.TerminalExitStatus
}

type exampleClient struct {
	mu                sync.Mutex
	reply             strings.Builder
	news              []json.RawMessage // notices and compactions, in order
	answerPermissions bool
	permissionAsked   chan acp.SessionId
	terminals         map[acp.TerminalId]*terminal
	nextTerminal      int
}

func (c *exampleClient) RequestPermission(ctx context.Context, params *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	c.mu.Lock()
	answer := c.answerPermissions
	c.mu.Unlock()
	c.permissionAsked <- params.SessionId
	if !answer {
		// Left open: the turn gets cancelled, which answers it for us (and
		// cancels ctx).
		<-ctx.Done()
		return nil, ctx.Err()
	}
	for _, option := range params.Options {
		if option.Kind == acp.PermissionOptionKindAllowOnce {
			return &acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
				Selected: &acp.SelectedPermissionOutcome{OptionId: option.OptionId},
			}}, nil
		}
	}
	return &acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: true}}, nil
}

func (c *exampleClient) SessionUpdate(ctx context.Context, params *acp.SessionNotification) error {
	update := params.Update
	c.mu.Lock()
	defer c.mu.Unlock()
	keep := func() {
		raw, _ := json.Marshal(update)
		c.news = append(c.news, raw)
	}
	switch {
	case update.AgentMessageChunk != nil && update.AgentMessageChunk.Content.Text != nil:
		text := update.AgentMessageChunk.Content.Text.Text
		c.reply.WriteString(text)
		fmt.Print(text)
	case update.Notice != nil:
		fmt.Printf("[%s notice: %s]\n", update.Notice.Severity, update.Notice.Title)
		keep()
	case update.CompactionUpdate != nil:
		fmt.Printf("[compaction %s: %s]\n", update.CompactionUpdate.CompactionId, update.CompactionUpdate.Status)
		keep()
	case update.CompactionSummaryChunk != nil:
		keep()
	}
	return nil
}

func (c *exampleClient) ReadTextFile(ctx context.Context, params *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	data, err := os.ReadFile(params.Path)
	if err != nil {
		return nil, acp.ResourceNotFound(params.Path)
	}
	lines := strings.SplitAfter(string(data), "\n")
	start, end := 0, len(lines)
	if params.Line != nil && *params.Line > 1 && int(*params.Line)-1 < end {
		start = int(*params.Line) - 1
	}
	if params.Limit != nil && start+int(*params.Limit) < end {
		end = start + int(*params.Limit)
	}
	return &acp.ReadTextFileResponse{Content: strings.Join(lines[start:end], "")}, nil
}

func (c *exampleClient) WriteTextFile(ctx context.Context, params *acp.WriteTextFileRequest) (*acp.WriteTextFileResponse, error) {
	if err := os.WriteFile(params.Path, []byte(params.Content), 0o644); err != nil {
		return nil, err
	}
	return &acp.WriteTextFileResponse{}, nil
}

// lockedWriter appends a terminal's output under the client's lock.
type lockedWriter struct {
	mu  *sync.Mutex
	out *bytes.Buffer
}

func (w lockedWriter) Write(data []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Write(data)
}

func (c *exampleClient) CreateTerminal(ctx context.Context, params *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
	t := &terminal{cmd: exec.Command(params.Command, params.Args...), done: make(chan struct{})}
	if params.Cwd != nil {
		t.cmd.Dir = *params.Cwd
	}
	writer := lockedWriter{&c.mu, &t.output}
	t.cmd.Stdout, t.cmd.Stderr = writer, writer
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		err := t.cmd.Wait()
		status := &acp.TerminalExitStatus{}
		if exit, ok := err.(*exec.ExitError); ok && exit.Sys().(syscall.WaitStatus).Signaled() {
			signal := exit.Sys().(syscall.WaitStatus).Signal().String()
			status.Signal = &signal
		} else {
			code := uint32(t.cmd.ProcessState.ExitCode())
			status.ExitCode = &code
		}
		c.mu.Lock()
		t.exit = status
		c.mu.Unlock()
		close(t.done)
	}()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextTerminal++
	id := acp.TerminalId(fmt.Sprintf("term-%d", c.nextTerminal))
	c.terminals[id] = t
	return &acp.CreateTerminalResponse{TerminalId: id}, nil
}

func (c *exampleClient) terminal(id acp.TerminalId) (*terminal, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.terminals[id]
	if !ok {
		return nil, acp.ResourceNotFound(string(id))
	}
	return t, nil
}

func (c *exampleClient) TerminalOutput(ctx context.Context, params *acp.TerminalOutputRequest) (*acp.TerminalOutputResponse, error) {
	t, err := c.terminal(params.TerminalId)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return &acp.TerminalOutputResponse{Output: t.output.String(), ExitStatus: t.exit}, nil
}

func (c *exampleClient) WaitForTerminalExit(ctx context.Context, params *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error) {
	t, err := c.terminal(params.TerminalId)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return &acp.WaitForTerminalExitResponse{ExitCode: t.exit.ExitCode, Signal: t.exit.Signal}, nil
}

func (c *exampleClient) KillTerminal(ctx context.Context, params *acp.KillTerminalRequest) (*acp.KillTerminalResponse, error) {
	t, err := c.terminal(params.TerminalId)
	if err != nil {
		return nil, err
	}
	_ = t.cmd.Process.Kill()
	return &acp.KillTerminalResponse{}, nil
}

func (c *exampleClient) ReleaseTerminal(ctx context.Context, params *acp.ReleaseTerminalRequest) (*acp.ReleaseTerminalResponse, error) {
	c.mu.Lock()
	t, ok := c.terminals[params.TerminalId]
	delete(c.terminals, params.TerminalId)
	c.mu.Unlock()
	if ok {
		_ = t.cmd.Process.Kill()
	}
	return &acp.ReleaseTerminalResponse{}, nil
}

func prompt(session acp.SessionId, text string) *acp.PromptRequest {
	return &acp.PromptRequest{SessionId: session, Prompt: []acp.ContentBlock{{Text: &acp.TextContent{Text: text}}}}
}

// expectedNews: the updates of interop/news.json, as an agent sends them
// to a client that shows notices and compactions.
const expectedNews = `[
	{"sessionUpdate": "notice", "severity": "info", "title": "Context compacted", "description": "Older messages were summarized."},
	{"sessionUpdate": "compaction_update", "compactionId": "compaction-1", "status": "in_progress"},
	{"sessionUpdate": "compaction_summary_chunk", "compactionId": "compaction-1", "content": {"type": "text", "text": "The user asked for a greeting."}},
	{"sessionUpdate": "compaction_update", "compactionId": "compaction-1", "status": "completed"}
]`

// failure is what check and must panic with, on run's goroutine only: run's
// deferred calls (closing the connection, removing the session's directory)
// still happen, then main reports it and exits 1.
type failure string

func check(ok bool, what string) {
	if !ok {
		panic(failure("check failed: " + what))
	}
}

func must[T any](value T, err error) T {
	if err != nil {
		panic(failure(err.Error()))
	}
	return value
}

func run(command string, args []string) {
	ctx := context.Background()
	cwd := must(os.MkdirTemp("", "acp-engine-go-client-"))
	defer os.RemoveAll(cwd)
	check(os.WriteFile(filepath.Join(cwd, "hello.txt"), []byte("Hello from the client's file\n"), 0o644) == nil, "write hello.txt")
	client := &exampleClient{answerPermissions: true, permissionAsked: make(chan acp.SessionId, 16), terminals: map[acp.TerminalId]*terminal{}}
	toClient := func(*acp.ClientSideConnection) acp.Client { return client }
	var agent *acp.ClientSideConnection
	// A URL is a remote agent (token: ACP_ENGINE_TOKEN); anything else a command to spawn.
	if strings.Contains(command, "://") {
		agent = must(acp.ConnectAgent(toClient, command, acp.RemoteOptions{Token: os.Getenv("ACP_ENGINE_TOKEN")}))
	} else {
		agent = must(acp.SpawnAgent(toClient, command, args...))
	}
	defer agent.Close()

	yes := true
	initialized := must(agent.Initialize(ctx, &acp.InitializeRequest{
		ProtocolVersion: acp.CurrentProtocolVersion,
		ClientCapabilities: &acp.ClientCapabilities{
			Fs:       &acp.FileSystemCapabilities{ReadTextFile: &yes, WriteTextFile: &yes},
			Terminal: &yes,
			Session: &acp.ClientSessionCapabilities{ // we show them
				Notices:    &acp.NoticeCapabilities{},
				Compaction: &acp.CompactionCapabilities{},
			},
		},
		ClientInfo: &acp.Implementation{Name: "acp-engine-go-interop-client", Version: "1.0.0"},
	}))
	check(initialized.ProtocolVersion == 1, "the agent speaks protocol version 1")
	name := "an agent"
	if initialized.AgentInfo != nil {
		name = initialized.AgentInfo.Name
	}
	fmt.Println("connected to", name)
	session := must(agent.NewSession(ctx, &acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}}))

	fmt.Println("> Say hello")
	turn := must(agent.Prompt(ctx, prompt(session.SessionId, "Say hello")))
	fmt.Printf("\n< stop reason: %s\n", turn.StopReason)
	check(turn.StopReason == acp.StopReasonEndTurn, "the first turn ends with end_turn")
	client.mu.Lock()
	reply := client.reply.String()
	news := client.news
	client.mu.Unlock()
	check(strings.Contains(reply, "Hello from the client's file"), "the agent read hello.txt through us")
	check(strings.Contains(reply, "terminal said: hi"), "the agent ran `echo hi` in our terminal")
	written, _ := os.ReadFile(filepath.Join(cwd, "written.txt"))
	check(string(written) == "written by agent", "the agent wrote written.txt through us")
	if os.Getenv("ACP_INTEROP_NEWS") == "1" {
		var want, got []any
		must(0, json.Unmarshal([]byte(expectedNews), &want))
		for _, raw := range news {
			var update any
			must(0, json.Unmarshal(raw, &update))
			got = append(got, update)
		}
		check(reflect.DeepEqual(want, got), fmt.Sprintf("the updates of interop/news.json arrived (got %v)", got))
	}

	fmt.Println("> cancel me")
	client.mu.Lock()
	client.answerPermissions = false
	client.mu.Unlock()
	for len(client.permissionAsked) > 0 {
		<-client.permissionAsked
	}
	type answer struct {
		turn *acp.PromptResponse
		err  error
	}
	cancelled := make(chan answer, 1)
	go func() {
		turn, err := agent.Prompt(ctx, prompt(session.SessionId, "cancel me"))
		cancelled <- answer{turn, err}
	}()
	// The agent asks permission and waits; we cancel instead of answering.
	<-client.permissionAsked
	check(agent.Cancel(ctx, &acp.CancelNotification{SessionId: session.SessionId}) == nil, "send session/cancel")
	answered := <-cancelled
	turn = must(answered.turn, answered.err)
	fmt.Printf("< stop reason: %s\n", turn.StopReason)
	check(turn.StopReason == acp.StopReasonCancelled, "the cancelled turn ends with cancelled")
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: client <agent command> [args...] | ws://host:port/acp")
		os.Exit(2)
	}
	defer func() {
		if r := recover(); r != nil {
			failed, ok := r.(failure)
			if !ok {
				panic(r)
			}
			fmt.Fprintln(os.Stderr, "FAIL: client:", string(failed))
			os.Exit(1)
		}
	}()
	run(os.Args[1], os.Args[2:])
	fmt.Println("interop ok")
}

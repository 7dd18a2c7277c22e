package acpengine_test

// Large messages both ways between two connections of this process: a
// file's content with text that needs escaping crosses as params (which the
// typed sides decode in place, in the library's memory) and as results
// (decoded from the library's string), sequentially and concurrently, and
// a raw handler's params stay intact after it returned.

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	acp "github.com/acp-engine/acp-engine/go"
)

// largeContent is about 1 MiB of text with quotes, backslashes, control
// characters and non-ASCII text, which JSON escapes or keeps as UTF-8.
func largeContent(seed string) string {
	line := seed + ` "quoted" back\slash tab	é ✓ 𝄞 ` + "\x01\n"
	return strings.Repeat(line, (1<<20)/len(line)+1)
}

type largeClient struct {
	written chan string
	kept    chan json.RawMessage
	chunks  chan string
}

func (c *largeClient) RequestPermission(ctx context.Context, params *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	return nil, acp.MethodNotFound(acp.MethodSessionRequestPermission)
}

func (c *largeClient) SessionUpdate(ctx context.Context, params *acp.SessionNotification) error {
	if chunk := params.Update.AgentMessageChunk; chunk != nil && chunk.Content.Text != nil {
		c.chunks <- chunk.Content.Text.Text
	}
	return nil
}

func (c *largeClient) WriteTextFile(ctx context.Context, params *acp.WriteTextFileRequest) (*acp.WriteTextFileResponse, error) {
	c.written <- params.Content
	return &acp.WriteTextFileResponse{}, nil
}

func (c *largeClient) ReadTextFile(ctx context.Context, params *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	return &acp.ReadTextFileResponse{Content: largeContent(params.Path)}, nil
}

// ExtMethod keeps the params it was given, to read after it returned.
func (c *largeClient) ExtMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	c.kept <- params
	return map[string]bool{"kept": true}, nil
}

type largeAgent struct{}

func (largeAgent) Initialize(ctx context.Context, params *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	return &acp.InitializeResponse{ProtocolVersion: acp.CurrentProtocolVersion}, nil
}

func (largeAgent) Cancel(ctx context.Context, params *acp.CancelNotification) error { return nil }

func (largeAgent) NewSession(ctx context.Context, params *acp.NewSessionRequest) (*acp.NewSessionResponse, error) {
	return &acp.NewSessionResponse{SessionId: "large"}, nil
}

func (largeAgent) Prompt(ctx context.Context, params *acp.PromptRequest) (*acp.PromptResponse, error) {
	return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

// connectedPair is an agent and a client connection over two pipes.
func connectedPair(t *testing.T, client acp.Client) *acp.AgentSideConnection {
	t.Helper()
	var toAgent, toClient [2]int
	if err := syscall.Pipe(toAgent[:]); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Pipe(toClient[:]); err != nil {
		t.Fatal(err)
	}
	agent, err := acp.NewAgentSideConnection(func(*acp.AgentSideConnection) acp.Agent { return largeAgent{} }, acp.FDStream(toAgent[0], toClient[1]), nil)
	if err != nil {
		t.Fatal(err)
	}
	clientConn, err := acp.NewClientSideConnection(func(*acp.ClientSideConnection) acp.Client { return client }, acp.FDStream(toClient[0], toAgent[1]), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = clientConn.Close()
		_ = agent.Close()
	})
	if _, err := clientConn.Initialize(context.Background(), &acp.InitializeRequest{ProtocolVersion: acp.CurrentProtocolVersion}); err != nil {
		t.Fatal(err)
	}
	return agent
}

func TestLargeContentCrossesIntactBothWays(t *testing.T) {
	client := &largeClient{written: make(chan string, 8), kept: make(chan json.RawMessage, 1), chunks: make(chan string, 1)}
	agent := connectedPair(t, client)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// An extension handler's params are its own after it returned: read
	// at the end, after more large messages went through the library.
	text := largeContent("kept")
	var result struct{ Kept bool }
	if err := agent.ExtMethod(ctx, "_test/keep", map[string]string{"text": text}, &result); err != nil || !result.Kept {
		t.Fatalf("ext method: %v %+v", err, result)
	}
	kept := <-client.kept

	// A notification whose large text sits inside two unions (the
	// update's kind, the content block's type).
	chunk := largeContent("chunk")
	update := acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: chunk}}}}
	if err := agent.SessionUpdate(ctx, &acp.SessionNotification{SessionId: "large", Update: update}); err != nil {
		t.Fatal(err)
	}
	if got := <-client.chunks; got != chunk {
		t.Fatalf("the update's text changed on the way (%d bytes)", len(got))
	}

	// One at a time (the Call that waits alone), then four at once.
	check := func(name string) {
		content := largeContent("write " + name)
		if _, err := agent.WriteTextFile(ctx, &acp.WriteTextFileRequest{SessionId: "large", Path: "/" + name, Content: content}); err != nil {
			t.Errorf("write %s: %v", name, err)
			return
		}
		file, err := agent.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionId: "large", Path: "read " + name})
		if err != nil {
			t.Errorf("read %s: %v", name, err)
			return
		}
		if file.Content != largeContent("read "+name) {
			t.Errorf("read %s: the content changed on the way (%d bytes)", name, len(file.Content))
		}
	}
	check("alone")
	if got := <-client.written; got != largeContent("write alone") {
		t.Fatalf("the written content changed on the way (%d bytes)", len(got))
	}
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b", "c", "d"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			check(name)
		}()
	}
	wg.Wait()
	expected := map[string]bool{}
	for _, name := range []string{"a", "b", "c", "d"} {
		expected[largeContent("write "+name)] = true
	}
	for range 4 {
		if got := <-client.written; !expected[got] {
			t.Fatalf("a written content changed on the way (%d bytes)", len(got))
		}
	}

	var keptParams struct{ Text string }
	if err := json.Unmarshal(kept, &keptParams); err != nil || keptParams.Text != text {
		t.Fatalf("the kept params changed after the handler returned (%v, %d bytes)", err, len(keptParams.Text))
	}
}

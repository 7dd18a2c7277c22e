package acpengine_test

// A notification whose params fail the ACP schema: the engine drops it and
// the Go side hears of it. The test plays the agent over two pipes and
// writes claude-agent-acp 0.23's session/update usage_update with
// "used": null (fails the schema), a notification of a method no schema
// has (dropped quietly), then a valid agent_message_chunk. A Client that
// implements InvalidNotificationHandler gets ("session/update", -32602
// naming "used") before the valid update reaches SessionUpdate; without
// it, the drop is logged.

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	acp "github.com/acp-engine/acp-engine/go"
)

const (
	badUsageUpdate      = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"usage_update","used":null,"size":10}}}`
	unknownNotification = `{"jsonrpc":"2.0","method":"no/such_notification","params":{}}`
	goodMessageChunk    = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"after"}}}}`
)

// hearingClient records the invalid notifications it hears of.
type hearingClient struct {
	largeClient
	invalid chan string
}

func (c *hearingClient) OnInvalidNotification(method string, err *acp.RequestError) {
	c.invalid <- method + " " + err.Error()
}

// badAgent connects client as a client to this test, which writes the
// three notifications as the agent; the valid chunk's text comes on chunks.
func badAgent(t *testing.T, client acp.Client) {
	t.Helper()
	var toAgent, toClient [2]int
	if err := syscall.Pipe(toAgent[:]); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Pipe(toClient[:]); err != nil {
		t.Fatal(err)
	}
	conn, err := acp.NewClientSideConnection(func(*acp.ClientSideConnection) acp.Client { return client },
		acp.FDStream(toClient[0], toAgent[1]), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Close(toClient[1])
		_ = conn.Close()
		_ = syscall.Close(toAgent[0])
	})
	lines := badUsageUpdate + "\n" + unknownNotification + "\n" + goodMessageChunk + "\n"
	if _, err := syscall.Write(toClient[1], []byte(lines)); err != nil {
		t.Fatal(err)
	}
}

func waitChunk(t *testing.T, ctx context.Context, chunks chan string) {
	t.Helper()
	select {
	case got := <-chunks:
		if got != "after" {
			t.Errorf("SessionUpdate got %q, want the valid chunk %q", got, "after")
		}
	case <-ctx.Done():
		t.Fatal("the valid update after the invalid one did not reach SessionUpdate")
	}
}

func TestAnInvalidNotificationReachesTheHandlersHook(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := &hearingClient{largeClient: largeClient{chunks: make(chan string, 4)}, invalid: make(chan string, 4)}
	badAgent(t, client)
	waitChunk(t, ctx, client.chunks)
	// The hook ran before the valid update (in order, on the same thread).
	select {
	case got := <-client.invalid:
		if !strings.HasPrefix(got, "session/update ") || !strings.Contains(got, "(-32602)") || !strings.Contains(got, "used") {
			t.Errorf("OnInvalidNotification got %q, want session/update, -32602 and what failed (used)", got)
		}
	default:
		t.Fatal("OnInvalidNotification was not called before the valid update")
	}
	select {
	case got := <-client.invalid:
		t.Errorf("a second invalid notification: %q (the unknown method must stay quiet)", got)
	case <-time.After(50 * time.Millisecond):
	}
}

// lockedBuffer is a bytes.Buffer safe to read while the package logs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestWithoutTheHookAnInvalidNotificationIsLogged(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var logged lockedBuffer
	defer acp.SetLogOutput(&logged)()
	client := &largeClient{chunks: make(chan string, 4)}
	badAgent(t, client)
	waitChunk(t, ctx, client.chunks)
	got := logged.String()
	if !strings.Contains(got, "acpengine: dropped a session/update notification that fails the schema: ") ||
		!strings.Contains(got, "used") {
		t.Errorf("logged %q, want the dropped session/update and what failed (used)", got)
	}
	if strings.Contains(got, "no/such_notification") {
		t.Errorf("logged %q: the unknown method must stay quiet", got)
	}
}

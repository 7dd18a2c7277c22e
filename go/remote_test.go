package acpengine_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	acp "github.com/acp-engine/acp-engine/go"
)

// streamableAgent is the least of a Streamable HTTP agent (Go's net/http):
// it refuses its first initialize with 503, as a server draining or a
// proxy with no backend up would, answers the next, and holds the
// connection's event stream open.
type streamableAgent struct {
	initializes atomic.Int32
}

func (a *streamableAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		var request struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.NewDecoder(r.Body).Decode(&request) != nil || request.Method != acp.MethodInitialize {
			http.Error(w, "initialize only", http.StatusBadRequest)
			return
		}
		if a.initializes.Add(1) == 1 {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Acp-Connection-Id", "c1")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(request.ID) + `,"result":{"protocolVersion":1}}`))
	case http.MethodGet:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

// freeAddress is a loopback address nothing listens on (yet).
func freeAddress(t *testing.T) string {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	address := listener.Addr().String()
	listener.Close()
	return address
}

func initialize(t *testing.T, url string, options acp.RemoteOptions) error {
	conn, err := acp.ConnectAgent(func(*acp.ClientSideConnection) acp.Client { return newTestClient() }, url, options)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1})
	return err
}

// With ReconnectTimeout a client started before its server keeps trying
// until the server listens and takes it (past a 503); without, it fails at
// once.
func TestReconnectTimeoutWaitsForTheServer(t *testing.T) {
	address := freeAddress(t)
	url := "http://" + address + "/acp"
	if err := initialize(t, url, acp.RemoteOptions{}); err == nil {
		t.Fatal("initialize succeeded with nothing listening")
	}

	agent := &streamableAgent{}
	server := &http.Server{Handler: agent}
	defer server.Close()
	go func() {
		time.Sleep(300 * time.Millisecond)
		listener, err := net.Listen("tcp", address)
		if err != nil {
			t.Error(err)
			return
		}
		_ = server.Serve(listener)
	}()
	if err := initialize(t, url, acp.RemoteOptions{ReconnectTimeout: 10 * time.Second}); err != nil {
		t.Fatalf("initialize with a reconnect timeout: %v", err)
	}
	if got := agent.initializes.Load(); got != 2 {
		t.Fatalf("the server saw %d initialize requests, want 2 (a 503, then the answer)", got)
	}
}

// With ConnectTimeout a server that takes the TCP connection and then says
// nothing (a listener that never accepts) fails the connection in time,
// with the reason, instead of leaving initialize waiting.
func TestConnectTimeoutFailsASilentServer(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	started := time.Now()
	err = initialize(t, "ws://"+silent.Addr().String()+"/acp", acp.RemoteOptions{ConnectTimeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "did not take the connection within 300 ms") {
		t.Fatalf("initialize against a silent server: %v", err)
	}
	if elapsed := time.Since(started); elapsed > 10*time.Second {
		t.Fatalf("the failure took %v", elapsed)
	}
}

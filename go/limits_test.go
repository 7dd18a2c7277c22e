package acpengine_test

// Limits against a peer that stops reading (reliability/flood_peer.py), the
// Go side of core/tests/limits.rs: the connection stops reading at its
// configured bounds, every answer arrives once the peer reads, and the stall
// timeout closes a connection whose peer never reads.

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acp "github.com/acp-engine/acp-engine/go"
)

var floodPeer = filepath.Join("..", "reliability", "flood_peer.py")

type floodHandler struct{ reports chan json.RawMessage }

func (floodHandler) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	return map[string]string{"padding": strings.Repeat("x", 1024)}, nil
}

func (h floodHandler) HandleNotification(ctx context.Context, method string, params json.RawMessage) error {
	h.reports <- append(json.RawMessage(nil), params...)
	return nil
}

func TestAPeerThatStopsReadingIsHeldAtTheLimits(t *testing.T) {
	handler := floodHandler{reports: make(chan json.RawMessage, 1)}
	options := &acp.Options{Limits: acp.Limits{MaxInFlightRequests: 64, MaxBufferedBytes: 256 * 1024}}
	conn, err := acp.NewConnection(handler, acp.SpawnStream("python3", []string{floodPeer, "200000", "--read"}, nil), options)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var report struct {
		Sent, Answered, Duplicates int
		Stalled                    bool
	}
	select {
	case params := <-handler.reports:
		if err := json.Unmarshal(params, &report); err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("no report from the peer")
	}
	if !report.Stalled || report.Sent >= 200000 || report.Answered != report.Sent || report.Duplicates != 0 {
		t.Errorf("want a stalled peer that got every answer once, got %+v", report)
	}
}

func TestTheStallTimeoutClosesAConnectionWhosePeerNeverReads(t *testing.T) {
	handler := floodHandler{reports: make(chan json.RawMessage, 1)}
	options := &acp.Options{Limits: acp.Limits{MaxBufferedBytes: 64 * 1024, OutputStallTimeout: 300 * time.Millisecond}}
	conn, err := acp.NewConnection(handler, acp.SpawnStream("python3", []string{floodPeer, "100000"}, nil), options)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	select {
	case <-conn.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("not closed by the stall timeout")
	}
	if reason := conn.CloseReason(); !strings.Contains(reason, "output stalled") || !strings.Contains(reason, "max_buffered_bytes") {
		t.Errorf("close reason: %q", reason)
	}
}

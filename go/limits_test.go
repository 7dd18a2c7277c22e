package acpengine_test

// Limits against a peer that stops reading (reliability/flood_peer.py), the
// Go side of core/tests/limits.rs: the connection stops reading at its
// configured bounds, every answer arrives once the peer reads, and the stall
// timeout closes a connection whose peer never reads.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
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

// pipe is a pipe's read and write descriptors (close-on-exec).
func pipe(t *testing.T) [2]int {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	return fds
}

// echoHandler answers every request with its params.
type echoHandler struct{}

func (echoHandler) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	return params, nil
}

func (echoHandler) HandleNotification(ctx context.Context, method string, params json.RawMessage) error {
	return nil
}

// Two connections flooding each other with notifications and calls from
// many goroutines, more than the write queue holds: a goroutine waiting
// for room to send its own message is not a request in flight, so both
// keep reading and every call completes (each side used to stop reading
// once more senders waited than its in-flight limit: a deadlock).
func TestManyGoroutinesFloodingBothWaysPastTheInFlightLimit(t *testing.T) {
	aToB, bToA := pipe(t), pipe(t)
	options := &acp.Options{Limits: acp.Limits{MaxInFlightRequests: 8}}
	a, err := acp.NewConnection(echoHandler{}, acp.FDStream(bToA[0], aToB[1]), options)
	if err != nil {
		t.Fatal(err)
	}
	b, err := acp.NewConnection(echoHandler{}, acp.FDStream(aToB[0], bToA[1]), options)
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, calls, notifications = 200, 4, 30
	padding := strings.Repeat("x", 2048)
	failures := make(chan error, 2*goroutines)
	var wg sync.WaitGroup
	for _, conn := range []*acp.Conn{a, b} {
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func(conn *acp.Conn, g int) {
				defer wg.Done()
				for i := 0; i < calls; i++ {
					sent := map[string]any{"g": g, "i": i, "padding": padding}
					for n := 0; n < notifications; n++ {
						if err := conn.Notify(context.Background(), "_test/flood", sent); err != nil {
							failures <- err
							return
						}
					}
					var got map[string]any
					if err := conn.Call(context.Background(), "_test/echo", sent, &got); err != nil {
						failures <- err
						return
					}
					if got["g"] != float64(g) || got["i"] != float64(i) {
						failures <- fmt.Errorf("call %d/%d answered %v %v", g, i, got["g"], got["i"])
						return
					}
				}
			}(conn, g)
		}
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(time.Minute):
		// Where every goroutine waits: in C (a send blocked for room, a
		// Call awaiting), or in Go (a send slot, an answer's channel).
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		t.Fatal("deadlock: the calls did not complete in a minute (goroutines above)")
	}
	close(failures)
	for err := range failures {
		t.Error(err)
	}
	if err := a.Close(); err != nil {
		t.Error(err)
	}
	<-b.Done()
}

// Thousands of goroutines sending to a peer that does not read: beyond the
// write queue they wait, but in Go (a few hundred at most wait in the
// library, each holding a thread), so the program stays under a thread
// limit that one thread per waiting goroutine would pass (Go ends a
// program at its limit). Everything arrives once the peer reads.
func TestGoroutinesWaitingToSendDoNotEachHoldAThread(t *testing.T) {
	toPeer, fromPeer := pipe(t), pipe(t)
	peerReads := os.NewFile(uintptr(toPeer[0]), "peer-reads")
	peerWrites := os.NewFile(uintptr(fromPeer[1]), "peer-writes")
	defer peerWrites.Close()
	conn, err := acp.NewConnection(echoHandler{}, acp.FDStream(fromPeer[0], toPeer[1]), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer debug.SetMaxThreads(debug.SetMaxThreads(500))
	const senders = 6000 // the write queue holds 4096
	padding := strings.Repeat("x", 1024)
	var wg sync.WaitGroup
	for i := 0; i < senders; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := conn.Notify(context.Background(), "_test/flood", map[string]any{"i": i, "padding": padding}); err != nil {
				t.Error(err)
			}
		}(i)
	}
	time.Sleep(500 * time.Millisecond) // the senders fill the queue and wait
	lines := bufio.NewScanner(peerReads)
	lines.Buffer(make([]byte, 4096), 1<<20)
	seen := 0
	for seen < senders && lines.Scan() {
		seen++
	}
	wg.Wait()
	if seen != senders {
		t.Errorf("the peer read %d of %d notifications (%v)", seen, senders, lines.Err())
	}
	peerWrites.Close()
	<-conn.Done()
	peerReads.Close()
}

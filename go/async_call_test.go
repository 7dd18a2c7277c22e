package acpengine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	acp "github.com/acp-engine/acp-engine/go"
)

// handlerPair is two connections over pipes: a (handled by aHandler)
// and b (by bHandler).
func handlerPair(t *testing.T, aHandler, bHandler acp.Handler) (a, b *acp.Conn) {
	t.Helper()
	aToB, bToA := pipe(t), pipe(t)
	a, err := acp.NewConnection(aHandler, acp.FDStream(bToA[0], aToB[1]), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err = acp.NewConnection(bHandler, acp.FDStream(aToB[0], bToA[1]), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// receive takes one Call from done, or fails the test after a while.
func receive(t *testing.T, done chan *acp.Call) *acp.Call {
	t.Helper()
	select {
	case call := <-done:
		return call
	case <-time.After(30 * time.Second):
		t.Fatal("no Call came back on its done channel in 30 s")
		return nil
	}
}

// Thousands of requests in flight from one goroutine, sharing a done
// channel far smaller than their number: every one comes back once, with
// its own answer decoded (large answers too, decoded off the dispatch
// thread), and a full channel holds nothing up.
func TestGoManyCallsShareOneSmallDoneChannel(t *testing.T) {
	a, _ := handlerPair(t, echoHandler{}, echoHandler{})
	const calls = 3000
	large := strings.Repeat("z", 100*1024)
	done := make(chan *acp.Call, 8)
	results := make([]map[string]any, calls)
	for i := range results {
		params := map[string]any{"i": i}
		if i%100 == 0 {
			params["large"] = large
		}
		a.Go(context.Background(), "_test/echo", params, &results[i], done)
	}
	seen := make(map[*acp.Call]bool)
	for range calls {
		call := receive(t, done)
		if seen[call] {
			t.Fatalf("a Call came back twice: %v", call.Params)
		}
		seen[call] = true
		if call.Error != nil {
			t.Fatalf("%v failed: %v", call.Params, call.Error)
		}
	}
	for i, result := range results {
		if result["i"] != float64(i) || (i%100 == 0 && result["large"] != large) {
			t.Fatalf("call %d was answered %v", i, result["i"])
		}
	}
}

// cancelWatcher holds every request until the peer cancels it, then says
// so on cancelled.
type cancelWatcher struct{ cancelled chan string }

func (w cancelWatcher) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	select {
	case <-ctx.Done():
		w.cancelled <- method
		return nil, ctx.Err()
	case <-time.After(time.Minute):
		return params, nil
	}
}

func (cancelWatcher) HandleNotification(ctx context.Context, method string, params json.RawMessage) error {
	return nil
}

// A Call whose ctx is done first: its Error is ctx.Err() and the peer's
// handler sees its request cancelled; a ctx done before Go sends nothing.
func TestGoCancelledByItsContext(t *testing.T) {
	watcher := cancelWatcher{cancelled: make(chan string, 1)}
	a, _ := handlerPair(t, echoHandler{}, watcher)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	call := a.Go(ctx, "_test/held", map[string]int{"x": 1}, nil, nil)
	if got := receive(t, call.Done); !errors.Is(got.Error, context.DeadlineExceeded) {
		t.Fatalf("a timed-out Call: %v", got.Error)
	}
	select {
	case method := <-watcher.cancelled:
		if method != "_test/held" {
			t.Errorf("the peer saw %s cancelled", method)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the peer never saw the request cancelled")
	}

	gone, stop := context.WithCancel(context.Background())
	stop()
	if got := receive(t, a.Go(gone, "_test/held", nil, nil, nil).Done); !errors.Is(got.Error, context.Canceled) {
		t.Fatalf("a Call with its ctx done already: %v", got.Error)
	}
	select {
	case method := <-watcher.cancelled:
		t.Fatalf("a Call whose ctx was done reached the peer (%s)", method)
	case <-time.After(100 * time.Millisecond):
	}
}

// refusingHandler answers every request -32602.
type refusingHandler struct{}

func (refusingHandler) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	return nil, acp.InvalidParams().WithData("refused " + method)
}

func (refusingHandler) HandleNotification(ctx context.Context, method string, params json.RawMessage) error {
	return nil
}

// The peer's error answer is the Call's *RequestError; a result that does
// not fit Result is the Call's error too.
func TestGoPeerErrorsAndMisfits(t *testing.T) {
	a, _ := handlerPair(t, echoHandler{}, refusingHandler{})
	got := receive(t, a.Go(context.Background(), "_test/x", nil, nil, nil).Done)
	if acp.CodeOf(got.Error) != acp.CodeInvalidParams {
		t.Fatalf("a refused Call: %v", got.Error)
	}
	echo, _ := handlerPair(t, echoHandler{}, echoHandler{})
	var number int
	got = receive(t, echo.Go(context.Background(), "_test/x", map[string]string{"a": "b"}, &number, nil).Done)
	if got.Error == nil || !strings.Contains(got.Error.Error(), "does not fit") {
		t.Fatalf("a result that does not fit: %v", got.Error)
	}
}

// A peer that dies fails every Call in flight at once; a Call after the
// close fails at once.
func TestGoCallsFailWhenThePeerDies(t *testing.T) {
	silent, err := acp.NewConnection(echoHandler{}, acp.SpawnStream("sleep", []string{"60"}, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	done := make(chan *acp.Call, 100)
	for range 100 {
		silent.Go(context.Background(), "_test/unanswered", nil, nil, done)
	}
	if err := syscall.Kill(silent.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if got := receive(t, done); !acp.IsConnectionClosed(got.Error) {
			t.Fatalf("a Call in flight when the peer died: %v", got.Error)
		}
	}
	<-silent.Done()
	if got := receive(t, silent.Go(context.Background(), "_test/x", nil, nil, nil).Done); !acp.IsConnectionClosed(got.Error) {
		t.Fatalf("a Call after the close: %v", got.Error)
	}
}

// askingHandler, on a notification, asks its peer with Go (which, unlike
// Call, does not wait in the handler) and passes the answer on.
type askingHandler struct {
	conn    atomic.Pointer[acp.Conn]
	answers chan *acp.Call
}

func (h *askingHandler) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	return params, nil
}

func (h *askingHandler) HandleNotification(ctx context.Context, method string, params json.RawMessage) error {
	var answer map[string]string
	h.conn.Load().Go(ctx, "_test/echo", map[string]string{"asked": method}, &answer, h.answers)
	return nil
}

func TestGoFromANotificationHandler(t *testing.T) {
	asking := &askingHandler{answers: make(chan *acp.Call, 1)}
	a, b := handlerPair(t, asking, echoHandler{})
	asking.conn.Store(a)
	if err := b.Notify(context.Background(), "_test/tell", nil); err != nil {
		t.Fatal(err)
	}
	got := receive(t, asking.answers)
	if got.Error != nil || (*got.Result.(*map[string]string))["asked"] != "_test/tell" {
		t.Fatalf("a Call from a notification handler: %v %v", got.Error, got.Result)
	}
}

// Calls sharing one ctx, some answered and some held by the peer, more
// than the watch keeps before it drops answered ones: when the ctx is
// cancelled every held Call comes back with its error, once, and the
// answered ones are not touched.
func TestGoCallsSharingAContextAreCancelledTogether(t *testing.T) {
	a, _ := handlerPair(t, echoHandler{}, slowEchoHandler{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan *acp.Call, 64)
	send := func(count, delayUs int) {
		for range count {
			a.Go(ctx, "_test/echo", map[string]int{"delayUs": delayUs}, nil, done)
		}
	}
	const held, quick = 100, 2000
	send(held, 60_000_000)
	for round := 0; round < 3; round++ {
		send(quick, 0)
		for range quick {
			if got := receive(t, done); got.Error != nil {
				t.Fatalf("an answered Call: %v", got.Error)
			}
		}
	}
	cancel()
	seen := make(map[*acp.Call]bool)
	for range held {
		got := receive(t, done)
		if seen[got] {
			t.Fatal("a Call came back twice")
		}
		seen[got] = true
		if !errors.Is(got.Error, context.Canceled) {
			t.Fatalf("a held Call after its ctx was cancelled: %v", got.Error)
		}
	}
	select {
	case extra := <-done:
		t.Fatalf("a Call came back once too often: %v", extra.Error)
	case <-time.After(100 * time.Millisecond):
	}
}

// A watch lives while its Calls do: once they are all answered, nothing
// is left registered on a ctx that is never done (it would hold the
// connection for good), also when Calls alternate between two such ctxs.
func TestGoWatchesEndWithTheirCalls(t *testing.T) {
	a, _ := handlerPair(t, echoHandler{}, echoHandler{})
	first, cancelFirst := context.WithCancel(context.Background())
	defer cancelFirst()
	second, cancelSecond := context.WithCancel(context.Background())
	defer cancelSecond()
	done := make(chan *acp.Call, 100)
	for range 100 {
		a.Go(first, "_test/echo", map[string]int{"x": 1}, nil, done)
	}
	for range 100 {
		if got := receive(t, done); got.Error != nil {
			t.Fatal(got.Error)
		}
	}
	if acp.WatchesCalls(a) {
		t.Fatal("a watch outlived its Calls")
	}
	for i := range 50 {
		ctx := first
		if i%2 == 1 {
			ctx = second
		}
		if got := receive(t, a.Go(ctx, "_test/echo", map[string]int{"i": i}, nil, nil).Done); got.Error != nil {
			t.Fatal(got.Error)
		}
		if acp.WatchesCalls(a) {
			t.Fatalf("a watch outlived Call %d", i)
		}
	}
}

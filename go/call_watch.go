package acpengine

import (
	"context"
	"sync"
)

// callWatch cancels the Calls of Conn.Go that share one ctx when it is
// done, with one context.AfterFunc for them all: one per Call (a lock and
// an insert into, then a delete from, the ctx's map each) was about a
// tenth of a Go agent's CPU with thousands of Calls in flight. A watch
// lives while it has Calls in flight: the last one's answer stops it, so
// a ctx that is never done holds no watch, nor the connection, after.
type callWatch struct {
	conn *Conn
	done <-chan struct{} // its ctx's
	stop func() bool     // its AfterFunc's
	mu   sync.Mutex
	// closed: fired (ctx done) or retired (no Call in flight); it takes
	// no more Calls.
	closed bool
	live   int            // Calls joined and not finished
	calls  []*waitingCall // the Calls joined (some may be finished)
}

// watches is a connection's latest watch: Calls sent together mostly
// share a ctx (a handler's).
type watches struct {
	mu     sync.Mutex
	latest *callWatch
}

// join has call watched with the others of ctx, before it is sent (so
// that its answer, which leaves the watch, finds it).
func (conn *Conn) join(ctx context.Context, call *waitingCall) {
	done := ctx.Done()
	conn.watches.mu.Lock()
	defer conn.watches.mu.Unlock()
	if w := conn.watches.latest; w != nil && w.done == done && w.add(call) {
		return
	}
	w := &callWatch{conn: conn, done: done}
	w.add(call)
	w.stop = context.AfterFunc(ctx, func() { w.fire(ctx) })
	conn.watches.latest = w
}

// add keeps call (false once closed). Finished Calls are dropped when the
// list would grow, so it holds about the Calls in flight.
func (w *callWatch) add(call *waitingCall) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	if len(w.calls) == cap(w.calls) {
		kept := w.calls[:0]
		for _, c := range w.calls {
			if state := c.state.Load(); state == callSending || state == callSent {
				kept = append(kept, c)
			}
		}
		clear(w.calls[len(kept):])
		w.calls = kept
	}
	w.calls = append(w.calls, call)
	w.live++
	call.watch = w
	return true
}

// leave: call finished (answered, or not sent). The last Call in flight
// retires the watch.
func (w *callWatch) leave() {
	w.mu.Lock()
	w.live--
	retire := w.live == 0 && !w.closed
	if retire {
		w.closed = true
		w.calls = nil
	}
	w.mu.Unlock()
	if retire {
		w.stop()
		w.conn.watches.forget(w)
	}
}

// fire cancels the Calls in flight: the engine answers each -32800
// (dropped) and tells the peer, and each comes back with ctx.Err(). A
// Call still being sent cancels itself when its send returns (Conn.Go).
func (w *callWatch) fire(ctx context.Context) {
	w.mu.Lock()
	w.closed = true
	calls := w.calls
	w.calls = nil
	w.mu.Unlock()
	w.conn.watches.forget(w)
	for _, call := range calls {
		call.cancelAsync(w.conn, ctx.Err())
	}
}

func (w *callWatch) fired() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

func (ws *watches) forget(w *callWatch) {
	ws.mu.Lock()
	if ws.latest == w {
		ws.latest = nil
	}
	ws.mu.Unlock()
}

// cancelAsync gives up a sent Call of Conn.Go, unless it was answered.
func (call *waitingCall) cancelAsync(conn *Conn, err error) {
	if call.state.CompareAndSwap(callSent, callCancelled) {
		// The engine answers it -32800 (dropped) and tells the peer.
		conn.cancelRequest(call.id)
		call.async.finish(err)
	}
}

package acpengine

import (
	"context"
	"sync"
)

// callWatch cancels the Calls of Conn.Go that share one ctx when it is
// done, with one context.AfterFunc for them all: one per Call (a lock and
// an insert into, then a delete from, the ctx's map each) was about a
// tenth of a Go agent's CPU with thousands of Calls in flight.
type callWatch struct {
	done  <-chan struct{} // its ctx's
	mu    sync.Mutex
	fired bool
	calls []*waitingCall // sent; some may be answered already
}

// watches is a connection's latest watch: Calls sent together mostly
// share a ctx (a handler's).
type watches struct {
	mu     sync.Mutex
	latest *callWatch
}

// watch has call (sent, as id) cancelled when ctx is done.
func (conn *Conn) watch(ctx context.Context, call *waitingCall) {
	done := ctx.Done()
	for {
		conn.watches.mu.Lock()
		w := conn.watches.latest
		if w == nil || w.done != done {
			w = &callWatch{done: done}
			conn.watches.latest = w
			context.AfterFunc(ctx, func() { w.fire(conn, ctx) })
		}
		conn.watches.mu.Unlock()
		if w.add(call) {
			return
		}
		// It fired (ctx is done): a new watch fires at once.
		conn.watches.mu.Lock()
		if conn.watches.latest == w {
			conn.watches.latest = nil
		}
		conn.watches.mu.Unlock()
	}
}

// add keeps call, unless the watch fired. Answered Calls are dropped when
// the list would grow, so it holds about the Calls in flight.
func (w *callWatch) add(call *waitingCall) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fired {
		return false
	}
	if len(w.calls) == cap(w.calls) {
		kept := w.calls[:0]
		for _, c := range w.calls {
			if c.state.Load() == callSent {
				kept = append(kept, c)
			}
		}
		clear(w.calls[len(kept):])
		w.calls = kept
	}
	w.calls = append(w.calls, call)
	return true
}

// fire cancels the Calls not answered yet: the engine answers each -32800
// (dropped) and tells the peer, and each comes back with ctx.Err().
func (w *callWatch) fire(conn *Conn, ctx context.Context) {
	w.mu.Lock()
	w.fired = true
	calls := w.calls
	w.calls = nil
	w.mu.Unlock()
	conn.watches.mu.Lock()
	if conn.watches.latest == w {
		conn.watches.latest = nil
	}
	conn.watches.mu.Unlock()
	for _, call := range calls {
		if call.state.CompareAndSwap(callSent, callCancelled) {
			conn.cancelRequest(call.id)
			call.async.finish(ctx.Err())
		}
	}
}

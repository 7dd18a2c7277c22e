package acpengine

import (
	"context"
	"fmt"

	"github.com/acp-engine/acp-engine/go/internal/wirejson"
)

// Call is a request sent with Conn.Go, as net/rpc's Call is: once it is
// answered (the result decoded into Result) or has failed (Error), it is
// sent on Done.
type Call struct {
	Method string
	Params any
	Result any   // what the result is decoded into (nil: dropped)
	Error  error // a *RequestError from the peer, ctx.Err(), or a local failure
	Done   chan *Call
}

// Go sends a request and returns without waiting for its answer: the Call
// comes back on done when it is answered or fails (done nil: a new channel
// of one). Many Calls may share one done channel; a full one never holds up
// the connection (the Call is then handed over by a goroutine of its own).
// This is the way to have many requests in flight without a goroutine
// each, and, unlike Conn.Call, it may be used in a notification handler.
// When ctx is done first the request is cancelled (the peer gets
// $/cancel_request) and the Call's Error is ctx.Err().
func (conn *Conn) Go(ctx context.Context, method string, params any, result any, done chan *Call) *Call {
	if done == nil {
		done = make(chan *Call, 1)
	}
	call := &Call{Method: method, Params: params, Result: result, Done: done}
	if err := ctx.Err(); err != nil {
		call.finish(err)
		return call
	}
	waiting := &waitingCall{async: call}
	if ctx.Done() != nil {
		conn.join(ctx, waiting) // before the send: the answer leaves it
	}
	id, err := conn.sendAnsweredTo(waiting, method, params, encodeC)
	if err != nil {
		if waiting.watch != nil {
			waiting.watch.leave()
		}
		call.finish(err)
		return call
	}
	waiting.id = id
	if waiting.state.CompareAndSwap(callSending, callSent) && waiting.watch != nil && waiting.watch.fired() {
		// The ctx was done while it was sent, maybe after the watch fired.
		waiting.cancelAsync(conn, ctx.Err())
	}
	return call
}

// finish records the Call's outcome and hands it over on Done.
func (call *Call) finish(err error) {
	call.Error = err
	select {
	case call.Done <- call:
	default:
		go func() { call.Done <- call }()
	}
}

// answerAsync is answer's for a Call of Conn.Go, on the dispatch thread.
func answerAsync(waiting *waitingCall, result []byte, err error) {
	call := waiting.async
	// A watch may hold waiting a while: it need not hold the Call.
	waiting.async = nil
	if waiting.watch != nil {
		waiting.watch.leave()
	}
	if err != nil || len(result) < wirejson.LargeText {
		call.finish(decodeAsync(call, result, err))
		return
	}
	// Decoding a large result here would hold up the dispatch thread.
	text := append([]byte(nil), result...)
	go func() { call.finish(decodeAsync(call, text, nil)) }()
}

// decodeAsync decodes a Call's result; a panic (a custom UnmarshalJSON)
// is the Call's error, since nobody waits to take it.
func decodeAsync(call *Call, result []byte, err error) error {
	if err != nil {
		return err
	}
	answer := decodeHere(result, call.Result)
	if answer.panicked != nil {
		return fmt.Errorf("acpengine: decoding the %s result into %T panicked: %v", call.Method, call.Result, answer.panicked)
	}
	return answer.err
}

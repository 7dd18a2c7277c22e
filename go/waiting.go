package acpengine

/*
#include "bridge.h"
*/
import "C"

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/acp-engine/acp-engine/go/internal/wirejson"
)

// Concurrent Calls wait in Go (one at a time waits in C, see Conn.await):
// the response callback, on the dispatch thread, answers them, and
// decodes a small result itself. That goroutine's stack has grown, while
// a Call's goroutine (one per concurrent request, the usual Go way)
// starts small: decoding there grew (copied) its stack every time, about
// a tenth of a Go agent's CPU with 50,000 calls in flight.

// A waiting call's state, which the Call and the response callback move
// on with compare-and-swap: whoever moves it decides.
const (
	callSending   int32 = iota // being sent (its answer may come already)
	callSent                   // sent, waiting for its answer
	callCancelled              // the Call gave up (its ctx is done)
	callAnswered               // the callback answers it
)

// waitingCall is a request waiting for its answer: a Conn.Call's on
// waiting, or a Conn.Go's Call (async).
type waitingCall struct {
	result  any // Conn.Call's: what the callback decodes a small result into
	waiting chan response
	async   *Call
	id      C.int64_t  // an async Call's, once sent
	watch   *callWatch // an async Call's, when its ctx can be done
	state   atomic.Int32
}

// response is an answer a Call waits for: an error, or the result's text
// when the callback left it to the Call to decode (a large one).
type response struct {
	result   []byte
	err      error
	decoded  bool
	panicked any // the result type's decoder panicked: the Call panics
}

// callSlots are the calls that may still get a response callback, by a
// number the callback carries as its user data: cheaper than a cgo.Handle
// per request (a concurrent map and its allocations).
type callSlots struct {
	mu    sync.Mutex
	slots []*waitingCall
	free  []uintptr
}

var calls callSlots

func (s *callSlots) put(call *waitingCall) uintptr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.free); n > 0 {
		slot := s.free[n-1]
		s.free = s.free[:n-1]
		s.slots[slot] = call
		return slot
	}
	s.slots = append(s.slots, call)
	return uintptr(len(s.slots) - 1)
}

// take frees slot and returns its call.
func (s *callSlots) take(slot uintptr) *waitingCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	call := s.slots[slot]
	s.slots[slot] = nil
	s.free = append(s.free, slot)
	return call
}

// sendAnsweredTo sends a request whose answer the response callback gives
// to call; on a failure nothing was sent and no callback will come.
func (conn *Conn) sendAnsweredTo(call *waitingCall, method string, params any, encode encoder) (C.int64_t, error) {
	slot := calls.put(call)
	methodText := cString(method)
	var id C.int64_t
	err := withParams(params, encode, func(body []byte) error {
		return conn.send(func(c *C.acp_connection, text *errorText) C.acp_result {
			return C.acp_go_send_request(c, cPtr(methodText), cPtr(body), C.uintptr_t(slot), &id, text.ptr(), text.size())
		})
	})
	if err != nil {
		calls.take(slot)
	}
	return id, err
}

// wait sends a request whose answer the dispatch thread hands to this
// goroutine.
func (conn *Conn) wait(ctx context.Context, method string, params any, result any) error {
	call := &waitingCall{result: result, waiting: make(chan response, 1)}
	id, err := conn.sendAnsweredTo(call, method, params, encodeForCall)
	if err != nil {
		return err
	}
	call.state.CompareAndSwap(callSending, callSent) // unless answered already
	select {
	case answer := <-call.waiting:
		return answer.decode(result)
	case <-ctx.Done():
	}
	if call.state.CompareAndSwap(callSent, callCancelled) {
		// The engine answers it -32800 (dropped) and tells the peer.
		conn.cancelRequest(id)
		return ctx.Err()
	}
	// Answered meanwhile (maybe into result, right now): take it.
	return (<-call.waiting).decode(result)
}

func (answer response) decode(result any) error {
	if answer.panicked != nil {
		panic(answer.panicked)
	}
	if answer.err != nil || answer.decoded {
		return answer.err
	}
	return decodeResult(answer.result, result)
}

// answer is the response callback's: the call's result (the library's
// text, valid during the callback) or its error. A Call that gave up
// gets nothing.
func answer(slot uintptr, result []byte, err error) {
	call := calls.take(slot)
	// The answer may come before the Call marked it sent.
	for {
		state := call.state.Load()
		if state == callCancelled {
			return
		}
		if call.state.CompareAndSwap(state, callAnswered) {
			break
		}
	}
	if call.async != nil {
		answerAsync(call, result, err)
		return
	}
	switch {
	case err != nil:
		call.waiting <- response{err: err}
	case len(result) < wirejson.LargeText:
		call.waiting <- decodeHere(result, call.result)
	default:
		// Decoding a large result here would hold up the dispatch thread.
		call.waiting <- response{result: append([]byte(nil), result...)}
	}
}

// decodeHere decodes a result (a small one on the dispatch thread); a
// panic (a custom UnmarshalJSON) goes to the Call, not into C.
func decodeHere(text []byte, result any) (answer response) {
	defer func() {
		if panicked := recover(); panicked != nil {
			answer = response{panicked: panicked}
		}
	}()
	return response{err: decodeResult(text, result), decoded: true}
}

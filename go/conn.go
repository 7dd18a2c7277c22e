package acpengine

/*
#include <stdlib.h>
#include "bridge.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"unsafe"
)

// Side is which side of ACP a connection plays: it decides which messages
// the engine accepts and checks (against the schema) before they reach Go,
// and which ones Go may send.
type Side int

const (
	// SideRaw is plain JSON-RPC: any method, no schema checks.
	SideRaw Side = C.ACP_SIDE_RAW
	// SideAgent is an agent: inbound agent methods are checked (unknown:
	// -32601, bad params: -32602), outbound ones must be client methods.
	SideAgent Side = C.ACP_SIDE_AGENT
	// SideClient is a client: the same, the other way round.
	SideClient Side = C.ACP_SIDE_CLIENT
)

// Options are a connection's settings; nil means the defaults.
type Options struct {
	// MaxMessageSize bounds one inbound message in bytes (0: 64 MiB).
	MaxMessageSize int
}

// Handler handles what the peer sends on a connection.
type Handler interface {
	// HandleRequest answers a request: its result (any value encoding/json
	// writes), or an error (a *RequestError goes out as itself, anything
	// else as -32603). It runs on a goroutine of its own; ctx is cancelled
	// when the peer cancels the request or the connection closes.
	HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error)
	// HandleNotification handles a notification. Notifications are handled
	// one at a time, in arrival order, and a response (or a later request)
	// is delivered only after the notifications received before it were
	// handled; so a notification handler must not wait for an answer from
	// the peer (Call fails at once if it is given the handler's ctx).
	HandleNotification(ctx context.Context, method string, params json.RawMessage) error
}

// Conn is a JSON-RPC 2.0 connection to a peer, on the acp-engine library:
// requests with Call, notifications with Notify, both ways. It is safe for
// concurrent use. The typed connections (AgentSideConnection,
// ClientSideConnection) stand on it.
type Conn struct {
	handler Handler

	// c is the library's connection; nil once freed. Calls into the library
	// hold lock for reading, the reader frees it holding it for writing.
	lock sync.RWMutex
	c    *C.acp_connection

	mu sync.Mutex
	// Our requests waiting for their answers, and answers that came
	// before their request was registered.
	pending map[int64]chan response
	early   map[int64]response
	// The peer's requests being handled, by responder: their cancel.
	running map[uintptr]context.CancelFunc
	closed  bool
	reason  string

	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	workers workers
}

type response struct {
	result []byte
	err    error
}

// NewConnection opens a plain JSON-RPC connection (no ACP checks) over
// stream; handler handles what the peer sends.
func NewConnection(handler Handler, stream Stream, options *Options) (*Conn, error) {
	conn, err := open(SideRaw, stream, options)
	if err != nil {
		return nil, err
	}
	conn.start(handler)
	return conn, nil
}

// open makes the connection; nothing is read until start.
func open(side Side, stream Stream, options *Options) (*Conn, error) {
	copts := C.acp_options{side: C.acp_side(side)}
	if options != nil && options.MaxMessageSize > 0 {
		copts.max_message_size = C.size_t(options.MaxMessageSize)
	}
	if stream.exitGrace > 0 {
		copts.exit_grace_ms = C.uint32_t(stream.exitGrace.Milliseconds())
	}
	var text errorText
	var c *C.acp_connection
	if rc := stream.open(&copts, &c, &text); rc != C.ACP_OK {
		return nil, fmt.Errorf("acpengine: %s", text.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Conn{
		c:       c,
		pending: map[int64]chan response{},
		early:   map[int64]response{},
		running: map[uintptr]context.CancelFunc{},
		ctx:     ctx,
		cancel:  cancel,
		done:    make(chan struct{}),
		workers: workers{jobs: make(chan func())},
	}, nil
}

func (conn *Conn) start(handler Handler) {
	conn.handler = handler
	go conn.read()
}

// eventBatch is how many events one call into the library takes at most.
const eventBatch = 256

// read takes the library's events in batches, in wire order, until the
// connection closes: notifications handled here, one at a time; requests
// on goroutines of their own; answers to their waiting Call.
func (conn *Conn) read() {
	// In C memory: cgo checks Go memory passed to C for Go pointers on
	// every call, which for this array costs more than the call.
	array := (**C.acp_event)(C.calloc(eventBatch, C.size_t(unsafe.Sizeof((*C.acp_event)(nil)))))
	defer C.free(unsafe.Pointer(array))
	events := unsafe.Slice(array, eventBatch)
	for {
		var count C.size_t
		rc := C.acp_connection_next_events(conn.c, array, eventBatch, 0, &count)
		if count == 0 {
			// Let the goroutines this batch woke (a Call's answer, a new
			// request) run on this thread before it blocks in C: otherwise
			// they wait for another thread to wake up and take the
			// processor, which costs more than the exchange itself.
			runtime.Gosched()
			rc = C.acp_connection_next_events(conn.c, array, eventBatch, -1, &count)
		}
		if rc != C.ACP_OK && count == 0 {
			conn.finish("the library stopped delivering events")
			return
		}
		for i, event := range events[:count] {
			if conn.handle(event) {
				// CLOSED is the last event; free anything after it all the same.
				for _, rest := range events[i+1 : count] {
					C.acp_event_free(rest)
				}
				return
			}
		}
	}
}

// handle takes one event (and frees it); true once the connection closed.
func (conn *Conn) handle(slot *C.acp_event) bool {
	event := *slot
	switch event.kind {
	case C.ACP_EVENT_REQUEST:
		method, params := C.GoString(event.method), goBytes(event.json)
		token := uintptr(unsafe.Pointer(event.responder))
		C.acp_event_free(slot)
		conn.startRequest(token, event.responder, method, params)
	case C.ACP_EVENT_NOTIFICATION:
		method, params := C.GoString(event.method), goBytes(event.json)
		C.acp_event_free(slot)
		conn.notification(method, params)
	case C.ACP_EVENT_RESPONSE:
		id := int64(event.request_id)
		var answer response
		if event.json != nil {
			answer.result = goBytes(event.json)
		} else {
			answer.err = &RequestError{
				Code:    int64(event.error.code),
				Message: C.GoString(event.error.message),
				Data:    goBytes(event.error.data_json),
			}
		}
		C.acp_event_free(slot)
		conn.answer(id, answer)
	case C.ACP_EVENT_CANCELLED:
		token := uintptr(unsafe.Pointer(event.responder))
		C.acp_event_free(slot)
		conn.mu.Lock()
		cancel := conn.running[token]
		conn.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	case C.ACP_EVENT_CLOSED:
		reason := C.GoString(event.reason)
		C.acp_event_free(slot)
		conn.finish(reason)
		return true
	default:
		C.acp_event_free(slot)
	}
	return false
}

// notificationKey marks the ctx of a notification handler (see Call).
type notificationKey struct{}

func (conn *Conn) notification(method string, params []byte) {
	ctx := context.WithValue(conn.ctx, notificationKey{}, true)
	defer func() {
		if panicked := recover(); panicked != nil {
			fmt.Fprintf(os.Stderr, "acpengine: the %s notification handler panicked: %v\n%s", method, panicked, debug.Stack())
		}
	}()
	if err := conn.handler.HandleNotification(ctx, method, params); err != nil {
		fmt.Fprintf(os.Stderr, "acpengine: the %s notification handler failed: %v\n", method, err)
	}
}

func (conn *Conn) startRequest(token uintptr, responder *C.acp_responder, method string, params []byte) {
	ctx, cancel := context.WithCancel(conn.ctx)
	conn.mu.Lock()
	conn.running[token] = cancel
	conn.mu.Unlock()
	conn.workers.run(func() {
		result, err := conn.serve(ctx, method, params)
		conn.mu.Lock()
		delete(conn.running, token)
		conn.mu.Unlock()
		cancel()
		respond(responder, result, err)
	})
}

// serve runs the request handler; a panic is an internal error.
func (conn *Conn) serve(ctx context.Context, method string, params []byte) (result any, err error) {
	defer func() {
		if panicked := recover(); panicked != nil {
			fmt.Fprintf(os.Stderr, "acpengine: the %s request handler panicked: %v\n%s", method, panicked, debug.Stack())
			result, err = nil, InternalError()
		}
	}()
	return conn.handler.HandleRequest(ctx, method, params)
}

// respond answers a request of the peer. An answer the peer no longer
// wants (it cancelled, or the connection closed) is dropped.
func respond(responder *C.acp_responder, result any, err error) {
	var text errorText
	if requestError, ok := err.(*RequestError); ok && requestError == nil {
		err = nil
	}
	if err == nil {
		body, merr := json.Marshal(result)
		if merr != nil {
			err = InvalidParams().WithData(map[string]string{"reason": "the result is not JSON: " + merr.Error()})
		} else {
			body = append(body, 0)
			if rc := C.acp_go_respond_ok(responder, cPtr(body), text.ptr(), text.size()); rc == C.ACP_ERR_INVALID_ARGUMENT {
				// The engine's check of the result failed: say so to the peer.
				err = InternalError().WithData(map[string]string{"reason": text.String()})
			} else {
				return
			}
		}
	}
	var requestError *RequestError
	if !errors.As(err, &requestError) {
		requestError = InternalError()
	}
	var data []byte
	if len(requestError.Data) > 0 {
		data = append(append([]byte(nil), requestError.Data...), 0)
	}
	message := cString(requestError.Message)
	C.acp_go_respond_error(responder, C.int64_t(requestError.Code), cPtr(message), cPtr(data), text.ptr(), text.size())
}

// answer hands a response to its waiting Call (or keeps it until the Call
// registered the request).
func (conn *Conn) answer(id int64, answer response) {
	conn.mu.Lock()
	waiting, ok := conn.pending[id]
	if ok {
		delete(conn.pending, id)
	} else {
		conn.early[id] = answer
	}
	conn.mu.Unlock()
	if ok {
		waiting <- answer
	}
}

// finish: the connection closed. Every request still waiting fails, every
// handler's ctx is cancelled, and the library's connection is freed.
func (conn *Conn) finish(reason string) {
	closedError := (&RequestError{Code: CodeConnectionClosed, Message: "Connection closed"}).WithData(map[string]string{"reason": reason})
	conn.mu.Lock()
	conn.closed = true
	conn.reason = reason
	pending := conn.pending
	conn.pending = map[int64]chan response{}
	conn.early = map[int64]response{}
	conn.mu.Unlock()
	for _, waiting := range pending {
		waiting <- response{err: closedError}
	}
	conn.cancel()
	conn.workers.stop()
	conn.lock.Lock()
	C.acp_connection_wait_closed(conn.c, -1)
	C.acp_connection_free(conn.c)
	conn.c = nil
	conn.lock.Unlock()
	close(conn.done)
}

// library runs call with the library's connection, or fails if it is gone.
func (conn *Conn) library(call func(c *C.acp_connection) error) error {
	conn.lock.RLock()
	defer conn.lock.RUnlock()
	if conn.c == nil {
		return conn.closedError()
	}
	return call(conn.c)
}

func (conn *Conn) closedError() error {
	conn.mu.Lock()
	reason := conn.reason
	conn.mu.Unlock()
	if reason == "" {
		reason = "closed"
	}
	return (&RequestError{Code: CodeConnectionClosed, Message: "Connection closed"}).WithData(map[string]string{"reason": reason})
}

// errWaitInNotification: Call from a notification handler would wait for
// an answer that is delivered only after the handler returns.
var errWaitInNotification = errors.New("acpengine: a notification handler cannot wait for an answer from the peer (it is delivered after the handler returns); send the request from another goroutine")

// Call sends a request and waits for its answer, which it decodes into
// result (nil: dropped). params is any value encoding/json writes (nil: no
// params). A failed request returns a *RequestError; when ctx is done first
// the request is cancelled (the peer gets $/cancel_request) and ctx.Err()
// is returned.
func (conn *Conn) Call(ctx context.Context, method string, params any, result any) error {
	if ctx.Value(notificationKey{}) != nil {
		return errWaitInNotification
	}
	body, err := encodeParams(params)
	if err != nil {
		return err
	}
	var id int64
	methodText := cString(method)
	err = conn.library(func(c *C.acp_connection) error {
		var text errorText
		var cid C.int64_t
		if rc := C.acp_go_send_request(c, cPtr(methodText), cPtr(body), &cid, text.ptr(), text.size()); rc != C.ACP_OK {
			return failure(rc, &text)
		}
		id = int64(cid)
		return nil
	})
	if err != nil {
		return err
	}
	waiting := make(chan response, 1)
	conn.mu.Lock()
	if answer, ok := conn.early[id]; ok {
		delete(conn.early, id)
		waiting <- answer
	} else if conn.closed {
		conn.mu.Unlock()
		return conn.closedError()
	} else {
		conn.pending[id] = waiting
	}
	conn.mu.Unlock()
	select {
	case answer := <-waiting:
		return decodeAnswer(answer, result)
	case <-ctx.Done():
		// The engine answers the request -32800 (dropped: nobody waits)
		// and tells the peer.
		_ = conn.library(func(c *C.acp_connection) error {
			C.acp_connection_cancel_request(c, C.int64_t(id))
			return nil
		})
		return ctx.Err()
	}
}

func decodeAnswer(answer response, result any) error {
	if answer.err != nil {
		return answer.err
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(answer.result, result); err != nil {
		return fmt.Errorf("acpengine: the peer's result does not fit %T: %w", result, err)
	}
	return nil
}

// Notify sends a notification. params is any value encoding/json writes
// (nil: no params).
func (conn *Conn) Notify(ctx context.Context, method string, params any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	body, err := encodeParams(params)
	if err != nil {
		return err
	}
	methodText := cString(method)
	return conn.library(func(c *C.acp_connection) error {
		var text errorText
		if rc := C.acp_go_send_notification(c, cPtr(methodText), cPtr(body), text.ptr(), text.size()); rc != C.ACP_OK {
			return failure(rc, &text)
		}
		return nil
	})
}

// encodeParams is params as NUL-terminated JSON (nil: none).
func encodeParams(params any) ([]byte, error) {
	if params == nil {
		return nil, nil
	}
	body, err := json.Marshal(params)
	if err != nil {
		return nil, InvalidParams().WithData(map[string]string{"reason": err.Error()})
	}
	return append(body, 0), nil
}

// Close closes the connection: requests still waiting fail, the peer sees
// EOF, a spawned agent is reaped. Done is closed once it is torn down.
func (conn *Conn) Close() error {
	err := conn.library(func(c *C.acp_connection) error {
		C.acp_connection_close(c)
		return nil
	})
	<-conn.done
	if IsConnectionClosed(err) {
		return nil
	}
	return err
}

// Done is closed once the connection closed (the peer hung up, or Close).
func (conn *Conn) Done() <-chan struct{} { return conn.done }

// CloseReason says why the connection closed ("" while it is open).
func (conn *Conn) CloseReason() string {
	conn.mu.Lock()
	defer conn.mu.Unlock()
	return conn.reason
}

// Pid is a spawned agent's process id (0 for other streams).
func (conn *Conn) Pid() int {
	pid := 0
	_ = conn.library(func(c *C.acp_connection) error {
		pid = int(C.acp_connection_pid(c))
		return nil
	})
	return pid
}

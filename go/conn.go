package acpengine

/*
#include <stdlib.h>
#include "bridge.h"
*/
import "C"

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	json "github.com/goccy/go-json"
	"math"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"time"
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
	// MaxMessageSize bounds one inbound message in bytes (0:
	// DefaultMaxMessageSize).
	MaxMessageSize int
	// Limits bound what the connection holds for a peer that is not
	// reading.
	Limits Limits
	// UncheckedMethods are methods outside the ACP schema this connection
	// sends and receives as they are, unchecked: for peers that still use
	// methods the schema dropped (the legacy "session/set_model") or
	// methods of a newer schema. Inbound ones reach the Agent's or
	// Client's ExtMethodHandler / ExtNotificationHandler; send them with
	// ExtMethod / ExtNotification (or Conn.Call / Notify), which send the
	// name as given.
	UncheckedMethods []string
	// ProtocolVersions are the ACP versions the connection speaks: nil or
	// {1}, version 1 only (the default); {2}, the version 2 draft only (a
	// v1 client's initialize is answered -32022); {1, 2}, both (an agent
	// serves each client the version it asks for). With version 2,
	// initialize selects the version (Conn.ProtocolVersion) and the engine
	// checks every later message against it, both ways.
	ProtocolVersions []int
	// Unstable speaks the unstable protocol too
	// (schema/v1/schema.unstable.json): its methods (the Method constants
	// marked unstable, such as MethodMcpMessage) pass the engine's checks
	// and reach the ExtMethodHandler / ExtNotificationHandler; otherwise
	// they are unknown (-32601).
	Unstable bool
}

// Limits bound what a connection holds for a peer that stops reading:
// while the peer's requests in flight reach MaxInFlightRequests or the
// output queued for it reaches MaxBufferedBytes, the engine reads nothing
// more (the peer's writes then wait: backpressure). With
// OutputStallTimeout, a wait in which nothing is written and no request
// finishes for that long closes the connection. Zero: the engine's default
// (DefaultMaxInFlightRequests, DefaultMaxBufferedBytes, no timeout).
type Limits struct {
	MaxInFlightRequests int
	MaxBufferedBytes    int
	OutputStallTimeout  time.Duration
}

// Handler handles what the peer sends on a connection.
type Handler interface {
	// HandleRequest answers a request: its result (any value encoding/json
	// writes), or an error (a *RequestError goes out as itself, anything
	// else as -32603). ctx is cancelled when the peer cancels the request
	// or the connection closes. Handlers run on the connection's dispatch
	// thread, where the message was read, until they block: a handler that
	// waits for the peer (Call), or runs longer than 2 ms, leaves the
	// thread and the connection goes on without it, so requests run
	// concurrently without a thread hop for those that answer at once.
	HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error)
	// HandleNotification handles a notification. Notifications are handled
	// one at a time, in arrival order, and a response (or a later request)
	// is delivered only after the notifications received before it were
	// handled; so a notification handler must not wait for an answer from
	// the peer (Call fails at once there).
	HandleNotification(ctx context.Context, method string, params json.RawMessage) error
}

// Conn is a JSON-RPC 2.0 connection to a peer, on the acp-engine library:
// requests with Call, notifications with Notify, both ways. It is safe for
// concurrent use. The typed connections (AgentSideConnection,
// ClientSideConnection) stand on it.
type Conn struct {
	handler Handler
	// paramsInPlace: the handler reads params in the library's memory (see
	// handlerParams).
	paramsInPlace bool
	// ready is closed once handler is set: the library may call back
	// before the constructor returned to Go code.
	ready  chan struct{}
	handle cgo.Handle

	// c is the library's connection; nil once freed. Calls into the library
	// hold lock for reading; the teardown frees it holding it for writing.
	lock sync.RWMutex
	c    *C.acp_connection

	mu sync.Mutex
	// The peer's requests being handled, by responder: their cancel
	// (finish cancels them all).
	running map[uintptr]context.CancelFunc
	reason  string
	// notifying is set while a notification handler runs (Close then does
	// not wait for the teardown, which that handler holds up).
	notifying atomic.Bool
	// watches cancel the Calls of Go when their ctx is done.
	watches watches
	// awaiting is set while a Call waits for its answer in C (see await).
	awaiting atomic.Bool
	// sending holds a slot per goroutine inside a library send (see
	// sendSlots).
	sending chan struct{}

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// sendSlots bounds the goroutines inside a library send at once. A send
// blocks its thread while the write queue is full (a peer that does not
// read), and Go ends a program that reaches 10,000 threads; beyond this
// many, senders wait in Go, where waiting holds no thread. (Answers are
// not gated: their threads are bounded by the in-flight limit.)
const sendSlots = 256

// NewConnection opens a plain JSON-RPC connection (no ACP checks) over
// stream; handler handles what the peer sends.
func NewConnection(handler Handler, stream Stream, options *Options) (*Conn, error) {
	return NewSideConnection(SideRaw, func(*Conn) Handler { return handler }, stream, options)
}

// NewSideConnection opens a connection that plays side (SideAgent or
// SideClient: the engine checks what it receives and sends against that
// side's methods), with a handler of your own, made from the connection
// before anything reaches it: the untyped peer of an agent or a client, for
// what the typed connections do not cover, such as the version 2 draft
// (Options.ProtocolVersions).
func NewSideConnection(side Side, handler func(*Conn) Handler, stream Stream, options *Options) (*Conn, error) {
	conn, err := open(side, stream, options)
	if err != nil {
		return nil, err
	}
	conn.start(handler(conn))
	return conn, nil
}

// ProtocolVersion is the ACP version the connection speaks: the one
// initialize selected, or its lowest until then.
func (conn *Conn) ProtocolVersion() int {
	version := 0
	_ = conn.library(func(c *C.acp_connection) error {
		version = int(C.acp_connection_protocol_version(c))
		return nil
	})
	return version
}

// protocolVersions is Options.ProtocolVersions as the library takes it.
func protocolVersions(versions []int) (C.uint32_t, error) {
	var v1, v2 bool
	for _, version := range versions {
		switch version {
		case 1:
			v1 = true
		case 2:
			v2 = true
		default:
			return 0, fmt.Errorf("acp-engine: ProtocolVersions must name 1, 2 or both, not %v", versions)
		}
	}
	switch {
	case v1 && v2:
		return C.ACP_PROTOCOL_VERSIONS_V1_AND_V2, nil
	case v2:
		return C.ACP_PROTOCOL_VERSIONS_V2, nil
	default:
		return C.ACP_PROTOCOL_VERSIONS_V1, nil
	}
}

// open makes the connection; its callbacks wait until start.
func open(side Side, stream Stream, options *Options) (*Conn, error) {
	opening, err := prepare(side, stream, options)
	if err != nil {
		return nil, err
	}
	defer opening.release()
	var text errorText
	var c *C.acp_connection
	// conn.lock held: a callback that comes before c is set waits for it.
	conn := opening.conn
	conn.lock.Lock()
	defer conn.lock.Unlock()
	// Copies: cgo refuses a pointer into the opening, which holds Go pointers.
	copts, handlers := opening.options, opening.handlers
	if rc := stream.open(&copts, &handlers, &c, &text); rc != C.ACP_OK {
		opening.failed()
		return nil, fmt.Errorf("acpengine: %s", text.String())
	}
	conn.c = c
	return conn, nil
}

// opening is a connection being made: its Conn, and the options and
// handlers the library takes (valid until release).
type opening struct {
	conn     *Conn
	options  C.acp_options
	handlers C.acp_handlers
	release  func()
}

// failed undoes prepare's Conn: the library refused the connection.
func (o *opening) failed() {
	o.conn.handle.Delete()
	o.conn.cancel()
}

// prepare makes a connection's Conn and what the library takes to open it.
func prepare(side Side, stream Stream, options *Options) (*opening, error) {
	// Response callbacks (a waiting Call's answer to its channel) only wait
	// for Go's scheduler: moving the dispatch thread's work to a new thread
	// meanwhile would start threads that wait too.
	// struct_size: the acp_options of the header this package was built
	// with; the library reads what fits in it.
	copts := C.acp_options{struct_size: C.sizeof_acp_options, side: C.acp_side(side), quick_response_callbacks: true}
	release := func() {}
	if options != nil {
		if options.MaxMessageSize > 0 {
			copts.max_message_size = C.size_t(options.MaxMessageSize)
		}
		limits := options.Limits
		if limits.MaxInFlightRequests > 0 {
			copts.max_in_flight_requests = C.size_t(limits.MaxInFlightRequests)
		}
		if limits.MaxBufferedBytes > 0 {
			copts.max_buffered_bytes = C.size_t(limits.MaxBufferedBytes)
		}
		if limits.OutputStallTimeout > 0 {
			copts.output_stall_timeout_ms = C.uint32_t(max(1, limits.OutputStallTimeout.Milliseconds()))
		}
		versions, err := protocolVersions(options.ProtocolVersions)
		if err != nil {
			return nil, err
		}
		copts.protocol_versions = versions
		copts.unstable = C.bool(options.Unstable)
		if len(options.UncheckedMethods) > 0 {
			// The library copies the names when it makes the connection.
			list := cStringList(options.UncheckedMethods)
			release = func() { freeCStringList(list, len(options.UncheckedMethods)) }
			copts.unchecked_methods = list
		}
	}
	if stream.exitGrace > 0 {
		copts.exit_grace_ms = C.uint32_t(stream.exitGrace.Milliseconds())
	}
	if stream.reconnectTimeout > 0 {
		copts.reconnect_timeout_ms = C.uint32_t(min(max(1, stream.reconnectTimeout.Milliseconds()), math.MaxUint32))
	}
	if stream.connectTimeout > 0 {
		copts.connect_timeout_ms = C.uint32_t(min(max(1, stream.connectTimeout.Milliseconds()), math.MaxUint32-1))
	} else if stream.connectTimeout < 0 {
		copts.connect_timeout_ms = C.uint32_t(math.MaxUint32) // wait for ever
	}
	ctx, cancel := context.WithCancel(context.Background())
	conn := &Conn{
		ready:   make(chan struct{}),
		sending: make(chan struct{}, sendSlots),
		running: map[uintptr]context.CancelFunc{},
		ctx:     ctx,
		cancel:  cancel,
		done:    make(chan struct{}),
	}
	conn.handle = cgo.NewHandle(conn)
	handlers := C.acp_go_handlers(C.uintptr_t(conn.handle))
	return &opening{conn: conn, options: copts, handlers: handlers, release: release}, nil
}

func (conn *Conn) start(handler Handler) {
	conn.handler = handler
	_, conn.paramsInPlace = handler.(paramsInPlace)
	close(conn.ready)
}

// paramsInPlace is a handler that may be given params in the library's
// memory, valid only while it runs: it copies what it keeps. The typed
// sides are: they decode the params first (decodeJSON copies what it
// reads), which saves copying a file's content once more.
type paramsInPlace interface{ readsParamsInPlace() }

// handlerParams are params (in the library's memory) as the handler may
// take them: a copy, unless it reads them in place.
func (conn *Conn) handlerParams(params []byte) []byte {
	if conn.paramsInPlace {
		return params
	}
	return bytes.Clone(params)
}

// notificationKey marks the ctx of a notification handler (see Call).
type notificationKey struct{}

func (conn *Conn) notification(method string, params []byte) {
	ctx := context.WithValue(conn.ctx, notificationKey{}, true)
	conn.notifying.Store(true)
	defer conn.notifying.Store(false)
	defer recoverHandler(method, "notification")
	if err := conn.handler.HandleNotification(ctx, method, conn.handlerParams(params)); err != nil {
		logf("the %s notification handler failed: %v", method, err)
	}
}

// invalidNotification: the peer sent a notification whose params fail the
// schema, which the engine dropped; err is the -32602 that says what
// failed. The Agent's or Client's (or the Handler's)
// InvalidNotificationHandler hears of it; without one it is logged.
func (conn *Conn) invalidNotification(method string, err *RequestError) {
	conn.notifying.Store(true)
	defer conn.notifying.Store(false)
	defer recoverHandler(method, "invalid notification")
	var target any = conn.handler
	if wrapper, ok := target.(wrapsTarget); ok {
		target = wrapper.target()
	}
	if hook, ok := target.(InvalidNotificationHandler); ok {
		hook.OnInvalidNotification(method, err)
		return
	}
	what := string(err.Data)
	if what == "" {
		what = err.Message
	}
	logf("dropped a %s notification that fails the schema: %s", method, what)
}

// wrapsTarget is a handler the package made around the user's Agent or
// Client (which is where optional interfaces are looked for).
type wrapsTarget interface{ target() any }

func (conn *Conn) request(responder *C.acp_responder, method string, params []byte) {
	token := uintptr(unsafe.Pointer(responder))
	// A root of its own, not a child of conn.ctx (a child costs the
	// parent's lock, and an insert into and a delete from its map, per
	// request): finish cancels the running ones itself.
	ctx, cancel := context.WithCancel(context.Background())
	conn.mu.Lock()
	if conn.ctx.Err() != nil {
		cancel() // the connection closed already
	} else {
		conn.running[token] = cancel
	}
	conn.mu.Unlock()
	result, err := conn.serve(ctx, method, conn.handlerParams(params))
	conn.mu.Lock()
	delete(conn.running, token)
	conn.mu.Unlock()
	cancel()
	respond(responder, result, err)
}

// cancelled: the peer cancelled request responder (the engine answered it).
func (conn *Conn) cancelled(responder *C.acp_responder) {
	conn.mu.Lock()
	cancel := conn.running[uintptr(unsafe.Pointer(responder))]
	conn.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// serve runs the request handler; a panic is an internal error.
func (conn *Conn) serve(ctx context.Context, method string, params []byte) (result any, err error) {
	defer func() {
		if panicked := recover(); panicked != nil {
			logPanic(method, "request", panicked)
			result, err = nil, InternalError()
		}
	}()
	return conn.handler.HandleRequest(ctx, method, params)
}

// respond answers a request of the peer. An answer the peer no longer
// wants (it cancelled, or the connection closed) is dropped.
func respond(responder *C.acp_responder, result any, err error) {
	text := takeErrorText()
	defer text.release()
	if requestError, ok := err.(*RequestError); ok && requestError == nil {
		err = nil
	}
	if err == nil {
		err = withJSON(result, encodeC, func(body []byte) error {
			if rc := C.acp_go_respond_ok(responder, cPtr(body), text.ptr(), text.size()); rc == C.ACP_ERR_INVALID_ARGUMENT {
				// The engine's check of the result failed: say so to the peer.
				return InternalError().WithData(map[string]string{"reason": text.String()})
			}
			return nil
		})
		var failed notJSON
		if errors.As(err, &failed) {
			err = InternalError().WithData(map[string]string{"reason": "the result is not JSON: " + failed.Error()})
		}
		if err == nil {
			return
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

// finish: the connection closed (the library's last callback). Every
// handler's ctx is cancelled; the library's connection is freed once its
// teardown is done.
func (conn *Conn) finish(reason string) {
	conn.mu.Lock()
	conn.reason = reason
	conn.cancel()
	for _, cancel := range conn.running {
		cancel()
	}
	conn.mu.Unlock()
	go func() {
		conn.lock.Lock()
		C.acp_connection_wait_closed(conn.c, -1)
		C.acp_connection_free(conn.c)
		conn.c = nil
		conn.lock.Unlock()
		conn.handle.Delete()
		close(conn.done)
	}()
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

// send makes one library send while holding a send slot (see sendSlots),
// with an error text for its failure.
func (conn *Conn) send(call func(c *C.acp_connection, text *errorText) C.acp_result) error {
	return conn.library(func(c *C.acp_connection) error {
		text := takeErrorText()
		defer text.release()
		conn.sending <- struct{}{}
		rc := call(c, text)
		<-conn.sending
		if rc != C.ACP_OK {
			return failure(rc, text)
		}
		return nil
	})
}

func (conn *Conn) closedError() error {
	conn.mu.Lock()
	reason := conn.reason
	conn.mu.Unlock()
	if reason == "" {
		reason = "closed"
	}
	return (&RequestError{Code: CodeConnectionClosed, Message: messageConnectionClosed}).WithData(map[string]string{"reason": reason})
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
	var err error
	if conn.awaiting.CompareAndSwap(false, true) {
		err = conn.await(ctx, method, params, result)
		conn.awaiting.Store(false)
	} else {
		err = conn.wait(ctx, method, params, result)
	}
	if err != nil && ctx.Err() != nil && CodeOf(err) == CodeRequestCancelled {
		return ctx.Err()
	}
	return err
}

// decodeResult decodes a peer's result into result (nil: dropped).
func decodeResult(answer []byte, result any) error {
	if result == nil {
		return nil
	}
	if err := decodeJSON(answer, result); err != nil {
		return fmt.Errorf("acpengine: the peer's result does not fit %T: %w", result, err)
	}
	return nil
}

// await sends a request and waits for its answer in C, where this thread
// reads the stream itself while nobody else does: a request/response
// exchange then costs no wake-up of another thread. One Call at a time
// does this (each waits on a thread of its own); the others wait. The
// answer is decoded into result from the library's string, not a copy.
func (conn *Conn) await(ctx context.Context, method string, params any, result any) error {
	// Sequential calls come this way, typically from a handler's goroutine,
	// whose stack has grown: goccy's encoder is the faster one there, by
	// far for large params (a file's content).
	methodText := cString(method)
	var id C.int64_t
	err := withParams(params, encodeC, func(body []byte) error {
		return conn.send(func(c *C.acp_connection, text *errorText) C.acp_result {
			return C.acp_go_start_request(c, cPtr(methodText), cPtr(body), &id, text.ptr(), text.size())
		})
	})
	if err != nil {
		return err
	}
	return conn.library(func(c *C.acp_connection) error {
		text := takeErrorText()
		defer text.release()
		if ctx.Done() != nil {
			// The engine answers the request -32800 at once, which ends the
			// wait below, and tells the peer.
			stop := context.AfterFunc(ctx, func() { conn.cancelRequest(id) })
			defer stop()
		}
		var out *C.char
		rc := C.acp_go_await(c, id, &out, text.ptr(), text.size())
		defer C.acp_string_free(out)
		answer := cBytes(out)
		switch rc {
		case C.ACP_OK:
			return decodeResult(answer, result)
		case C.ACP_ERR_REQUEST_FAILED:
			requestError := &RequestError{}
			if json.Unmarshal(answer, requestError) != nil {
				return InternalError()
			}
			return requestError
		case C.ACP_ERR_WRONG_MODE:
			return errWaitInNotification
		}
		return failure(rc, text)
	})
}

func (conn *Conn) cancelRequest(id C.int64_t) {
	_ = conn.library(func(c *C.acp_connection) error {
		C.acp_connection_cancel_request(c, id)
		return nil
	})
}

// Notify sends a notification. params is any value encoding/json writes
// (nil: no params).
func (conn *Conn) Notify(ctx context.Context, method string, params any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	methodText := cString(method)
	return withParams(params, encodeC, func(body []byte) error {
		return conn.send(func(c *C.acp_connection, text *errorText) C.acp_result {
			return C.acp_go_send_notification(c, cPtr(methodText), cPtr(body), text.ptr(), text.size())
		})
	})
}

// Close closes the connection: requests still waiting fail, the peer sees
// EOF, a spawned agent is reaped; it returns once that is done (except
// from a notification handler, which holds the teardown up: then it
// returns at once).
func (conn *Conn) Close() error {
	err := conn.library(func(c *C.acp_connection) error {
		C.acp_connection_close(c)
		return nil
	})
	if !conn.notifying.Load() {
		<-conn.done
	}
	if IsConnectionClosed(err) {
		return nil
	}
	return err
}

// Done is closed once the connection closed and was torn down (the peer
// hung up, or Close).
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

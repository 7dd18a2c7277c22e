package acpengine

// The library's callbacks (bridge.c passes them on): they run on the
// connection's dispatch thread, in wire order.

/*
#include "bridge.h"
*/
import "C"

import (
	"fmt"
	"io"
	"os"
	"runtime/cgo"
	"runtime/debug"
	"sync"
)

func connOf(handle C.uintptr_t) *Conn {
	conn := cgo.Handle(handle).Value().(*Conn)
	<-conn.ready
	return conn
}

// The params are the library's memory, valid until the callback returns,
// which is after the handler returned (see Conn.handlerParams).

//export acpGoRequest
func acpGoRequest(handle C.uintptr_t, method *C.char, params *C.char, responder *C.acp_responder) {
	connOf(handle).request(responder, C.GoString(method), cBytes(params))
}

//export acpGoNotification
func acpGoNotification(handle C.uintptr_t, method *C.char, params *C.char) {
	connOf(handle).notification(C.GoString(method), cBytes(params))
}

//export acpGoInvalidNotification
func acpGoInvalidNotification(handle C.uintptr_t, method *C.char, code C.int64_t, message *C.char, data *C.char) {
	connOf(handle).invalidNotification(C.GoString(method),
		&RequestError{Code: int64(code), Message: C.GoString(message), Data: goBytes(data)})
}

//export acpGoCancel
func acpGoCancel(handle C.uintptr_t, responder *C.acp_responder) {
	connOf(handle).cancelled(responder)
}

// acpGoResponse: the answer to a Call that waits in Go (waiting.go); slot
// is its user data.
//
//export acpGoResponse
func acpGoResponse(slot C.uintptr_t, result *C.char, code C.int64_t, message *C.char, data *C.char) {
	if result != nil {
		answer(uintptr(slot), cBytes(result), nil)
		return
	}
	answer(uintptr(slot), nil, &RequestError{Code: int64(code), Message: C.GoString(message), Data: goBytes(data)})
}

//export acpGoClose
func acpGoClose(handle C.uintptr_t, reason *C.char) {
	connOf(handle).finish(C.GoString(reason))
}

// recoverHandler keeps a handler's panic from unwinding into C.
func recoverHandler(method, kind string) {
	if panicked := recover(); panicked != nil {
		logPanic(method, kind, panicked)
	}
}

func logPanic(method, kind string, panicked any) {
	logf("the %s %s handler panicked: %v\n%s", method, kind, panicked, debug.Stack())
}

// logOutput is where logf writes: stderr (a test swaps it, under logLock).
var (
	logLock   sync.Mutex
	logOutput io.Writer = os.Stderr
)

// logf reports what no caller can be told (a handler that failed or
// panicked, a notification dropped) on stderr, which an agent's client
// shows as its log.
func logf(format string, args ...any) {
	logLock.Lock()
	defer logLock.Unlock()
	fmt.Fprintf(logOutput, "acpengine: "+format+"\n", args...)
}

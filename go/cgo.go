package acpengine

// The library, found with pkg-config (`make install`, then
// PKG_CONFIG_PATH=<prefix>/lib/pkgconfig), the calls this package makes
// (bridge.c), and the conversions between Go and C text.

/*
#cgo pkg-config: acp_engine
#include <stdlib.h>
#include <string.h>
#include "bridge.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// errorText receives the library's error message of a failed call.
type errorText [512]C.char

// errorTexts recycles the buffers of the per-message calls: a buffer
// passed to C moves to the heap, and a fresh one per message would cost
// an allocation of 512 zeroed bytes (and the collections it brings).
var errorTexts = sync.Pool{New: func() any { return new(errorText) }}

// takeErrorText is an empty buffer from errorTexts; release it after the call.
func takeErrorText() *errorText {
	text := errorTexts.Get().(*errorText)
	text[0] = 0
	return text
}

func (t *errorText) release() { errorTexts.Put(t) }

func (t *errorText) ptr() *C.char { return &t[0] }

func (t *errorText) size() C.size_t { return C.size_t(len(t)) }

func (t *errorText) String() string { return C.GoString(&t[0]) }

// cString is text as a NUL-terminated C string in Go memory (valid for the
// duration of a call that does not keep it).
func cString(text string) []byte {
	out := make([]byte, len(text)+1)
	copy(out, text)
	return out
}

func cPtr(text []byte) *C.char {
	if text == nil {
		return nil
	}
	return (*C.char)(unsafe.Pointer(&text[0]))
}

// cBytes is a NUL-terminated C string's bytes in place, without the NUL
// (nil stays nil): valid until the string is freed, so decode it first
// (decodeJSON copies what it reads).
func cBytes(text *C.char) []byte {
	if text == nil {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(text)), C.strlen(text))
}

// goBytes copies a NUL-terminated C string (nil stays nil).
func goBytes(text *C.char) []byte {
	if text == nil {
		return nil
	}
	return C.GoBytes(unsafe.Pointer(text), C.int(C.strlen(text)))
}

// failure is the error a failed library call means.
func failure(rc C.acp_result, text *errorText) error {
	message := text.String()
	switch rc {
	case C.ACP_ERR_CLOSED:
		return (&RequestError{Code: CodeConnectionClosed, Message: messageConnectionClosed}).WithData(map[string]string{"reason": message})
	case C.ACP_ERR_INVALID_ARGUMENT, C.ACP_ERR_INVALID_JSON, C.ACP_ERR_INVALID_UTF8:
		return InvalidParams().WithData(map[string]string{"reason": message})
	}
	return fmt.Errorf("acpengine: %s (result %d)", message, int(rc))
}

// Version is the C library's version (acp_engine_version).
func Version() string { return C.GoString(C.acp_engine_version()) }

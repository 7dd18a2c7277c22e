package acpengine

/*
#include <stdlib.h>
#include "bridge.h"
*/
import "C"

import (
	"runtime"
	"sort"
	"time"
	"unsafe"
)

// Stream is what a connection talks over: this process's stdio
// (StdioStream), a spawned agent's (SpawnStream), a remote agent
// (RemoteStream) or two file descriptors (FDStream).
type Stream struct {
	open func(options *C.acp_options, handlers *C.acp_handlers, out **C.acp_connection, text *errorText) C.acp_result
	// How the spawned child may exit: filled into the options.
	exitGrace time.Duration
	// How long a remote stream keeps trying to reconnect: filled into the
	// options.
	reconnectTimeout time.Duration
	// How long a remote stream's server has to take the connection: filled
	// into the options.
	connectTimeout time.Duration
}

// StdioStream is this process's stdin and stdout (an agent launched by its
// client).
func StdioStream() Stream {
	return Stream{open: func(options *C.acp_options, handlers *C.acp_handlers, out **C.acp_connection, text *errorText) C.acp_result {
		return C.acp_go_stdio(options, handlers, out, text.ptr(), text.size())
	}}
}

// SpawnOptions are the settings of a spawned agent process.
type SpawnOptions struct {
	// Env is added to this process's environment.
	Env map[string]string
	// Dir is the child's working directory ("": ours).
	Dir string
	// ExitGrace is how long the child may take to exit after its stdin
	// closed before it is killed (0: half a second).
	ExitGrace time.Duration
}

// SpawnStream starts command with args (looked up in PATH) and talks over
// its stdin and stdout; its stderr is this process's. The child is reaped
// when the connection closes.
func SpawnStream(command string, args []string, options *SpawnOptions) Stream {
	if options == nil {
		options = &SpawnOptions{}
	}
	argv := append([]string{command}, args...)
	env := make([]string, 0, len(options.Env))
	for key, value := range options.Env {
		env = append(env, key+"="+value)
	}
	sort.Strings(env)
	dir := options.Dir
	return Stream{
		exitGrace: options.ExitGrace,
		open: func(copts *C.acp_options, handlers *C.acp_handlers, out **C.acp_connection, text *errorText) C.acp_result {
			cargv := cStringArray(argv)
			defer freeCStringArray(cargv)
			var cenv **C.char
			if len(env) > 0 {
				array := cStringArray(env)
				defer freeCStringArray(array)
				cenv = &array[0]
			}
			var cdir *C.char
			if dir != "" {
				cdir = C.CString(dir)
				defer C.free(unsafe.Pointer(cdir))
			}
			return C.acp_go_spawn(&cargv[0], cenv, cdir, copts, handlers, out, text.ptr(), text.size())
		},
	}
}

// RemoteOptions say how to reach a remote agent; the zero value sends no
// token and trusts the system's CA roots.
type RemoteOptions struct {
	// Token, unless "", is sent as `Authorization: Bearer <token>`.
	Token string
	// CAFile, unless "", is a PEM file of CA certificates to trust besides
	// the system's (wss:// and https:// servers with a private CA).
	CAFile string
	// ReconnectTimeout: how long to keep trying, with backoff and jitter,
	// to reopen a broken Streamable HTTP event stream or resume a broken
	// WebSocket (the server sends what was lost, once; see
	// docs/websocket-resume.md) or to reach the server for a message (an
	// initialize answered 502 to 504 too), before the connection closes
	// with the reason. 0 (DefaultReconnectTimeout): close at the first
	// break, so that a dead server fails what is pending at once.
	ReconnectTimeout time.Duration
	// ConnectTimeout: how long the server has to take the connection (the
	// TCP connect, the TLS handshake and the WebSocket upgrade) before it
	// closes with the reason. 0: DefaultConnectTimeout; negative: wait for
	// ever.
	ConnectTimeout time.Duration
}

// RemoteStream is a remote agent at url: ws:// or wss:// (WebSocket), http://
// or https:// (Streamable HTTP), as `acp-engine serve` and the official
// SDKs' servers serve them. The connection is made in the background; if
// it fails, the connection closes with the reason and pending calls fail.
func RemoteStream(url string, options RemoteOptions) Stream {
	return Stream{open: func(copts *C.acp_options, handlers *C.acp_handlers, out **C.acp_connection, text *errorText) C.acp_result {
		curl := C.CString(url)
		defer C.free(unsafe.Pointer(curl))
		var remote C.acp_remote_options
		if options.Token != "" {
			remote.token = C.CString(options.Token)
			defer C.free(unsafe.Pointer(remote.token))
		}
		if options.CAFile != "" {
			remote.ca_file = C.CString(options.CAFile)
			defer C.free(unsafe.Pointer(remote.ca_file))
		}
		return C.acp_go_connect_url(curl, &remote, copts, handlers, out, text.ptr(), text.size())
	}, reconnectTimeout: options.ReconnectTimeout, connectTimeout: options.ConnectTimeout}
}

// FDStream talks over two file descriptors, which the connection owns from
// then on (it closes them).
func FDStream(readFD, writeFD int) Stream {
	return Stream{open: func(options *C.acp_options, handlers *C.acp_handlers, out **C.acp_connection, text *errorText) C.acp_result {
		return C.acp_go_fds(C.int(readFD), C.int(writeFD), options, handlers, out, text.ptr(), text.size())
	}}
}

// cStringArray is a NULL-terminated array of C strings in C memory.
func cStringArray(values []string) []*C.char {
	array := make([]*C.char, len(values)+1)
	for i, value := range values {
		array[i] = C.CString(value)
	}
	return array
}

// cStringList is a NULL-terminated array of C strings, the array itself in
// C memory too (so that a struct passed to C may point to it); free it
// with freeCStringList.
func cStringList(values []string) **C.char {
	list := (**C.char)(C.calloc(C.size_t(len(values)+1), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	items := unsafe.Slice(list, len(values)+1)
	for i, value := range values {
		items[i] = C.CString(value)
	}
	return list
}

// freeCStringList frees a list of cStringList with n strings.
func freeCStringList(list **C.char, n int) {
	for _, value := range unsafe.Slice(list, n) {
		C.free(unsafe.Pointer(value))
	}
	C.free(unsafe.Pointer(list))
}

func freeCStringArray(array []*C.char) {
	for _, value := range array {
		if value != nil {
			C.free(unsafe.Pointer(value))
		}
	}
	runtime.KeepAlive(array)
}

package acpengine

/*
#include "bridge.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
)

// Proxy is what a proxy of a proxy chain (editor -> conductor -> proxy ...
// -> agent) does with the messages that cross it. Its predecessor (toward
// the client) and successor (toward the agent) are reached through its one
// connection to the conductor, which the library splits in two: the
// proxy/successor envelopes, the id spaces and the cancellations crossing
// the proxy are the engine's. Embed PassThrough and override what you
// change. Requests run concurrently; notifications one at a time in arrival
// order, per direction. A request's ctx is cancelled when the request it
// serves is, which cancels a Call made with it.
type Proxy interface {
	// ClientRequest: a request from the client side (initialize included),
	// on its way to the agent.
	ClientRequest(ctx context.Context, method string, params json.RawMessage, successor *Conn) (any, error)
	// ClientNotification: a notification from the client side.
	ClientNotification(ctx context.Context, method string, params json.RawMessage, successor *Conn) error
	// AgentRequest: a request from the agent side (a permission request, a
	// file read...), on its way to the client.
	AgentRequest(ctx context.Context, method string, params json.RawMessage, predecessor *Conn) (any, error)
	// AgentNotification: a notification from the agent side.
	AgentNotification(ctx context.Context, method string, params json.RawMessage, predecessor *Conn) error
}

// PassThrough passes every message on unchanged.
type PassThrough struct{}

// ClientRequest passes the request on to the successor.
func (PassThrough) ClientRequest(ctx context.Context, method string, params json.RawMessage, successor *Conn) (any, error) {
	return Forward(ctx, successor, method, params)
}

// ClientNotification passes the notification on to the successor.
func (PassThrough) ClientNotification(ctx context.Context, method string, params json.RawMessage, successor *Conn) error {
	return successor.Notify(ctx, method, paramsOf(params))
}

// AgentRequest passes the request on to the predecessor.
func (PassThrough) AgentRequest(ctx context.Context, method string, params json.RawMessage, predecessor *Conn) (any, error) {
	return Forward(ctx, predecessor, method, params)
}

// AgentNotification passes the notification on to the predecessor.
func (PassThrough) AgentNotification(ctx context.Context, method string, params json.RawMessage, predecessor *Conn) error {
	return predecessor.Notify(ctx, method, paramsOf(params))
}

// Forward sends a request on conn and returns its result as it came (an
// error as the peer's *RequestError, which a handler returns as it is).
func Forward(ctx context.Context, conn *Conn, method string, params json.RawMessage) (json.RawMessage, error) {
	var result json.RawMessage
	if err := conn.Call(ctx, method, paramsOf(params), &result); err != nil {
		return nil, err
	}
	return result, nil
}

// paramsOf is params to send: absent stays absent.
func paramsOf(params json.RawMessage) any {
	if len(params) == 0 {
		return nil
	}
	return params
}

// proxySide is one of a proxy's connections as a Handler.
type proxySide struct {
	request      func(ctx context.Context, method string, params json.RawMessage) (any, error)
	notification func(ctx context.Context, method string, params json.RawMessage) error
}

func (side proxySide) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	return side.request(ctx, method, params)
}

func (side proxySide) HandleNotification(ctx context.Context, method string, params json.RawMessage) error {
	return side.notification(ctx, method, params)
}

// RunProxy serves proxy on this process's stdin and stdout (a conductor
// launched it) until either side closes; options apply to both connections.
func RunProxy(proxy Proxy, options *Options) error {
	predecessor, successor, err := openProxy(options)
	if err != nil {
		return err
	}
	predecessor.start(proxySide{
		request: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			return proxy.ClientRequest(ctx, method, params, successor)
		},
		notification: func(ctx context.Context, method string, params json.RawMessage) error {
			return proxy.ClientNotification(ctx, method, params, successor)
		},
	})
	successor.start(proxySide{
		request: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			return proxy.AgentRequest(ctx, method, params, predecessor)
		},
		notification: func(ctx context.Context, method string, params json.RawMessage) error {
			return proxy.AgentNotification(ctx, method, params, predecessor)
		},
	})
	select {
	case <-predecessor.Done():
	case <-successor.Done():
	}
	predecessor.Close()
	successor.Close()
	return nil
}

// openProxy makes a proxy's two connections on this process's stdio; their
// callbacks wait until start.
func openProxy(options *Options) (*Conn, *Conn, error) {
	toward := [2]*opening{}
	for i := range toward {
		opening, err := prepare(SideRaw, Stream{}, options)
		if err != nil {
			if i == 1 {
				toward[0].failed()
			}
			return nil, nil, err
		}
		defer opening.release()
		toward[i] = opening
	}
	predecessor, successor := toward[0].conn, toward[1].conn
	// Both locks held: a callback that comes before c is set waits for it.
	predecessor.lock.Lock()
	defer predecessor.lock.Unlock()
	successor.lock.Lock()
	defer successor.lock.Unlock()
	var text errorText
	var p, s *C.acp_connection
	// Copies: cgo refuses a pointer into an opening, which holds Go pointers.
	options0, handlers0 := toward[0].options, toward[0].handlers
	options1, handlers1 := toward[1].options, toward[1].handlers
	rc := C.acp_go_proxy_stdio(&options0, &handlers0, &options1, &handlers1, &p, &s, text.ptr(), text.size())
	if rc != C.ACP_OK {
		toward[0].failed()
		toward[1].failed()
		return nil, nil, fmt.Errorf("acpengine: %s", text.String())
	}
	predecessor.c, successor.c = p, s
	return predecessor, successor, nil
}

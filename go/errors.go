package acpengine

import (
	"errors"
	"fmt"
	json "github.com/goccy/go-json"
)

// RequestError is a JSON-RPC error: what a handler returns to answer with
// a particular error, and what a request to the peer fails with when the
// peer answered one. Any other error a handler returns (and a panic) is
// answered -32603 "Internal error", its text kept out of the answer.
type RequestError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RequestError) Error() string {
	if len(e.Data) > 0 {
		return fmt.Sprintf("%s (%d): %s", e.Message, e.Code, e.Data)
	}
	return fmt.Sprintf("%s (%d)", e.Message, e.Code)
}

// WithData returns a copy of the error carrying data (any JSON value).
func (e *RequestError) WithData(data any) *RequestError {
	out := *e
	if raw, err := json.Marshal(data); err == nil {
		out.Data = raw
	}
	return &out
}

// The error codes (CodeParseError, ...) are in tables_gen.go.

// ParseError: the message was not JSON.
func ParseError() *RequestError {
	return &RequestError{Code: CodeParseError, Message: messageParseError}
}

// InvalidRequest: the message was not a valid request.
func InvalidRequest() *RequestError {
	return &RequestError{Code: CodeInvalidRequest, Message: messageInvalidRequest}
}

// MethodNotFound: the method is not handled here.
func MethodNotFound(method string) *RequestError {
	return (&RequestError{Code: CodeMethodNotFound, Message: messageMethodNotFound}).WithData(map[string]string{"method": method})
}

// InvalidParams: the params do not fit the method.
func InvalidParams() *RequestError {
	return &RequestError{Code: CodeInvalidParams, Message: messageInvalidParams}
}

// InternalError: something went wrong on this side.
func InternalError() *RequestError {
	return &RequestError{Code: CodeInternalError, Message: messageInternalError}
}

// AuthRequired: the agent needs `authenticate` first.
func AuthRequired() *RequestError {
	return &RequestError{Code: CodeAuthRequired, Message: messageAuthRequired}
}

// ResourceNotFound: the resource (a session, a file) named by uri is unknown.
func ResourceNotFound(uri string) *RequestError {
	return (&RequestError{Code: CodeResourceNotFound, Message: messageResourceNotFound}).WithData(map[string]string{"uri": uri})
}

// SessionNotFound: the session is unknown (-32002 with data.sessionId).
func SessionNotFound(sessionID SessionId) *RequestError {
	return (&RequestError{Code: CodeResourceNotFound, Message: messageSessionNotFound}).WithData(map[string]SessionId{"sessionId": sessionID})
}

// RequestCancelled: the request was cancelled.
func RequestCancelled() *RequestError {
	return &RequestError{Code: CodeRequestCancelled, Message: messageRequestCancelled}
}

// IsConnectionClosed reports whether err says the connection closed before
// the answer came.
func IsConnectionClosed(err error) bool {
	var requestError *RequestError
	return errors.As(err, &requestError) && requestError.Code == CodeConnectionClosed
}

// CodeOf is the JSON-RPC code err carries (0 when it carries none).
func CodeOf(err error) int64 {
	var requestError *RequestError
	if errors.As(err, &requestError) {
		return requestError.Code
	}
	return 0
}

// DecodeParams reads a method's params into into as the typed connections
// do (absent params read as {}): a mismatch is -32602 with the reason. For
// handlers of NewSideConnection, and the generated method tables.
func DecodeParams(params []byte, into any) error {
	if len(params) == 0 {
		params = []byte("{}")
	}
	if err := decodeJSON(params, into); err != nil {
		return InvalidParams().WithData(map[string]string{"reason": err.Error()})
	}
	return nil
}

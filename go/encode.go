package acpengine

import (
	stdjson "encoding/json"
	"errors"
	"io"

	json "github.com/goccy/go-json"
)

// How values become the NUL-terminated JSON text the library takes: the
// library is given the encoder's own buffer, with the encoder's newline
// made the NUL, during the encoder's one Write (see withJSON). The library
// copies what it sends into its frame, so no other copy of the text (a
// 16 MiB file's content) is made, nor a buffer allocated per message.

// An encoder writes value's JSON to w with one Write, ending in a newline
// (both encoders below do).
type encoder func(w io.Writer, value any) error

// encodeC encodes with goccy/go-json: the faster encoder on a goroutine
// whose stack has already grown, as where notifications are sent (a prompt
// turn's goroutine) and answers are written (the dispatch thread's).
func encodeC(w io.Writer, value any) error {
	return json.NewEncoder(w).Encode(value)
}

// encodeForCall encodes a request's params with encoding/json. A Call
// often runs on a goroutine of its own (one per concurrent request), whose
// stack starts small; goccy's encoder needs more, and growing a stack with
// goccy's VM frame on it is slow (the copy walks that huge function's
// tables): 5,000 concurrent calls ran about 1.9x faster this way, and
// sequential calls about as fast (docs/performance.md). A Call that waits
// alone encodes with goccy (see Conn.await).
func encodeForCall(w io.Writer, value any) error {
	return stdjson.NewEncoder(w).Encode(value)
}

// withJSON runs use with value's JSON, NUL-terminated, in the encoder's
// buffer: valid only while use runs, which must not keep it. It returns
// the encoder's error (the value is not JSON) as a notJSON, or use's.
func withJSON(value any, encode encoder, use func(text []byte) error) error {
	handOver := handOver{use: use}
	if err := encode(&handOver, value); err != nil {
		return notJSON{err}
	}
	if !handOver.called {
		return notJSON{errors.New("the encoder wrote nothing")}
	}
	return handOver.err
}

// notJSON is an encoder's failure: the value cannot be written as JSON.
type notJSON struct{ err error }

func (e notJSON) Error() string { return e.err.Error() }

// handOver passes the encoder's one Write on to use.
type handOver struct {
	use    func(text []byte) error
	called bool
	err    error
}

func (h *handOver) Write(text []byte) (int, error) {
	if h.called || len(text) == 0 || text[len(text)-1] != '\n' {
		return 0, errors.New("the encoder wrote other than one newline-terminated value")
	}
	h.called = true
	text[len(text)-1] = 0 // the encoder's newline
	h.err = h.use(text)
	return len(text), nil
}

// withParams runs use with params as NUL-terminated JSON (nil: none); a
// value that cannot be encoded is the caller's invalid params.
func withParams(params any, encode encoder, use func(body []byte) error) error {
	if params == nil {
		return use(nil)
	}
	err := withJSON(params, encode, use)
	var failed notJSON
	if errors.As(err, &failed) {
		return InvalidParams().WithData(map[string]string{"reason": failed.Error()})
	}
	return err
}

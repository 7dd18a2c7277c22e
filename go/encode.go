package acpengine

import (
	stdjson "encoding/json"

	json "github.com/goccy/go-json"
)

// How values become the NUL-terminated JSON text the library takes. Each
// is copied once from the encoder into a buffer of its size (see encoded)
// and the encoder's newline becomes the NUL (appending a NUL to a
// marshalled value would copy a 16 MiB file's text once more).

// encoded takes an encoder's output, which both encoders write with one
// Write: one copy into an exact-size buffer, where a bytes.Buffer would
// zero a larger one first.
type encoded struct{ text []byte }

func (e *encoded) Write(p []byte) (int, error) {
	e.text = append(e.text, p...)
	return len(p), nil
}

// encodeC encodes with goccy/go-json: the faster encoder on a goroutine
// whose stack has already grown, as where notifications are sent (a prompt
// turn's goroutine) and answers are written (the dispatch thread's).
func encodeC(value any) ([]byte, error) {
	var out encoded
	if err := json.NewEncoder(&out).Encode(value); err != nil {
		return nil, err
	}
	return nulTerminated(out.text), nil
}

// encodeForCall encodes a request's params with encoding/json. A Call
// often runs on a goroutine of its own (one per concurrent request), whose
// stack starts small; goccy's encoder needs more, and growing a stack with
// goccy's VM frame on it is slow (the copy walks that huge function's
// tables): 5,000 concurrent calls ran about 1.9x faster this way, and
// sequential calls about as fast (docs/performance.md). A Call that waits
// alone encodes with goccy (see Conn.await).
func encodeForCall(value any) ([]byte, error) {
	var out encoded
	if err := stdjson.NewEncoder(&out).Encode(value); err != nil {
		return nil, err
	}
	return nulTerminated(out.text), nil
}

func nulTerminated(body []byte) []byte {
	body[len(body)-1] = 0 // the encoder's newline
	return body
}

// encodeParams is params as NUL-terminated JSON (nil: none); a value that
// cannot be encoded is the caller's invalid params.
func encodeParams(params any, encode func(any) ([]byte, error)) ([]byte, error) {
	if params == nil {
		return nil, nil
	}
	body, err := encode(params)
	if err != nil {
		return nil, InvalidParams().WithData(map[string]string{"reason": err.Error()})
	}
	return body, nil
}

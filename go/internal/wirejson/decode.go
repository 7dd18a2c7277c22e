package wirejson

import (
	json "github.com/goccy/go-json"
	segmentio "github.com/segmentio/encoding/json"
)

// LargeText is where Decode changes decoders (and where a text is large
// enough to decode off the dispatch thread).
const LargeText = 64 * 1024

// Decode decodes data into into. goccy/go-json is the fastest decoder
// for ordinary messages, but it reads a string byte by byte;
// segmentio/encoding scans strings eight bytes at a time, and decodes a
// 16 MiB file's content about 4x faster (docs/performance.md). Neither
// keeps data after it returns (both copy the strings they decode), so data
// may be the library's memory.
func Decode(data []byte, into any) error {
	if len(data) >= LargeText {
		return segmentio.Unmarshal(data, into)
	}
	return json.Unmarshal(data, into)
}

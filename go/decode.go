package acpengine

import "github.com/acp-engine/acp-engine/go/internal/wirejson"

// decodeJSON decodes data into into (wirejson.Decode: goccy/go-json, or
// segmentio/encoding for large texts). data may be the library's memory.
func decodeJSON(data []byte, into any) error { return wirejson.Decode(data, into) }

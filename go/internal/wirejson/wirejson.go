// Package wirejson holds the JSON helpers of the generated protocol types
// (the v1 types of package acpengine and the v2 types of package acpv2):
// unions with a tag property, unions told apart by shape, and structs whose
// union part shares their object.
package wirejson

import (
	"bytes"
	"fmt"
	json "github.com/goccy/go-json"
	"strings"
)

// Tagged writes payload's JSON object with `keyJSON: tagJSON` first (a
// payload-less variant: just the tag).
func Tagged(keyJSON string, tagJSON string, payload any) ([]byte, error) {
	var body []byte
	if payload != nil {
		var err error
		if body, err = json.Marshal(payload); err != nil {
			return nil, err
		}
	}
	out := make([]byte, 0, len(body)+len(keyJSON)+len(tagJSON)+4)
	out = append(out, '{')
	out = append(out, keyJSON...)
	out = append(out, ':')
	out = append(out, tagJSON...)
	rest := bytes.TrimSpace(body)
	if len(rest) > 2 {
		out = append(out, ',')
		out = append(out, bytes.TrimSpace(rest[1:len(rest)-1])...)
	}
	return append(out, '}'), nil
}

// MergeObjects joins two JSON objects' members into one object.
func MergeObjects(a, b []byte) []byte {
	a, b = bytes.TrimSpace(a), bytes.TrimSpace(b)
	if len(b) <= 2 || b[0] != '{' {
		return a
	}
	if len(a) <= 2 {
		return b
	}
	out := make([]byte, 0, len(a)+len(b))
	out = append(out, a[:len(a)-1]...)
	out = append(out, ',')
	return append(out, b[1:]...)
}

// EmptyUnion is the error of writing a union value with no variant set.
func EmptyUnion(name string) error {
	return fmt.Errorf("acpengine: a %s with no variant set", name)
}

// TagOf finds the string value of top-level property key in a JSON object
// without decoding the rest (found is false when it is absent or null).
func TagOf(data []byte, key string) (tag string, found bool, err error) {
	s := scanner{data: data}
	s.space()
	if !s.take('{') {
		return "", false, fmt.Errorf("acpengine: expected a JSON object, got %.20q", data)
	}
	s.space()
	if s.take('}') {
		return "", false, nil
	}
	for {
		s.space()
		name, ok := s.string()
		if !ok {
			return "", false, fmt.Errorf("acpengine: malformed JSON object")
		}
		s.space()
		if !s.take(':') {
			return "", false, fmt.Errorf("acpengine: malformed JSON object")
		}
		s.space()
		if name == key {
			if value, ok := s.string(); ok {
				return value, true, nil
			}
			if s.literal("null") {
				return "", false, nil
			}
			return "", false, fmt.Errorf("acpengine: %q is not a string", key)
		}
		if !s.skipValue() {
			return "", false, fmt.Errorf("acpengine: malformed JSON object")
		}
		s.space()
		if s.take('}') {
			return "", false, nil
		}
		if !s.take(',') {
			return "", false, fmt.Errorf("acpengine: malformed JSON object")
		}
	}
}

// The shape checks of unions told apart by shape.

func firstByte(data []byte) byte {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return 0
	}
	return data[0]
}

func IsNull(data []byte) bool   { return string(bytes.TrimSpace(data)) == "null" }
func IsBool(data []byte) bool   { c := firstByte(data); return c == 't' || c == 'f' }
func IsString(data []byte) bool { return firstByte(data) == '"' }
func IsArray(data []byte) bool  { return firstByte(data) == '[' }
func IsObject(data []byte) bool { return firstByte(data) == '{' }

func IsNumber(data []byte) bool {
	c := firstByte(data)
	return c == '-' || (c >= '0' && c <= '9')
}

func IsInteger(data []byte) bool {
	return IsNumber(data) && !bytes.ContainsAny(bytes.TrimSpace(data), ".eE")
}

// HasKeys: data is an object with every one of keys.
func HasKeys(data []byte, keys []string) bool {
	if !IsObject(data) {
		return false
	}
	var object map[string]json.RawMessage
	if json.Unmarshal(data, &object) != nil {
		return false
	}
	for _, key := range keys {
		if _, ok := object[key]; !ok {
			return false
		}
	}
	return true
}

// scanner reads just enough JSON to find a top-level property.
type scanner struct {
	data []byte
	at   int
}

func (s *scanner) space() {
	for s.at < len(s.data) && strings.IndexByte(" \t\r\n", s.data[s.at]) >= 0 {
		s.at++
	}
}

func (s *scanner) take(c byte) bool {
	if s.at < len(s.data) && s.data[s.at] == c {
		s.at++
		return true
	}
	return false
}

func (s *scanner) literal(word string) bool {
	if bytes.HasPrefix(s.data[s.at:], []byte(word)) {
		s.at += len(word)
		return true
	}
	return false
}

// string reads a JSON string (unescaped only when it has escapes).
func (s *scanner) string() (string, bool) {
	if !s.take('"') {
		return "", false
	}
	start, escaped := s.at, false
	for s.at < len(s.data) {
		switch s.data[s.at] {
		case '\\':
			escaped = true
			s.at += 2
			continue
		case '"':
			raw := s.data[start:s.at]
			s.at++
			if !escaped {
				return string(raw), true
			}
			var value string
			if json.Unmarshal(s.data[start-1:s.at], &value) != nil {
				return "", false
			}
			return value, true
		}
		s.at++
	}
	return "", false
}

// skipValue steps over one JSON value (strings and nesting respected).
func (s *scanner) skipValue() bool {
	if s.at >= len(s.data) {
		return false
	}
	switch s.data[s.at] {
	case '"':
		_, ok := s.string()
		return ok
	case '{', '[':
		depth := 0
		for s.at < len(s.data) {
			switch s.data[s.at] {
			case '"':
				if _, ok := s.string(); !ok {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.at++
					return true
				}
			}
			s.at++
		}
		return false
	default:
		for s.at < len(s.data) && strings.IndexByte(",}] \t\r\n", s.data[s.at]) < 0 {
			s.at++
		}
		return true
	}
}

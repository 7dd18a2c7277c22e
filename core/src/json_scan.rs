//! Finding the fields of a JSON-RPC line without serde_json's string scan.
//!
//! The reader classifies every inbound line; serde_json, reading the
//! envelope, walks a string a few bytes at a time to find its end (about
//! 12 ms for a 16 MiB file's content, on every binding's inbound path).
//! Here a string's end is found 32 bytes per step (`json_string`'s scan),
//! and the rest of the JSON grammar is checked as serde_json checks it.
//!
//! This is a fast path, not a second parser of record: it answers only for
//! a line it is sure serde_json would read the same way (an object, keys
//! without escapes, no repeated envelope key, not nested too deep), and
//! `None` for anything else, which `message::classify` then hands to
//! serde_json for the answer and the error it gives.

use std::ops::Range;

use crate::json_string::next_escape;

/// The raw text of each envelope field the line has (`null` included).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct EnvelopeFields<'a> {
    pub jsonrpc: Option<&'a str>,
    pub id: Option<&'a str>,
    pub method: Option<&'a str>,
    pub params: Option<&'a str>,
    pub result: Option<&'a str>,
    pub error: Option<&'a str>,
}

/// Nesting this deep goes to serde_json (whose limit is 128).
const MAX_DEPTH: usize = 100;

/// The envelope fields of `line`, when it is one JSON object that
/// serde_json would read exactly so; `None` otherwise.
pub(crate) fn envelope_fields(line: &[u8]) -> Option<EnvelopeFields<'_>> {
    let mut scan = Scan { bytes: line, at: 0 };
    let mut fields = EnvelopeFields::default();
    scan.whitespace();
    scan.object(1, &mut |key, value| {
        let slot = match key {
            b"jsonrpc" => &mut fields.jsonrpc,
            b"id" => &mut fields.id,
            b"method" => &mut fields.method,
            b"params" => &mut fields.params,
            b"result" => &mut fields.result,
            b"error" => &mut fields.error,
            // serde_json reads any key as text, its escapes resolved (`"i\u0064"`
            // is `id`): one with an escape, or not UTF-8, is left to it.
            _ => return (!key.contains(&b'\\') && std::str::from_utf8(key).is_ok()).then_some(()),
        };
        if slot.is_some() {
            return None; // serde_json: "duplicate field"
        }
        *slot = Some(std::str::from_utf8(&line[value]).ok()?);
        Some(())
    })?;
    scan.whitespace();
    (scan.at == line.len()).then_some(fields)
}

/// What an object hands on for each member: its key's bytes as written
/// (between the quotes, escapes unresolved) and where its value stands.
/// `None` stops the scan.
type Member<'m, 'a> = dyn FnMut(&'a [u8], Range<usize>) -> Option<()> + 'm;

struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    fn whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// After a member or an element: `,` (true: another follows) or the
    /// closing bracket's turn (false; the caller reads it).
    fn separator(&mut self) -> Option<bool> {
        match self.peek()? {
            b',' => {
                self.at += 1;
                self.whitespace();
                Some(true)
            }
            _ => Some(false),
        }
    }

    /// One value at `depth` (the envelope's members are at 1).
    fn value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.string(),
            b'{' => self.object(depth + 1, &mut |_, _| Some(())),
            b'[' => self.array(depth + 1),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn string(&mut self) -> Option<()> {
        self.expect(b'"')?;
        loop {
            let at = next_escape(self.bytes, self.at)?;
            match self.bytes[at] {
                b'"' => {
                    self.at = at + 1;
                    return Some(());
                }
                b'\\' => {
                    self.at = at + 1;
                    self.escape()?;
                }
                _ => return None, // a control character
            }
        }
    }

    /// What follows a backslash, as serde_json skips it: any `\uXXXX`
    /// (surrogates are the typed parse's business), or one of `"\/bfnrt`.
    fn escape(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.at += 1,
            b'u' => {
                let hex = self.bytes.get(self.at + 1..self.at + 5)?;
                if !hex.iter().all(u8::is_ascii_hexdigit) {
                    return None;
                }
                self.at += 5;
            }
            _ => return None,
        }
        Some(())
    }

    /// An object at `depth`, each member handed to `member`.
    fn object(&mut self, depth: usize, member: &mut Member<'_, 'a>) -> Option<()> {
        self.sequence(depth, b'{', b'}', |scan| {
            let key = scan.at + 1;
            scan.string()?;
            let key = &scan.bytes[key..scan.at - 1];
            scan.whitespace();
            scan.expect(b':')?;
            scan.whitespace();
            let value = scan.at;
            scan.value(depth)?;
            member(key, value..scan.at)
        })
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        self.sequence(depth, b'[', b']', |scan| scan.value(depth))
    }

    /// `open`, then items (each read by `item`) separated by commas, then
    /// `close`: an object's or an array's frame at `depth`.
    fn sequence(
        &mut self,
        depth: usize,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.expect(open)?;
        self.whitespace();
        if self.peek()? == close {
            self.at += 1;
            return Some(());
        }
        loop {
            item(self)?;
            self.whitespace();
            if !self.separator()? {
                return self.expect(close);
            }
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at + word.len();
        (self.bytes.get(self.at..end)? == word).then(|| self.at = end)
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.some_digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.some_digits()?;
        }
        Some(())
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let start = self.at;
        self.digits();
        (self.at > start).then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_field_as_written() {
        let line = br#" { "jsonrpc" : "2.0", "id":7,"method":"a/b", "params" : {"text":"x\"y\\z\u00e9","n":[1,-2.5e+3,true,null,{}]} , "other":[] } "#;
        let fields = envelope_fields(line).expect("read");
        assert_eq!(fields.jsonrpc, Some("\"2.0\""));
        assert_eq!(fields.id, Some("7"));
        assert_eq!(fields.method, Some("\"a/b\""));
        assert_eq!(
            fields.params,
            Some(r#"{"text":"x\"y\\z\u00e9","n":[1,-2.5e+3,true,null,{}]}"#)
        );
        assert_eq!((fields.result, fields.error), (None, None));
        assert_eq!(envelope_fields(b"{}"), Some(EnvelopeFields::default()));
        assert_eq!(envelope_fields(br#"{"id":null}"#).unwrap().id, Some("null"));
    }

    #[test]
    fn leaves_to_serde_json_what_it_is_not_sure_of() {
        for line in [
            &br#"{"id":1,"id":2}"#[..], // a repeated envelope key
            br#"{"i\u0064":1}"#,        // an escaped key
            br#"[{"id":1}]"#,           // not an object
            br#"{"id":1} x"#,           // trailing characters
            br#"{"id":1,}"#,            // a trailing comma
            br#"{"id":01}"#,            // a leading zero
            br#"{"id":1.}"#,            // no digit after the point
            br#"{"id":-}"#,             // no digit at all
            br#"{"id":1e}"#,            // no exponent digit
            br#"{"x":"a\qb"}"#,         // an unknown escape
            br#"{"x":"\u12G4"}"#,       // a bad hex digit
            b"{\"x\":\"a\tb\"}",        // a control character
            b"{\"\xff\":1}",            // a key that is not UTF-8
            b"{\"params\":\"\xff\"}",   // a field that is not UTF-8
            br#"{"id":tru}"#,           // a cut literal
            br#"{"x":[1 2]}"#,          // a missing comma
            br#"{"x":{"a" 1}}"#,        // a missing colon
            br#"{"x":"unterminated}"#,  // a string without its end
            b"",
        ] {
            assert_eq!(envelope_fields(line), None, "{}", String::from_utf8_lossy(line));
        }
        // serde_json skips an unknown member's value without reading it as
        // text, so bytes that are not UTF-8 there are read here too.
        assert_eq!(
            envelope_fields(b"{\"x\":\"\xff\"}"),
            Some(EnvelopeFields::default())
        );
        let deep = format!("{{\"x\":{}{}}}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(envelope_fields(deep.as_bytes()), None);
        let shallower = format!(
            "{{\"x\":{}{}}}",
            "[".repeat(MAX_DEPTH - 1),
            "]".repeat(MAX_DEPTH - 1)
        );
        assert!(envelope_fields(shallower.as_bytes()).is_some());
    }

    #[test]
    fn a_string_ends_wherever_its_quote_falls_in_a_step() {
        for len in [0, 1, 31, 32, 33, 63, 64, 65, 100] {
            let text = "s".repeat(len);
            let line = format!(r#"{{"params":["{text}","\n{text}\""]}}"#);
            let fields = envelope_fields(line.as_bytes()).expect("read");
            assert_eq!(fields.params, Some(&line[10..line.len() - 1]));
        }
    }
}

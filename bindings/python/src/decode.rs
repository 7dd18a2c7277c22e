//! JSON text to Python values, for the event batches `drain` hands out:
//! one pass that builds the dicts, lists, str, int, float, bool and None
//! that `json.loads` would, without first copying the text into a `str`.
//! Object keys (a protocol's few field names) are made once, interned, and
//! shared by every message, so building a dict neither allocates nor hashes
//! its keys.
//!
//! Why not jiter (pydantic's reader, which caches strings too): built into
//! this abi3 wheel (one wheel for every CPython 3.10+), it measured ~20%
//! slower than this reader; its speed needs CPython's non-limited API, so a
//! wheel per Python version (docs/performance.md).
//!
//! The text is the engine's own output: well-formed JSON whose messages
//! the engine parsed already. Anything this reader does not take (a lone
//! surrogate escape, which a Rust string cannot hold, or nesting beyond
//! `MAX_DEPTH`) is left to `json.loads`.

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};

/// Deeper nesting is left to `json.loads` (a recursive reader on the
/// host's thread must bound its stack).
const MAX_DEPTH: usize = 200;
/// Keys longer than this are made per message, not kept.
const MAX_KEY_LEN: usize = 64;
/// Slots of the key cache (a power of two).
const KEY_SLOTS: usize = 1024;

/// The fast reader stopped: `json.loads` reads the text instead (and
/// raises what there is to raise, such as an int too long to convert).
struct Unread;

impl From<PyErr> for Unread {
    fn from(_: PyErr) -> Self {
        Unread
    }
}

/// Interned keys, shared by every connection (they are the protocol's):
/// a direct-mapped cache, so a peer inventing keys costs misses, never
/// memory or a long probe.
type Keys = Vec<Option<(Box<[u8]>, Py<PyString>)>>;

static KEYS: Mutex<Keys> = Mutex::new(Vec::new());

/// The Python value of the JSON `text`, as `json.loads(text)` gives it
/// (and raises: what the fast reader leaves, `json.loads` reads).
pub(crate) fn loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    match read(py, text) {
        Ok(value) => Ok(value),
        Err(_) => {
            let loads = py.import("json")?.getattr("loads")?;
            loads.call1((PyString::new(py, text),))
        }
    }
}

fn read<'py>(py: Python<'py>, text: &str) -> Result<Bound<'py, PyAny>, Unread> {
    // Never wait for the cache: building objects can run a collection, and
    // a finalizer (or a thread the interpreter switches to meanwhile) may
    // read JSON too. That read goes without the cache.
    let mut guard = match KEYS.try_lock() {
        Ok(guard) => Some(guard),
        Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    };
    if let Some(keys) = guard.as_deref_mut() {
        if keys.is_empty() {
            keys.resize_with(KEY_SLOTS, || None);
        }
    }
    let mut reader = Reader {
        py,
        text: text.as_bytes(),
        at: 0,
        keys: guard.as_deref_mut(),
        scratch: String::new(),
        items: Vec::new(),
    };
    let value = reader.value(0)?;
    reader.skip_space();
    if reader.at != reader.text.len() {
        return Err(Unread);
    }
    Ok(value)
}

/// A string's contents: where they are.
enum Scanned<'t> {
    /// Without escapes: the text between the quotes.
    Plain(&'t str),
    /// Unescaped into `Reader::scratch`.
    Escaped,
}

struct Reader<'t, 'py> {
    py: Python<'py>,
    text: &'t [u8],
    at: usize,
    /// None while another read holds the cache.
    keys: Option<&'t mut Keys>,
    /// Where escaped strings are unescaped.
    scratch: String,
    /// The items of the arrays being read.
    items: Vec<Bound<'py, PyAny>>,
}

impl<'t, 'py> Reader<'t, 'py> {
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.text.get(self.at) {
            self.at += 1;
        }
    }

    fn next_byte(&mut self) -> Result<u8, Unread> {
        self.skip_space();
        let byte = *self.text.get(self.at).ok_or(Unread)?;
        self.at += 1;
        Ok(byte)
    }

    fn expect(&mut self, wanted: u8) -> Result<(), Unread> {
        if self.next_byte()? == wanted {
            Ok(())
        } else {
            Err(Unread)
        }
    }

    fn literal(&mut self, rest: &[u8]) -> Result<(), Unread> {
        if self.text[self.at..].starts_with(rest) {
            self.at += rest.len();
            Ok(())
        } else {
            Err(Unread)
        }
    }

    fn value(&mut self, depth: usize) -> Result<Bound<'py, PyAny>, Unread> {
        if depth > MAX_DEPTH {
            return Err(Unread);
        }
        let py = self.py;
        match self.next_byte()? {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => {
                let text = match self.string()? {
                    Scanned::Plain(text) => text,
                    Scanned::Escaped => &self.scratch,
                };
                Ok(PyString::new(py, text).into_any())
            }
            b't' => {
                self.literal(b"rue")?;
                Ok(PyBool::new(py, true).to_owned().into_any())
            }
            b'f' => {
                self.literal(b"alse")?;
                Ok(PyBool::new(py, false).to_owned().into_any())
            }
            b'n' => {
                self.literal(b"ull")?;
                Ok(py.None().into_bound(py))
            }
            b'-' | b'0'..=b'9' => {
                self.at -= 1;
                self.number()
            }
            _ => Err(Unread),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Bound<'py, PyAny>, Unread> {
        let dict = PyDict::new(self.py);
        self.skip_space();
        if self.text.get(self.at) == Some(&b'}') {
            self.at += 1;
            return Ok(dict.into_any());
        }
        loop {
            self.expect(b'"')?;
            let key = self.key()?;
            self.expect(b':')?;
            let value = self.value(depth + 1)?;
            dict.set_item(key, value)?;
            match self.next_byte()? {
                b',' => continue,
                b'}' => return Ok(dict.into_any()),
                _ => return Err(Unread),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Bound<'py, PyAny>, Unread> {
        // Items wait on one stack shared by every array (no Vec per array).
        let base = self.items.len();
        self.skip_space();
        if self.text.get(self.at) == Some(&b']') {
            self.at += 1;
        } else {
            loop {
                let item = self.value(depth + 1)?;
                self.items.push(item);
                match self.next_byte()? {
                    b',' => continue,
                    b']' => break,
                    _ => return Err(Unread),
                }
            }
        }
        let list = PyList::new(self.py, self.items.drain(base..))?;
        Ok(list.into_any())
    }

    /// An object key: from the cache when it has no escapes and is short.
    fn key(&mut self) -> Result<Bound<'py, PyString>, Unread> {
        let py = self.py;
        let text = match self.string()? {
            Scanned::Plain(text) if text.len() <= MAX_KEY_LEN => text,
            Scanned::Plain(text) => return Ok(PyString::new(py, text)),
            Scanned::Escaped => return Ok(PyString::new(py, &self.scratch)),
        };
        let Some(keys) = self.keys.as_deref_mut() else {
            return Ok(PyString::intern(py, text));
        };
        let slot = &mut keys[slot_of(text.as_bytes())];
        if let Some((cached, key)) = slot {
            if **cached == *text.as_bytes() {
                return Ok(key.bind(py).clone());
            }
        }
        let key = PyString::intern(py, text);
        *slot = Some((text.as_bytes().into(), key.clone().unbind()));
        Ok(key)
    }

    /// A string (its opening quote is read): a slice of the text, or, when
    /// it has escapes, resolved into `scratch`.
    fn string(&mut self) -> Result<Scanned<'t>, Unread> {
        let text: &'t [u8] = self.text;
        let start = self.at;
        let end = start + string_stop(&text[start..]).ok_or(Unread)?;
        if text[end] == b'"' {
            self.at = end + 1;
            // SAFETY: a slice of a `str` between ASCII delimiters.
            return Ok(Scanned::Plain(unsafe {
                std::str::from_utf8_unchecked(&text[start..end])
            }));
        }
        self.scratch.clear();
        let mut at = start;
        loop {
            let run = string_stop(&text[at..]).ok_or(Unread)?;
            // SAFETY: as above.
            self.scratch
                .push_str(unsafe { std::str::from_utf8_unchecked(&text[at..at + run]) });
            at += run;
            if text[at] == b'"' {
                self.at = at + 1;
                return Ok(Scanned::Escaped);
            }
            if text[at] != b'\\' {
                return Err(Unread); // a raw control character
            }
            let escape = *text.get(at + 1).ok_or(Unread)?;
            at += 2;
            let unescaped = match escape {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => {
                    let unit = hex4(text, at)?;
                    at += 4;
                    match unit {
                        0xD800..=0xDBFF => {
                            // A pair, or a lone surrogate (json.loads keeps
                            // those; a Rust string cannot).
                            if text.get(at..at + 2) != Some(b"\\u") {
                                return Err(Unread);
                            }
                            let low = hex4(text, at + 2)?;
                            if !(0xDC00..=0xDFFF).contains(&low) {
                                return Err(Unread);
                            }
                            at += 6;
                            let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                            char::from_u32(code).ok_or(Unread)?
                        }
                        _ => char::from_u32(unit).ok_or(Unread)?,
                    }
                }
                _ => return Err(Unread),
            };
            self.scratch.push(unescaped);
        }
    }

    fn number(&mut self) -> Result<Bound<'py, PyAny>, Unread> {
        let (digits, integral) = number_text(&self.text[self.at..]).ok_or(Unread)?;
        self.at += digits.len();
        let py = self.py;
        if integral {
            if let Ok(number) = digits.parse::<i64>() {
                let Ok(int) = number.into_pyobject(py);
                return Ok(int.into_any());
            }
            // Beyond i64: Python's int() takes JSON's integer form.
            return Ok(py.get_type::<PyInt>().call1((digits,))?);
        }
        // Rust's parse rounds correctly, like Python's float(); 1e400 is inf
        // in both.
        let number: f64 = digits.parse().map_err(|_| Unread)?;
        Ok(PyFloat::new(py, number).into_any())
    }
}

/// Where a string's text ends, its next escape starts, or a control
/// character (which JSON does not allow raw) stands. Most strings are
/// short: a plain loop first, memchr for the long ones.
fn string_stop(text: &[u8]) -> Option<usize> {
    const SHORT: usize = 32;
    let stop = |b: u8| b == b'"' || b == b'\\' || b < 0x20;
    let head = &text[..text.len().min(SHORT)];
    if let Some(at) = head.iter().position(|&b| stop(b)) {
        return Some(at);
    }
    if text.len() <= SHORT {
        return None;
    }
    let end = SHORT + memchr::memchr2(b'"', b'\\', &text[SHORT..])?;
    // A control character before it? (A pass without branches, which the
    // compiler vectorizes.)
    let run = &text[SHORT..end];
    if run.iter().fold(false, |seen, &b| seen | (b < 0x20)) {
        return run.iter().position(|&b| b < 0x20).map(|at| at + SHORT);
    }
    Some(end)
}

/// The JSON number at the start of `text` (`-? (0 | [1-9][0-9]*) (.[0-9]+)?
/// ([eE][+-]?[0-9]+)?`) and whether it is an integer.
fn number_text(text: &[u8]) -> Option<(&str, bool)> {
    let digits_from = |at: usize| text[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    let mut at = usize::from(text.first() == Some(&b'-'));
    match text.get(at) {
        Some(b'0') => at += 1,
        Some(b'1'..=b'9') => at += digits_from(at),
        _ => return None,
    }
    let mut integral = true;
    if text.get(at) == Some(&b'.') {
        let fraction = digits_from(at + 1);
        if fraction == 0 {
            return None;
        }
        at += 1 + fraction;
        integral = false;
    }
    if let Some(b'e' | b'E') = text.get(at) {
        at += 1;
        if let Some(b'+' | b'-') = text.get(at) {
            at += 1;
        }
        let exponent = digits_from(at);
        if exponent == 0 {
            return None;
        }
        at += exponent;
        integral = false;
    }
    // SAFETY: ASCII digits, signs, points and exponent marks.
    Some((unsafe { std::str::from_utf8_unchecked(&text[..at]) }, integral))
}

fn hex4(text: &[u8], at: usize) -> Result<u32, Unread> {
    let digits = text.get(at..at + 4).ok_or(Unread)?;
    let mut value = 0;
    for &digit in digits {
        let nibble = (digit as char).to_digit(16).ok_or(Unread)?;
        value = value * 16 + nibble;
    }
    Ok(value)
}

/// The cache slot of a key: the Fx hash (rustc's) of its bytes.
fn slot_of(key: &[u8]) -> usize {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let mut hash = key.len() as u64;
    for chunk in key.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        hash = (hash.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(SEED);
    }
    (hash >> 32) as usize & (KEY_SLOTS - 1)
}

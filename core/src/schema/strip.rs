//! Params projected onto their schema type: unknown properties removed, as the
//! official TypeScript SDK's parse (zod) hands them to handlers. A host asks for it
//! per connection (`HostOptions::strip_unknown_fields`); the check then notes any
//! property its type does not describe, and only then are the params parsed and
//! written again without those (the common message, with none, costs a flag).

use std::cell::{Cell, RefCell};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

thread_local! {
    /// This thread's check is to produce stripped params.
    static WANTED: Cell<bool> = const { Cell::new(false) };
    /// The check (or parse) met a property its type does not describe.
    static UNKNOWN_SEEN: Cell<bool> = const { Cell::new(false) };
    /// Serializing without the properties types do not describe.
    static WITHOUT_EXTRA: Cell<bool> = const { Cell::new(false) };
    /// The stripped params, when they differ from the input.
    static STRIPPED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A reader met a property its type does not describe.
pub(crate) fn note_unknown() {
    UNKNOWN_SEEN.with(|seen| seen.set(true));
}

/// `skip_serializing_if` of every type's unknown properties: none to write, or
/// none wanted.
pub(crate) fn skip_extra(extra: &Map<String, Value>) -> bool {
    extra.is_empty() || WITHOUT_EXTRA.with(Cell::get)
}

/// Runs `check` asking it for stripped params: its result, and the params
/// without unknown properties when there were any.
pub(crate) fn stripping<R>(check: impl FnOnce() -> R) -> (R, Option<String>) {
    WANTED.with(|wanted| wanted.set(true));
    UNKNOWN_SEEN.with(|seen| seen.set(false));
    let result = check();
    WANTED.with(|wanted| wanted.set(false));
    (result, STRIPPED.with(|stripped| stripped.borrow_mut().take()))
}

/// After `text` passed the check as a `T`: keep its stripped form when wanted
/// and it had unknown properties.
pub(crate) fn after_check<T: DeserializeOwned + Serialize>(text: &str) {
    if !WANTED.with(Cell::get) || !UNKNOWN_SEEN.with(Cell::get) {
        return;
    }
    let Ok(value) = serde_json::from_str::<T>(text) else {
        return;
    };
    WITHOUT_EXTRA.with(|without| without.set(true));
    let written = serde_json::to_string(&value);
    WITHOUT_EXTRA.with(|without| without.set(false));
    if let Ok(written) = written {
        STRIPPED.with(|stripped| *stripped.borrow_mut() = Some(written));
    }
}

//! What every HTTP endpoint of the engine reads from a request the same way:
//! its media type, and its body within a size limit (a declared length over
//! the limit is refused before anything is read).

use http_body_util::{BodyExt, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderMap};

/// Why a body was not read.
pub(crate) enum BodyError {
    /// Longer than the limit (declared, or as read).
    TooLarge,
    /// The client went away, or sent something that is no body.
    Unreadable,
}

/// The body, up to `max` bytes.
pub(crate) async fn read_limited(
    headers: &HeaderMap,
    body: Incoming,
    max: usize,
) -> Result<Bytes, BodyError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok());
    if declared.is_some_and(|length| length > max as u64) {
        return Err(BodyError::TooLarge);
    }
    match Limited::new(body, max).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => Err(BodyError::TooLarge),
        Err(_) => Err(BodyError::Unreadable),
    }
}

/// `Content-Type` without its parameters, in lower case.
pub(crate) fn media_type(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .map(|value| value.trim().to_ascii_lowercase())
}

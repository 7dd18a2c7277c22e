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

/// What a refused request may still have sent that the server reads (and
/// drops) before answering: a connection closed over unread bytes is reset,
/// and the reset can destroy the answer before the client reads it.
pub(crate) const DISCARDED_BODY_LIMIT: usize = 64 * 1024;

/// How long a refused request's body is waited for.
const DISCARD_PATIENCE: std::time::Duration = std::time::Duration::from_secs(1);

/// Read and drop `body`, up to [`DISCARDED_BODY_LIMIT`] and for a second at
/// most (beyond either the connection is closed as it is: a refused client
/// that sends more, or slowly, is not waited for).
pub(crate) async fn discard(body: Incoming) {
    let reading = Limited::new(body, DISCARDED_BODY_LIMIT).collect();
    let _ = tokio::time::timeout(DISCARD_PATIENCE, reading).await;
}

/// `Content-Type` without its parameters, in lower case.
pub(crate) fn media_type(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .map(|value| value.trim().to_ascii_lowercase())
}

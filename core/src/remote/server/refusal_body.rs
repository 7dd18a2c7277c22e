//! How a server's refusals read: the official TypeScript server answers
//! them in plain text, the official Python server as `{"error": reason}`
//! (and a JSON-RPC batch with 501). One server serves both packages, so the
//! package that mirrors each says which ([`ServeOptions::refusal_body`]).
//!
//! [`ServeOptions::refusal_body`]: super::ServeOptions::refusal_body

use http_body_util::{BodyExt, Full};
use hyper::header::{self, HeaderValue};
use hyper::Response;

use super::Body;

/// The body of a response that refuses a request (400 and up, other than a
/// JSON-RPC error answer, which is JSON either way).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RefusalBody {
    /// The reason, as plain text (the official TypeScript server's).
    #[default]
    Text,
    /// `{"error": "<reason>"}` (the official Python server's); a JSON-RPC
    /// batch is answered 501 instead of 400.
    Json,
}

/// `response`, its plain-text refusal rewritten as `style` says.
pub(super) async fn styled(response: Response<Body>, style: RefusalBody) -> Response<Body> {
    let plain = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|kind| kind.as_bytes().starts_with(b"text/plain"));
    if style == RefusalBody::Text || response.status().as_u16() < 400 || !plain {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // A refusal's body is one in-memory piece: collecting it does not wait.
    let reason = match body.collect().await {
        Ok(collected) => String::from_utf8_lossy(&collected.to_bytes()).into_owned(),
        Err(never) => match never {},
    };
    let json = serde_json::json!({ "error": reason }).to_string();
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(crate::remote::http_client::JSON),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Full::new(json.into()).boxed_unsync())
}

//! Where each server lives on the listener and how it proves a request is
//! for it: one route per server (`/mcp-<base64url of its id>`, canonical so
//! a server has exactly one) and one bearer token per server, an HMAC of
//! its id under the listener's secret (the official bridge's scheme), so
//! tokens need no table and one server's token opens no other.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};

/// Separates this use of the secret from any other.
const HMAC_CONTEXT: &[u8] = b"mcp-over-acp-http-adapter/server/v1\0";
/// A route longer than this is no server's.
const MAX_ROUTE: usize = 4096;

/// The listener's secret.
pub(super) struct Secret(hmac::Key);

impl Secret {
    pub(super) fn random() -> Self {
        let mut bytes = [0u8; 32];
        SystemRandom::new()
            .fill(&mut bytes)
            .expect("the system's random source works");
        Self(hmac::Key::new(hmac::HMAC_SHA256, &bytes))
    }

    fn tag(&self, server_id: &str) -> hmac::Tag {
        let mut context = hmac::Context::with_key(&self.0);
        context.update(HMAC_CONTEXT);
        context.update(server_id.as_bytes());
        context.sign()
    }

    /// The server's bearer token.
    pub(super) fn token(&self, server_id: &str) -> String {
        URL_SAFE_NO_PAD.encode(self.tag(server_id).as_ref())
    }

    /// Whether `authorization` is `Bearer <the server's token>` (compared in
    /// constant time; a noncanonical encoding never matches).
    pub(super) fn authorizes(&self, authorization: Option<&str>, server_id: &str) -> bool {
        let Some(header) = authorization else {
            return false;
        };
        let mut parts = header.split(' ');
        let (Some(scheme), Some(token), None) = (parts.next(), parts.next(), parts.next()) else {
            return false;
        };
        if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
            return false;
        }
        let Ok(supplied) = URL_SAFE_NO_PAD.decode(token) else {
            return false;
        };
        if URL_SAFE_NO_PAD.encode(&supplied) != token {
            return false;
        }
        let mut message = HMAC_CONTEXT.to_vec();
        message.extend_from_slice(server_id.as_bytes());
        hmac::verify(&self.0, &message, &supplied).is_ok()
    }
}

/// The path segment of a server (an empty id too has a real segment).
pub(super) fn server_route(server_id: &str) -> String {
    format!("mcp-{}", URL_SAFE_NO_PAD.encode(server_id.as_bytes()))
}

/// The server a path segment names, when it is a canonical route.
pub(super) fn parse_server_route(route: &str) -> Option<String> {
    if route.len() > MAX_ROUTE {
        return None;
    }
    let encoded = route.strip_prefix("mcp-")?;
    let bytes = URL_SAFE_NO_PAD.decode(encoded).ok()?;
    let server_id = String::from_utf8(bytes).ok()?;
    (server_route(&server_id) == route).then_some(server_id)
}

/// Whether a mirrored `Mcp-Name` header names `body`: the value itself, or
/// `=?base64?…?=` of it in canonical standard Base64.
pub(super) fn matches_mirror(header: Option<&str>, body: &str) -> bool {
    let Some(header) = header else {
        return false;
    };
    let Some(encoded) = header
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    else {
        return header == body;
    };
    match STANDARD.decode(encoded) {
        Ok(decoded) => STANDARD.encode(&decoded) == encoded && decoded == body.as_bytes(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_canonical_and_round_trip() {
        for id in ["", "files", "ü/ß?x", "a b"] {
            let route = server_route(id);
            assert_eq!(parse_server_route(&route).as_deref(), Some(id));
        }
        assert_eq!(server_route(""), "mcp-");
        assert_eq!(parse_server_route("files"), None);
        // "Zg" is "f"; "Zh" decodes to the same byte but is not canonical.
        assert_eq!(parse_server_route("mcp-Zg").as_deref(), Some("f"));
        assert_eq!(parse_server_route("mcp-Zh"), None);
        assert_eq!(
            parse_server_route(&format!("mcp-{}", "A".repeat(MAX_ROUTE))),
            None
        );
    }

    #[test]
    fn a_token_opens_its_own_server_only() {
        let secret = Secret::random();
        let token = secret.token("a");
        assert!(secret.authorizes(Some(&format!("Bearer {token}")), "a"));
        assert!(secret.authorizes(Some(&format!("bearer {token}")), "a"));
        assert!(!secret.authorizes(Some(&format!("Bearer {token}")), "b"));
        assert!(!secret.authorizes(Some(&format!("Bearer {token}=")), "a"));
        assert!(!secret.authorizes(Some(&format!("Bearer  {token}")), "a"));
        assert!(!secret.authorizes(Some(&format!("Basic {token}")), "a"));
        assert!(!secret.authorizes(None, "a"));
        assert!(!Secret::random().authorizes(Some(&format!("Bearer {token}")), "a"));
    }

    #[test]
    fn mirrors_match_plain_or_canonical_base64() {
        assert!(matches_mirror(Some("echo"), "echo"));
        assert!(!matches_mirror(Some("echo"), "other"));
        assert!(!matches_mirror(None, "echo"));
        assert!(matches_mirror(Some("=?base64?ZWNobw==?="), "echo"));
        assert!(!matches_mirror(Some("=?base64?ZWNobw?="), "echo"));
        assert!(!matches_mirror(Some("=?base64?!!?="), "echo"));
    }
}

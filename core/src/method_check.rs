//! What a side accepts: the check every inbound message gets before it
//! reaches a handler (and every outbound one a binding sends), for the
//! typed sides and every binding alike.
//!
//! - A method of the receiving side's table (generated from the schema, per
//!   protocol: stable or unstable): its params are checked against the
//!   method's schema type; a mismatch is -32602 that names the field.
//! - An extension method (`_`-prefixed), or one of the connection's
//!   [`UncheckedMethods`]: accepted as is.
//! - Anything else: -32601 (method not found). For a notification the
//!   caller drops it instead (notifications get no answer).

use std::sync::Arc;

use crate::error::RequestError;
use crate::schema::{v1, v1_unstable, v2, v2_unstable};
use crate::version::V2;

/// Methods outside the schema that a connection sends and receives as they
/// are, unchecked: for peers that still use methods the schema dropped (the
/// legacy `session/set_model`, see [`crate::legacy`]) or methods of a newer
/// schema. A listed method wins over the schema's table: its params are not
/// checked either way. On a typed connection they reach the handler's
/// `ext_method` / `ext_notification`, and are sent with the connection's
/// generic request and notification calls. The name [`UncheckedMethods::ALL`]
/// (`*`) lets every method outside the schema through, as the official
/// TypeScript SDK 2.x does for custom methods; the schema's own methods are
/// still checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UncheckedMethods(Arc<[String]>);

impl UncheckedMethods {
    /// Listed, every method outside the schema is unchecked.
    pub const ALL: &'static str = "*";

    /// These method names, exactly as on the wire.
    pub fn new<I, S>(methods: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self(methods.into_iter().map(Into::into).collect())
    }

    /// Whether `method` is one of them.
    pub fn contains(&self, method: &str) -> bool {
        self.0.iter().any(|listed| listed == method)
    }

    /// Whether every method outside the schema is unchecked ([`Self::ALL`] is listed).
    pub fn all_outside_schema(&self) -> bool {
        self.contains(Self::ALL)
    }

    /// The names, as given.
    pub fn names(&self) -> &[String] {
        &self.0
    }
}

/// Which protocol a connection speaks: the stable schema, or the stable and
/// unstable one (`schema/v1/schema.unstable.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// The stable protocol: unstable methods are unknown (-32601).
    #[default]
    Stable,
    /// The stable and unstable protocol.
    Unstable,
}

impl Protocol {
    /// The protocol the Rust typed API of this build speaks (the `unstable` feature).
    pub const COMPILED: Protocol = if cfg!(feature = "unstable") {
        Protocol::Unstable
    } else {
        Protocol::Stable
    };
}

/// Which side receives a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Receiver {
    /// The agent (methods of the schema's agent side).
    Agent,
    /// The client (methods of the schema's client side).
    Client,
}

/// Check an inbound message for `receiver` in ACP `version` (1, or 2 for the
/// draft): `Ok(true)` when the params were checked (so they are one valid
/// JSON value), `Ok(false)` for an extension method (nothing read), an error
/// otherwise (see the module docs).
pub(crate) fn check(
    version: u16,
    protocol: Protocol,
    unchecked: &UncheckedMethods,
    receiver: Receiver,
    notification: bool,
    method: &str,
    params: Option<&str>,
) -> Result<bool, RequestError> {
    if unchecked.contains(method) {
        return Ok(false);
    }
    let found = if version == V2 {
        check_v2(protocol, receiver, notification, method, params)
    } else {
        check_v1(protocol, receiver, notification, method, params)
    };
    match found {
        Some(checked) => checked.map(|()| true),
        None if method.starts_with('_') || unchecked.all_outside_schema() => Ok(false),
        None => Err(RequestError::method_not_found(method)),
    }
}

type Found = Option<Result<(), RequestError>>;

fn check_v1(
    protocol: Protocol,
    receiver: Receiver,
    notification: bool,
    method: &str,
    params: Option<&str>,
) -> Found {
    match (protocol, receiver, notification) {
        (Protocol::Stable, Receiver::Agent, false) => v1::check_agent_request(method, params),
        (Protocol::Stable, Receiver::Agent, true) => v1::check_agent_notification(method, params),
        (Protocol::Stable, Receiver::Client, false) => v1::check_client_request(method, params),
        (Protocol::Stable, Receiver::Client, true) => v1::check_client_notification(method, params),
        (Protocol::Unstable, Receiver::Agent, false) => v1_unstable::check_agent_request(method, params),
        (Protocol::Unstable, Receiver::Agent, true) => v1_unstable::check_agent_notification(method, params),
        (Protocol::Unstable, Receiver::Client, false) => v1_unstable::check_client_request(method, params),
        (Protocol::Unstable, Receiver::Client, true) => {
            v1_unstable::check_client_notification(method, params)
        }
    }
}

fn check_v2(
    protocol: Protocol,
    receiver: Receiver,
    notification: bool,
    method: &str,
    params: Option<&str>,
) -> Found {
    match (protocol, receiver, notification) {
        (Protocol::Stable, Receiver::Agent, false) => v2::check_agent_request(method, params),
        (Protocol::Stable, Receiver::Agent, true) => v2::check_agent_notification(method, params),
        (Protocol::Stable, Receiver::Client, false) => v2::check_client_request(method, params),
        (Protocol::Stable, Receiver::Client, true) => v2::check_client_notification(method, params),
        (Protocol::Unstable, Receiver::Agent, false) => v2_unstable::check_agent_request(method, params),
        (Protocol::Unstable, Receiver::Agent, true) => v2_unstable::check_agent_notification(method, params),
        (Protocol::Unstable, Receiver::Client, false) => v2_unstable::check_client_request(method, params),
        (Protocol::Unstable, Receiver::Client, true) => {
            v2_unstable::check_client_notification(method, params)
        }
    }
}

/// Whether the schema check and the full parse agree on `text` as the params
/// of `method`, in every version, protocol, side and kind that receives it (None: no
/// side receives it). Disagreeing is a bug: the check must accept exactly
/// what the typed handlers accept.
pub(crate) fn check_agrees_with_parse(method: &str, text: &str) -> Option<bool> {
    let mut agree = v1::check_agrees_with_parse(method, text);
    agree.extend(v1_unstable::check_agrees_with_parse(method, text));
    agree.extend(v2::check_agrees_with_parse(method, text));
    agree.extend(v2_unstable::check_agrees_with_parse(method, text));
    agree.into_iter().reduce(|a, b| a && b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::codes;

    #[test]
    fn all_lets_every_method_outside_the_schema_through_and_still_checks_the_schema() {
        let all = UncheckedMethods::new([UncheckedMethods::ALL]);
        let none = UncheckedMethods::default();
        let check_request = |unchecked: &UncheckedMethods, method: &str, params: &str| {
            check(
                crate::version::V1,
                Protocol::Stable,
                unchecked,
                Receiver::Agent,
                false,
                method,
                Some(params),
            )
        };
        assert_eq!(check_request(&all, "vendor/echo", "{}"), Ok(false));
        assert_eq!(
            check_request(&none, "vendor/echo", "{}").unwrap_err().code,
            codes::METHOD_NOT_FOUND
        );
        // A schema method is checked either way.
        assert_eq!(
            check_request(&all, v1::method::SESSION_NEW, "{}")
                .unwrap_err()
                .code,
            codes::INVALID_PARAMS
        );
        assert_eq!(
            check_request(&all, v1::method::SESSION_NEW, r#"{"cwd":"/","mcpServers":[]}"#),
            Ok(true)
        );
    }
}

//! What the typed ACP layer shares between the agent and the client side:
//! parsing params into schema types (a mismatch is -32602 that names the
//! field), serializing results, and the macro that turns a side's method
//! table into its handler trait and its dispatch functions.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::error::RequestError;
use crate::handler::IncomingRequest;
use crate::message::{to_raw, RawJson};
use crate::version::Negotiation;

/// The version a request on its way to a typed agent's handler is checked
/// as, once its `initialize` settled it (see [`crate::version`]);
/// `initialize` params rewritten for the version selected replace the
/// request's.
pub(crate) fn admit_request(
    negotiation: &Negotiation,
    request: &mut IncomingRequest,
) -> Result<u16, RequestError> {
    let (version, rewritten) =
        negotiation.agent_receives(&request.method, request.params.as_deref().map(RawValue::get))?;
    if let Some(params) = rewritten {
        request.params = Some(RawValue::from_string(params).map_err(RequestError::internal)?);
    }
    Ok(version)
}

/// Parse a method's params into its schema type. Absent params read as `{}`.
/// On a mismatch the error's `data` says which field is wrong and why:
/// `{"method", "path", "message"}`.
pub(crate) fn parse<T: DeserializeOwned>(method: &str, params: Option<&RawValue>) -> Result<T, RequestError> {
    parse_text(method, params.map_or("{}", |raw| raw.get()))
}

/// `parse` from params text (which may not be valid JSON: that is -32602 too).
fn parse_text<T: DeserializeOwned>(method: &str, text: &str) -> Result<T, RequestError> {
    // The fast path first; the path-tracking parse only runs to explain an
    // error.
    serde_json::from_str(text).map_err(|error| {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let path = match serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
            Err(tracked) => tracked.path().to_string(),
            Ok(_) => ".".to_owned(),
        };
        RequestError::invalid_params().with_data(json!({
            "method": method,
            "path": path,
            "message": error.to_string(),
        }))
    })
}

/// Check a method's params against its schema type without building the value (see
/// `schema::check`). Errors are the parse's, word for word: the parse runs to explain one.
/// Checking reads all of `text`: success also means it is one valid JSON value.
pub(crate) fn check<T: DeserializeOwned + Serialize + crate::schema::Check>(
    method: &str,
    params: Option<&str>,
) -> Result<(), RequestError> {
    let text = params.unwrap_or("{}");
    match crate::schema::check_str::<T>(text) {
        Ok(()) => {
            crate::schema::strip::after_check::<T>(text);
            Ok(())
        }
        Err(_) => parse_text::<T>(method, text).map(drop),
    }
}

/// Whether checking and parsing `text` as a `T` agree (the fuzzer's and the tests'
/// comparison: `schema::check`). A `T` it parses is also written by the engine's JSON
/// writer and by serde_json, and the two must write the same bytes (a panic otherwise:
/// that is a bug of `json_writer`, not of the check).
pub(crate) fn check_agrees<T: DeserializeOwned + Serialize + crate::schema::Check>(text: &str) -> bool {
    let parsed = serde_json::from_str::<T>(text);
    if let Ok(value) = &parsed {
        assert!(
            crate::json_writer::writes_as_serde_json(value),
            "json_writer and serde_json write {} differently",
            std::any::type_name::<T>()
        );
    }
    crate::schema::check_str::<T>(text).is_ok() == parsed.is_ok()
}

/// Params of an extension method or notification, as plain JSON.
pub(crate) fn parse_value(params: Option<&RawValue>) -> Result<Value, RequestError> {
    match params {
        Some(raw) => serde_json::from_str(raw.get()).map_err(RequestError::from),
        None => Ok(Value::Object(Default::default())),
    }
}

/// Serialize a handler's result for the wire.
pub(crate) fn respond<T: Serialize>(result: Result<T, RequestError>) -> Result<RawJson, RequestError> {
    to_raw(&result?).map_err(RequestError::internal)
}

/// Declares a side's handler trait (what the user implements) and the
/// functions that check and route inbound requests and notifications to it,
/// from one table of `method(Params) -> Result = "wire/name";` entries (the
/// generated `methods.rs`), each with its docs and, for unstable methods,
/// a `cfg`:
/// - `required_*` entries have no default: the user must implement them;
/// - `optional_*` requests answer -32601 until implemented, optional
///   notifications are ignored;
/// - any other method (`_`-prefixed extensions, methods the schema does not
///   have) goes to `ext_method` / `ext_notification`, whose defaults answer
///   -32601 and ignore.
macro_rules! handler_trait {
    (
        $(#[$trait_doc:meta])*
        pub trait $Trait:ident;
        required_requests { $( $(#[doc = $rr_doc:literal])* $rr:ident($rr_p:ty) -> $rr_r:ty = $rr_w:literal; )* }
        optional_requests {
            $( $(#[doc = $or_doc:literal])* $(#[cfg($or_cfg:meta)])? $or:ident($or_p:ty) -> $or_r:ty = $or_w:literal; )*
        }
        required_notifications { $( $(#[doc = $rn_doc:literal])* $rn:ident($rn_p:ty) = $rn_w:literal; )* }
        optional_notifications {
            $( $(#[doc = $on_doc:literal])* $(#[cfg($on_cfg:meta)])? $on:ident($on_p:ty) = $on_w:literal; )*
        }
    ) => {
        $(#[$trait_doc])*
        pub trait $Trait: Send + Sync + 'static {
            $(
                $(#[doc = $rr_doc])*
                #[doc = ""]
                #[doc = concat!("Answers `", $rr_w, "`.")]
                fn $rr(&self, params: $rr_p)
                    -> impl std::future::Future<Output = Result<$rr_r, RequestError>> + Send;
            )*
            $(
                $(#[doc = $or_doc])*
                #[doc = ""]
                #[doc = concat!("Answers `", $or_w, "`; until implemented, -32601 (method not found).")]
                $(#[cfg($or_cfg)])?
                fn $or(&self, params: $or_p)
                    -> impl std::future::Future<Output = Result<$or_r, RequestError>> + Send {
                    let _ = params;
                    async { Err(RequestError::method_not_found($or_w)) }
                }
            )*
            $(
                $(#[doc = $rn_doc])*
                #[doc = ""]
                #[doc = concat!("Receives the `", $rn_w, "` notification.")]
                fn $rn(&self, params: $rn_p)
                    -> impl std::future::Future<Output = Result<(), RequestError>> + Send;
            )*
            $(
                $(#[doc = $on_doc])*
                #[doc = ""]
                #[doc = concat!("Receives the `", $on_w, "` notification; ignored until implemented.")]
                $(#[cfg($on_cfg)])?
                fn $on(&self, params: $on_p)
                    -> impl std::future::Future<Output = Result<(), RequestError>> + Send {
                    let _ = params;
                    async { Ok(()) }
                }
            )*
            /// Answers a request outside the schema: an extension (a method
            /// whose name starts with `_`) or a method the schema does not
            /// have (a legacy one such as [`crate::legacy::SESSION_SET_MODEL`]);
            /// `method` is the name as received. Until implemented, -32601.
            fn ext_method(&self, method: String, params: serde_json::Value)
                -> impl std::future::Future<Output = Result<serde_json::Value, RequestError>> + Send {
                let _ = params;
                async move { Err(RequestError::method_not_found(&method)) }
            }
            /// Receives a notification outside the schema (an extension,
            /// `_`-prefixed, or one the schema does not have); ignored until
            /// implemented.
            fn ext_notification(&self, method: String, params: serde_json::Value)
                -> impl std::future::Future<Output = Result<(), RequestError>> + Send {
                let _ = (method, params);
                async { Ok(()) }
            }
        }

        /// Route an inbound request to the handler's method.
        pub(crate) async fn dispatch_request<T: $Trait>(
            handler: &T,
            request: &crate::IncomingRequest,
        ) -> Result<crate::RawJson, RequestError> {
            use crate::typed::{parse, parse_value, respond};
            let params = request.params.as_deref();
            match request.method.as_str() {
                $( $rr_w => respond(handler.$rr(parse($rr_w, params)?).await), )*
                $( $(#[cfg($or_cfg)])? $or_w => respond(handler.$or(parse($or_w, params)?).await), )*
                // Extensions, and methods outside the schema (legacy ones).
                // Params no JSON value holds (too deep) are invalid for an
                // extension; for any other method the schema does not have,
                // the answer stays -32601, as before the handler could take them.
                method => {
                    let params = parse_value(params).map_err(|error| {
                        if method.starts_with('_') { error } else { RequestError::method_not_found(method) }
                    })?;
                    respond(handler.ext_method(method.to_owned(), params).await)
                }
            }
        }

        /// Route an inbound notification to the handler's method.
        pub(crate) async fn dispatch_notification<T: $Trait>(
            handler: &T,
            notification: &crate::IncomingNotification,
        ) -> Result<(), RequestError> {
            use crate::typed::{parse, parse_value};
            let params = notification.params.as_deref();
            match notification.method.as_str() {
                $( $rn_w => handler.$rn(parse($rn_w, params)?).await, )*
                $( $(#[cfg($on_cfg)])? $on_w => handler.$on(parse($on_w, params)?).await, )*
                method => handler.ext_notification(method.to_owned(), parse_value(params)?).await,
            }
        }
    };
}

pub(crate) use handler_trait;

/// Methods on a typed connection that call the peer, from the generated
/// table: `name(Params) -> Result = "wire/name";` for requests,
/// `name(Params) -> Handle = "wire/name";` for requests whose result becomes
/// a handle (`terminal/create`: a `TerminalHandle`), and
/// `name(Params) = "wire/name";` for notifications. Expands inside an `impl`
/// block of a typed connection (`request`, `notify`, `handle`).
macro_rules! peer_methods {
    (
        requests { $( $(#[doc = $r_doc:literal])* $(#[cfg($r_cfg:meta)])? $r:ident($r_p:ty) -> $r_r:ty = $r_w:literal; )* }
        handles { $( $(#[doc = $h_doc:literal])* $(#[cfg($h_cfg:meta)])? $h:ident($h_p:ty) -> $h_r:ty = $h_w:literal; )* }
        notifications { $( $(#[doc = $n_doc:literal])* $(#[cfg($n_cfg:meta)])? $n:ident($n_p:ty) = $n_w:literal; )* }
    ) => {
        $(
            $(#[doc = $r_doc])*
            #[doc = ""]
            #[doc = concat!("Sends the `", $r_w, "` request.")]
            $(#[cfg($r_cfg)])?
            pub async fn $r(&self, params: $r_p) -> Result<$r_r, RequestError> {
                self.request($r_w, &params).await
            }
        )*
        $(
            $(#[doc = $h_doc])*
            #[doc = ""]
            #[doc = concat!("Sends the `", $h_w, "` request; the result is a handle.")]
            $(#[cfg($h_cfg)])?
            pub async fn $h(&self, params: $h_p) -> Result<$h_r, RequestError> {
                self.handle($h_w, &params).await
            }
        )*
        $(
            $(#[doc = $n_doc])*
            #[doc = ""]
            #[doc = concat!("Sends the `", $n_w, "` notification.")]
            $(#[cfg($n_cfg)])?
            pub async fn $n(&self, params: $n_p) -> Result<(), RequestError> {
                self.notify($n_w, &params).await
            }
        )*
    };
}

pub(crate) use peer_methods;

/// The `request` a typed connection's peer methods call, when it goes
/// straight to the wire. Expands inside an `impl` block of a type with a
/// `connection: Connection` field.
macro_rules! plain_request {
    () => {
        pub(crate) async fn request<P: serde::Serialize, R: serde::de::DeserializeOwned>(
            &self,
            method: &str,
            params: &P,
        ) -> Result<R, RequestError> {
            self.connection.send_request(method, params).await
        }
    };
}

pub(crate) use plain_request;

/// The `request` and `notify` of a side whose sends go straight to the wire
/// (the agent sides; the clients add rules to `notify`, v2's to `request`).
macro_rules! plain_sends {
    () => {
        crate::typed::plain_request!();

        pub(crate) async fn notify<P: serde::Serialize>(
            &self,
            method: &str,
            params: &P,
        ) -> Result<(), RequestError> {
            self.connection.send_notification(method, params).await
        }
    };
}

pub(crate) use plain_sends;

/// What both typed connections offer besides the peer's methods: extension
/// calls and the connection's lifecycle. Expands inside an `impl` block of
/// a type with a `connection: Connection` field.
macro_rules! connection_methods {
    () => {
        /// An extension request; `method` is sent as given (start it with `_`).
        pub async fn ext_method(
            &self,
            method: &str,
            params: serde_json::Value,
        ) -> Result<serde_json::Value, RequestError> {
            self.connection.send_request(method, &params).await
        }

        /// An extension notification; `method` is sent as given.
        pub async fn ext_notification(
            &self,
            method: &str,
            params: serde_json::Value,
        ) -> Result<(), RequestError> {
            self.connection.send_notification(method, &params).await
        }

        /// Cancel an outbound request still pending (see `Connection`).
        pub async fn cancel_pending_request(
            &self,
            id: &crate::RequestId,
            meta: Option<serde_json::Value>,
        ) -> bool {
            self.connection.cancel_pending_request(id, meta).await
        }

        /// Close the connection: pending requests fail, handlers are
        /// cancelled, a spawned peer process is reaped.
        pub fn close(&self) {
            self.connection.close()
        }

        /// Resolves once the connection is closed and torn down.
        pub async fn closed(&self) {
            self.connection.closed().await
        }

        /// Whether the connection is closed (or closing).
        pub fn is_closed(&self) -> bool {
            self.connection.is_closed()
        }
    };
}

pub(crate) use connection_methods;

//! The client's `session/cancel` rule: when a client cancels a session's
//! prompt turn, every permission request of that session still waiting on
//! the client is answered `cancelled` at once, as the protocol requires
//! (the agent may be blocked on it).
//!
//! One rule for every language and both versions (v1 and the v2 draft name
//! the methods and the cancelled answer alike): the Rust typed clients
//! ([`ClientSideConnection`], [`v2::ClientSideConnection`]: [`TypedPermissions`])
//! and the host connections of the bindings (`host::HostConnection` with
//! `Side::Client`) keep their open permission requests here, and apply the
//! rule when they send `session/cancel`.
//!
//! [`ClientSideConnection`]: crate::ClientSideConnection
//! [`v2::ClientSideConnection`]: crate::v2::ClientSideConnection

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use crate::connection::Connection;
use crate::error::RequestError;
use crate::handler::IncomingRequest;
use crate::message::RawJson;
use crate::schema::{method, RequestPermissionOutcome, RequestPermissionResponse};

/// Whether `method` is a request this rule tracks (`session/request_permission`).
pub(crate) fn is_permission_request(method: &str) -> bool {
    method == method::SESSION_REQUEST_PERMISSION
}

/// Whether `method` is the notification that triggers the rule (`session/cancel`).
pub(crate) fn is_session_cancel(method: &str) -> bool {
    method == method::SESSION_CANCEL
}

/// The `sessionId` of params text (None: absent or not a string; the schema
/// check reports those).
pub(crate) fn session_of(params: Option<&str>) -> Option<String> {
    #[derive(Deserialize)]
    struct Session {
        #[serde(rename = "sessionId")]
        session_id: String,
    }
    serde_json::from_str::<Session>(params?)
        .ok()
        .map(|s| s.session_id)
}

/// The answer to a withdrawn permission request, as JSON text.
pub(crate) fn cancelled_answer() -> String {
    let answer = RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled);
    serde_json::to_string(&answer).expect("a permission answer serializes")
}

/// Open permission requests by session, each with its id (unique on the
/// connection) and what withdrawing it takes (`V`: a cancellation token, a
/// host's request token).
pub(crate) struct OpenPermissions<V> {
    by_session: Mutex<HashMap<String, Vec<(u64, V)>>>,
}

impl<V> Default for OpenPermissions<V> {
    fn default() -> Self {
        Self {
            by_session: Mutex::new(HashMap::new()),
        }
    }
}

impl<V> OpenPermissions<V> {
    /// A permission request of `session` is waiting on the client.
    pub fn open(&self, session: String, id: u64, value: V) {
        self.lock().entry(session).or_default().push((id, value));
    }

    /// Request `id` was answered (or failed): nothing left to withdraw.
    pub fn close(&self, session: &str, id: u64) {
        let mut by_session = self.lock();
        if let Some(requests) = by_session.get_mut(session) {
            requests.retain(|(open, _)| *open != id);
            if requests.is_empty() {
                by_session.remove(session);
            }
        }
    }

    /// `session/cancel` for `session`: its open requests, to be answered
    /// `cancelled`.
    pub fn withdraw(&self, session: &str) -> Vec<V> {
        let requests = self.lock().remove(session).unwrap_or_default();
        requests.into_iter().map(|(_, value)| value).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<(u64, V)>>> {
        self.by_session.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The permission requests waiting on a typed Rust client, withdrawn by its
/// `session/cancel`.
#[derive(Default)]
pub(crate) struct TypedPermissions {
    open: OpenPermissions<CancellationToken>,
    next_id: AtomicU64,
}

impl TypedPermissions {
    /// Answer the permission `request` with `handled` (the client's
    /// handler), or `cancelled` if its session's turn is cancelled meanwhile.
    pub async fn answer(
        &self,
        request: &IncomingRequest,
        handled: impl Future<Output = Result<RawJson, RequestError>>,
    ) -> Result<RawJson, RequestError> {
        let Some(session) = session_of(request.params.as_deref().map(RawValue::get)) else {
            // Malformed: the typed dispatch produces the -32602.
            return handled.await;
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let withdrawn = CancellationToken::new();
        self.open.open(session.clone(), id, withdrawn.clone());
        let answer = tokio::select! {
            answer = handled => answer,
            _ = withdrawn.cancelled() => RawValue::from_string(cancelled_answer()).map_err(RequestError::internal),
        };
        self.open.close(&session, id);
        answer
    }

    /// Send the notification `method`; after `session/cancel`, the session's
    /// permission requests still waiting are answered `cancelled`.
    pub async fn notify<P: serde::Serialize>(
        &self,
        connection: &Connection,
        method: &str,
        params: &P,
    ) -> Result<(), RequestError> {
        if !is_session_cancel(method) {
            return connection.send_notification(method, params).await;
        }
        let params = crate::to_raw(params).map_err(RequestError::internal)?;
        let sent = connection.send_notification(method, &params).await;
        if let Some(session) = session_of(Some(params.get())) {
            for open in self.open.withdraw(&session) {
                open.cancel();
            }
        }
        sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn withdraws_only_the_cancelled_sessions_open_requests() {
        let open = OpenPermissions::default();
        open.open("a".into(), 1, 'x');
        open.open("a".into(), 2, 'y');
        open.open("b".into(), 3, 'z');
        open.close("a", 1);
        assert_eq!(open.withdraw("a"), vec!['y']);
        assert!(open.withdraw("a").is_empty());
        assert_eq!(open.withdraw("b"), vec!['z']);
    }

    #[test]
    fn reads_the_session_and_writes_the_cancelled_answer() {
        assert_eq!(
            session_of(Some(r#"{"sessionId":"s-1","x":1}"#)).as_deref(),
            Some("s-1")
        );
        assert_eq!(session_of(Some(r#"{"sessionId":1}"#)), None);
        assert_eq!(session_of(None), None);
        assert_eq!(cancelled_answer(), r#"{"outcome":{"outcome":"cancelled"}}"#);
    }
}

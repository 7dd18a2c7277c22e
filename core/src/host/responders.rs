//! Inbound requests handed to the host and not answered yet, by token: the
//! one registry every binding answers through (`HostConnection::respond`).
//!
//! On a client (`Side::Client`) it also keeps the open permission requests
//! by session, so that sending `session/cancel` withdraws them
//! (`permission_cancel`): the rule lives here, not in the bindings.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use tokio::sync::oneshot;

use crate::handler::{IncomingRequest, Responder};
use crate::permission_cancel::{self, OpenPermissions};

pub(crate) struct PendingAnswer {
    pub responder: Responder,
    /// Ends the engine's handler future once the host answered (None: the
    /// request went to a reader handler, and answering untracks it).
    pub answered: Option<oneshot::Sender<()>>,
    /// The session of an open permission request (a client's).
    session: Option<String>,
}

/// Tokens are unique in the process, not only per connection: a binding
/// may look a token up without knowing its connection (C's responders).
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

pub(crate) struct Responders {
    pending: Mutex<HashMap<u64, PendingAnswer>>,
    /// Only on a client: permission requests by session.
    permissions: Option<OpenPermissions<u64>>,
}

impl Responders {
    /// `client`: track permission requests for `session/cancel`.
    pub fn new(client: bool) -> Self {
        Self {
            pending: Mutex::new(HashMap::new()),
            permissions: client.then(OpenPermissions::default),
        }
    }

    /// Register `request` until the host answers it; its token.
    pub fn register(&self, request: &IncomingRequest, answered: Option<oneshot::Sender<()>>) -> u64 {
        let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
        let session = match &self.permissions {
            Some(open) if permission_cancel::is_permission_request(&request.method) => {
                let session = permission_cancel::session_of(request.params.as_deref().map(|raw| raw.get()));
                if let Some(session) = &session {
                    open.open(session.clone(), token, token);
                }
                session
            }
            _ => None,
        };
        let pending = PendingAnswer {
            responder: request.responder(),
            answered,
            session,
        };
        self.lock().insert(token, pending);
        token
    }

    /// Take request `token` out (to answer it, or because it is cancelled).
    pub fn take(&self, token: u64) -> Option<PendingAnswer> {
        let pending = self.lock().remove(&token)?;
        if let (Some(open), Some(session)) = (&self.permissions, &pending.session) {
            open.close(session, token);
        }
        Some(pending)
    }

    /// Whether request `token` is waiting for its answer.
    pub fn contains(&self, token: u64) -> bool {
        self.lock().contains_key(&token)
    }

    /// Every request waiting for its answer.
    pub fn tokens(&self) -> Vec<u64> {
        self.lock().keys().copied().collect()
    }

    /// Take every request still waiting for its answer out (the connection
    /// closed), in the order they arrived.
    pub fn take_all(&self) -> Vec<u64> {
        let mut tokens: Vec<u64> = self.tokens();
        tokens.sort_unstable();
        tokens.retain(|&token| self.take(token).is_some());
        tokens
    }

    /// After this client sent `session/cancel` with `params`: the tokens of
    /// that session's open permission requests, to be answered `cancelled`.
    pub fn withdraw_permissions(&self, params: Option<&str>) -> Vec<u64> {
        match (&self.permissions, permission_cancel::session_of(params)) {
            (Some(open), Some(session)) => open.withdraw(&session),
            _ => Vec::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, PendingAnswer>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

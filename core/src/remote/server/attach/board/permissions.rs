//! Permission requests shared by every client of a session: the copies
//! each client holds, the first answer (which reaches the agent), and the
//! withdrawal of the others' copies (`$/cancel_request`).

use serde_json::{json, Value};

use super::{line, send_or_evict, Answer, Board, State};
use crate::message::RequestId;

/// A `session/request_permission` sent to every client of its session.
pub(super) struct Permission {
    pub(super) session: String,
    pub(super) controller: u64,
    /// The agent's id for it.
    pub(super) agent_id: RequestId,
    pub(super) params: Value,
    /// Who holds it, under which id.
    pub(super) holders: Vec<(u64, RequestId)>,
    /// Whether the controller's client has it queued (then observers,
    /// joiners too, get copies).
    pub(super) delivered: bool,
}

impl Board {
    /// `controller`'s agent asks permission (`params`) as `agent_id` in
    /// `session`. Its observers get copies once the controller's client has
    /// it queued ([`Board::permission_delivered`]), so that no answer can
    /// withdraw it from the controller before it is there.
    pub(in crate::remote::server::attach) fn permission_asked(
        &self,
        session: &str,
        controller: u64,
        agent_id: &RequestId,
        params: Value,
    ) {
        let mut guard = self.lock();
        let state = &mut *guard;
        if state
            .sessions
            .get(session)
            .is_none_or(|s| s.controller != controller)
        {
            return;
        }
        let key = state.next_permission;
        state.next_permission += 1;
        state.copies.insert((controller, agent_id.clone()), key);
        state.permissions.insert(
            key,
            Permission {
                session: session.to_owned(),
                controller,
                agent_id: agent_id.clone(),
                params,
                holders: vec![(controller, agent_id.clone())],
                delivered: false,
            },
        );
    }

    /// The controller's client has permission request `agent_id` queued:
    /// every observer of its session gets a copy under an id of its own.
    pub(in crate::remote::server::attach) fn permission_delivered(
        &self,
        controller: u64,
        agent_id: &RequestId,
    ) {
        let mut guard = self.lock();
        let state = &mut *guard;
        let Some(key) = state.copies.get(&(controller, agent_id.clone())).copied() else {
            return;
        };
        let Some(permission) = state.permissions.get_mut(&key) else {
            return;
        };
        permission.delivered = true;
        let (session, params) = (permission.session.clone(), permission.params.clone());
        let observers = state
            .sessions
            .get(&session)
            .map(|s| s.observers.clone())
            .unwrap_or_default();
        for observer in observers {
            let copy_id = copy_id(key, observer);
            if send_or_evict(state, observer, request_line(&copy_id, &params)) {
                state.copies.insert((observer, copy_id.clone()), key);
                if let Some(permission) = state.permissions.get_mut(&key) {
                    permission.holders.push((observer, copy_id));
                }
            }
        }
    }

    /// `party`'s client answered `id` with `response` (a JSON object).
    pub(in crate::remote::server::attach) fn answered(
        &self,
        party: u64,
        id: &RequestId,
        mut response: Value,
    ) -> Answer {
        let mut guard = self.lock();
        let state = &mut *guard;
        if state.withdrawn.remove(&(party, id.clone())) {
            return Answer::Late;
        }
        let Some(key) = state.copies.get(&(party, id.clone())).copied() else {
            return Answer::Own;
        };
        let Some(permission) = withdraw(state, key, Some(party)) else {
            return Answer::Own;
        };
        let Some(agent) = state.parties.get(&permission.controller).map(|p| p.agent.clone()) else {
            return Answer::Late;
        };
        response["id"] = json!(permission.agent_id);
        Answer::First(agent, line(&response))
    }

    /// `controller`'s agent withdrew its request `agent_id`
    /// (`$/cancel_request`): withdrawn from the observers too.
    pub(in crate::remote::server::attach) fn agent_withdrew(&self, controller: u64, agent_id: &RequestId) {
        let mut guard = self.lock();
        let state = &mut *guard;
        if let Some(key) = state.copies.get(&(controller, agent_id.clone())).copied() {
            // The controller's client gets the agent's own notification.
            withdraw(state, key, Some(controller));
        }
    }
}

/// Take permission `key` off the board and withdraw it from every holder
/// but `except` (`$/cancel_request` for the id each holds it under).
pub(super) fn withdraw(state: &mut State, key: u64, except: Option<u64>) -> Option<Permission> {
    let permission = state.permissions.remove(&key)?;
    for (holder, id) in &permission.holders {
        state.copies.remove(&(*holder, id.clone()));
        if Some(*holder) == except {
            continue;
        }
        let cancel = json!({
            "jsonrpc": "2.0",
            "method": crate::CANCEL_REQUEST_METHOD,
            "params": {"requestId": id},
        });
        if send_or_evict(state, *holder, line(&cancel)) {
            state.withdrawn.insert((*holder, id.clone()));
        }
    }
    Some(permission)
}

/// The id an observer gets permission `key` under: a string no client
/// sends itself, unique per permission.
pub(super) fn copy_id(key: u64, party: u64) -> RequestId {
    RequestId::Str(format!("acp-engine/attach/{party}/{key}"))
}

pub(super) fn request_line(id: &RequestId, params: &Value) -> Vec<u8> {
    line(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": crate::schema::method::SESSION_REQUEST_PERMISSION,
        "params": params,
    }))
}

//! What real programs still use after the schema dropped it: the model
//! selection of ACP before session config options (`session/new`'s
//! `models`, answered by gemini-cli, claude-agent-acp and cursor-agent-acp;
//! `session/set_model`, sent by acpx and Zed). One place for these wire
//! names, so that tools and connections that must speak them (list
//! [`unchecked_methods`] in the connection's settings) agree.

use serde::{Deserialize, Serialize};

use crate::schema::SessionId;
use crate::UncheckedMethods;

/// Select a session's model (a request to the agent; result `{}`).
pub const SESSION_SET_MODEL: &str = "session/set_model";

/// The legacy methods, for a connection's unchecked methods.
pub fn unchecked_methods() -> UncheckedMethods {
    UncheckedMethods::new([SESSION_SET_MODEL])
}

/// `session/new` (and `session/load`) result field `models`: the session's
/// model and the ones it may switch to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionModelState {
    /// The model the session uses.
    pub current_model_id: String,
    /// The models `session/set_model` accepts.
    #[serde(default)]
    pub available_models: Vec<ModelInfo>,
}

/// One model an agent offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// What `session/set_model` takes.
    pub model_id: String,
    /// A name for people.
    pub name: String,
    /// What it is good for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The params of [`SESSION_SET_MODEL`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetSessionModelRequest {
    /// The session.
    pub session_id: SessionId,
    /// One of its `availableModels`.
    pub model_id: String,
}

/// The `models` field of a `session/new` or `session/load` result, from its
/// fields (a typed result keeps it in `extra`; None: absent, or not of that
/// shape).
pub fn session_models(result: &serde_json::Map<String, serde_json::Value>) -> Option<SessionModelState> {
    SessionModelState::deserialize(result.get("models")?).ok()
}

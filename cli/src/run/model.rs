//! The session's model: named when `run` starts, chosen with `--model`.
//! An agent offers models one of two ways: a session config option of
//! category `model` (the schema's), or the legacy `models` field answered
//! by `session/new`, switched with `session/set_model` (gemini-cli,
//! claude-agent-acp and cursor-agent-acp still do; `acp_engine::legacy`).

use acp_engine::legacy::{self, SetSessionModelRequest};
use acp_engine::schema::*;
use acp_engine::ClientSideConnection;

/// What the agent's new session said about models.
pub enum Models {
    /// A select config option of category `model`.
    ConfigOption {
        config_id: SessionConfigId,
        current: String,
        values: Vec<String>,
    },
    /// The legacy `models` field.
    Legacy { current: String, values: Vec<String> },
    /// Neither.
    NotOffered,
}

impl Models {
    pub fn of(session: &NewSessionResponse) -> Self {
        let option = session.config_options.iter().flatten().find_map(|option| {
            match (&option.category, &option.kind) {
                (Some(SessionConfigOptionCategory::Model), SessionConfigOptionKind::Select(select)) => {
                    Some((option.id.clone(), select))
                }
                _ => None,
            }
        });
        if let Some((config_id, select)) = option {
            let values = match &select.options {
                SessionConfigSelectOptions::Ungrouped(options) => options.iter().collect::<Vec<_>>(),
                SessionConfigSelectOptions::Grouped(groups) => {
                    groups.iter().flat_map(|group| &group.options).collect()
                }
            };
            return Models::ConfigOption {
                config_id,
                current: select.current_value.to_string(),
                values: values
                    .into_iter()
                    .map(|option| option.value.to_string())
                    .collect(),
            };
        }
        match legacy::session_models(&session.extra) {
            Some(models) => Models::Legacy {
                current: models.current_model_id,
                values: models
                    .available_models
                    .into_iter()
                    .map(|model| model.model_id)
                    .collect(),
            },
            None => Models::NotOffered,
        }
    }

    /// The model the session uses, when the agent said.
    pub fn current(&self) -> Option<&str> {
        match self {
            Models::ConfigOption { current, .. } | Models::Legacy { current, .. } => Some(current),
            Models::NotOffered => None,
        }
    }

    /// Switch `session` to `model` the way the agent offers; the error says why not.
    pub async fn choose(
        &mut self,
        connection: &ClientSideConnection,
        session: &SessionId,
        model: &str,
    ) -> Result<(), String> {
        let values = match self {
            Models::ConfigOption { values, .. } | Models::Legacy { values, .. } => values,
            Models::NotOffered => return Err("the agent offers no choice of model".to_owned()),
        };
        if !values.iter().any(|value| value == model) {
            return Err(format!(
                "the agent offers no model {model:?}; it offers: {}",
                values.join(", ")
            ));
        }
        let sent = match self {
            Models::ConfigOption { config_id, .. } => connection
                .set_session_config_option(SetSessionConfigOptionRequest::new(
                    session.clone(),
                    config_id.clone(),
                    SetSessionConfigOptionRequestKind::ValueId(SetSessionConfigOptionRequestValueId::new(
                        model.to_owned(),
                    )),
                ))
                .await
                .map(drop),
            Models::Legacy { .. } => {
                let request = SetSessionModelRequest {
                    session_id: session.clone(),
                    model_id: model.to_owned(),
                };
                connection
                    .connection()
                    .send_request::<_, serde_json::Value>(legacy::SESSION_SET_MODEL, &request)
                    .await
                    .map(drop)
            }
            Models::NotOffered => unreachable!("refused above"),
        };
        sent.map_err(|error| format!("the agent refused model {model:?}: {error}"))?;
        match self {
            Models::ConfigOption { current, .. } | Models::Legacy { current, .. } => {
                *current = model.to_owned()
            }
            Models::NotOffered => {}
        }
        Ok(())
    }
}

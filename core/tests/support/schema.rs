//! Checks messages against the official ACP JSON Schema (schema/v1): every
//! message a test puts on the wire goes through `SchemaChecker`.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde_json::{json, Value};

pub struct SchemaChecker {
    schema: Value,
    /// method -> (params type, result type)
    methods: HashMap<String, (Option<String>, Option<String>)>,
    validators: Mutex<HashMap<String, &'static jsonschema::Validator>>,
}

/// The one checker for schema/v1/schema.json.
pub fn checker() -> &'static SchemaChecker {
    static CHECKER: OnceLock<SchemaChecker> = OnceLock::new();
    CHECKER
        .get_or_init(|| SchemaChecker::load(concat!(env!("CARGO_MANIFEST_DIR"), "/../schema/v1/schema.json")))
}

impl SchemaChecker {
    fn load(path: &str) -> Self {
        let schema: Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("read schema")).unwrap();
        let mut methods: HashMap<String, (Option<String>, Option<String>)> = HashMap::new();
        for (name, def) in schema["$defs"].as_object().unwrap() {
            let Some(method) = def["x-method"].as_str() else {
                continue;
            };
            let entry = methods.entry(method.to_owned()).or_default();
            if name.ends_with("Response") {
                entry.1 = Some(name.clone());
            } else {
                entry.0 = Some(name.clone());
            }
        }
        Self {
            schema,
            methods,
            validators: Mutex::new(HashMap::new()),
        }
    }

    /// The params type of a method, if the schema knows the method.
    pub fn params_type(&self, method: &str) -> Option<&str> {
        self.methods.get(method).and_then(|(params, _)| params.as_deref())
    }

    pub fn result_type(&self, method: &str) -> Option<&str> {
        self.methods.get(method).and_then(|(_, result)| result.as_deref())
    }

    /// Validate `value` against `#/$defs/<def_name>`; panics with the errors.
    pub fn check_def(&self, def_name: &str, value: &Value) {
        let errors = self.def_errors(def_name, value);
        assert!(errors.is_empty(), "{value} is not a valid {def_name}: {errors:?}");
    }

    /// What is wrong with `value` as a `#/$defs/<def_name>` (empty: valid).
    pub fn def_errors(&self, def_name: &str, value: &Value) -> Vec<String> {
        let validator = self.validator(def_name);
        validator
            .iter_errors(value)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect()
    }

    fn validator(&self, def_name: &str) -> &'static jsonschema::Validator {
        let mut validators = self.validators.lock().unwrap();
        validators.entry(def_name.to_owned()).or_insert_with(|| {
            let wrapper = json!({
                "$schema": self.schema["$schema"],
                "$ref": format!("#/$defs/{def_name}"),
                "$defs": self.schema["$defs"],
            });
            Box::leak(Box::new(
                jsonschema::validator_for(&wrapper).expect("compile schema"),
            ))
        })
    }

    /// Check one JSON-RPC message. `method_of_response` names the method
    /// of the request a response answers (the sender knows it).
    pub fn check_message(&self, message: &Value, method_of_response: Option<&str>) {
        let errors = self.message_errors(message, method_of_response);
        assert!(errors.is_empty(), "{message}: {errors:?}");
    }

    /// What is wrong with one JSON-RPC message (empty: valid).
    pub fn message_errors(&self, message: &Value, method_of_response: Option<&str>) -> Vec<String> {
        if message["jsonrpc"] != "2.0" {
            return vec!["jsonrpc is not \"2.0\"".into()];
        }
        if let Some(method) = message["method"].as_str() {
            if method.starts_with('_') {
                return vec![]; // extension methods have no schema
            }
            match self.params_type(method) {
                Some(params_type) => self.def_errors(params_type, &message["params"]),
                None => vec![format!("{method} is not a method of the schema")],
            }
        } else if let Some(error) = message.get("error") {
            self.def_errors("Error", error)
        } else {
            match method_of_response {
                Some(method) if method.starts_with('_') => vec![],
                Some(method) => match self.result_type(method) {
                    Some(result_type) => self.def_errors(result_type, &message["result"]),
                    None => vec![format!("no result type for {method}")],
                },
                None => vec!["a response to an unknown request".into()],
            }
        }
    }
}

/// An observer for a connection that checks every message both ways and
/// collects what is wrong; `errors()` at the end of the test.
#[derive(Clone, Default)]
pub struct WireAudit {
    state: std::sync::Arc<Mutex<AuditState>>,
}

#[derive(Default)]
struct AuditState {
    /// (direction of the request, id) -> method
    requests: HashMap<(bool, String), String>,
    errors: Vec<String>,
    messages: usize,
}

impl WireAudit {
    pub fn observe(&self, direction: acp_engine::Direction, line: &[u8]) {
        let outbound = direction == acp_engine::Direction::Outbound;
        let mut state = self.state.lock().unwrap();
        state.messages += 1;
        let message: Value = match serde_json::from_slice(line) {
            Ok(message) => message,
            Err(error) => {
                state.errors.push(format!("not JSON: {error}"));
                return;
            }
        };
        let id = message.get("id").map(|id| id.to_string());
        if let (Some(method), Some(id)) = (message["method"].as_str(), &id) {
            state.requests.insert((outbound, id.clone()), method.to_owned());
        }
        // A response answers a request that went the other way.
        let answered = match (&id, message.get("method")) {
            (Some(id), None) => state.requests.get(&(!outbound, id.clone())).cloned(),
            _ => None,
        };
        let errors = checker().message_errors(&message, answered.as_deref());
        state
            .errors
            .extend(errors.into_iter().map(|e| format!("{message}: {e}")));
    }

    /// (messages seen, what was wrong)
    pub fn report(&self) -> (usize, Vec<String>) {
        let state = self.state.lock().unwrap();
        (state.messages, state.errors.clone())
    }
}

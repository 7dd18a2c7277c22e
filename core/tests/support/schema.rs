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
        let validator = self.validator(def_name);
        let errors: Vec<String> = validator
            .iter_errors(value)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{value} is not a valid {def_name}: {errors:?}");
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
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        if let Some(method) = message["method"].as_str() {
            if method.starts_with('_') {
                return; // extension methods have no schema
            }
            let params_type = self
                .params_type(method)
                .unwrap_or_else(|| panic!("{method} is not a method of the schema"));
            self.check_def(params_type, &message["params"]);
        } else if let Some(error) = message.get("error") {
            self.check_def("Error", error);
        } else if let Some(method) = method_of_response {
            if !method.starts_with('_') {
                let result_type = self
                    .result_type(method)
                    .unwrap_or_else(|| panic!("no result type for {method}"));
                self.check_def(result_type, &message["result"]);
            }
        }
    }
}

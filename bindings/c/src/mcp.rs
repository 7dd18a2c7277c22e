//! MCP-over-ACP (unstable; `acp_engine::mcp::host`): a client serves MCP
//! servers to its agent over the connection itself (`mcp/message`), and an
//! agent calls them. The rules (envelope, request `_meta`, outcome carriers,
//! duplicate ids, per-server limits, error mapping) are the engine's; C
//! passes JSON text and runs its handlers.

use std::ffi::c_char;
use std::ptr;
use std::sync::Arc;

use acp_engine::mcp::host::{self, HostOperation, HostStart};
use acp_engine::mcp::{binding, McpProvider};
use acp_engine::RequestError;
use serde_json::value::RawValue;

use crate::ffi::{
    acp_result, guard, guard_value, json_arg, out_arg, owned_string, request_failed, str_arg, Failure,
};

/// One connection's registered MCP servers (the official SDKs'
/// `McpOverAcpProvider`). Opaque; free with `acp_mcp_provider_free`.
pub struct acp_mcp_provider {
    provider: Arc<McpProvider>,
}

/// One `mcp/message` request a provider's handler is running. Opaque;
/// finish it once with `acp_mcp_operation_finish`, then free it.
pub struct acp_mcp_operation {
    operation: HostOperation,
}

/// An optional JSON argument as text.
unsafe fn json_text<'a>(pointer: *const c_char, name: &str) -> Result<Option<&'a str>, Failure> {
    Ok(json_arg(pointer, name)?.map(RawValue::get))
}

/// An answer for C: the result in `*out` (`ACP_OK`), or the JSON-RPC error
/// object in `*out` (`ACP_ERR_REQUEST_FAILED`).
fn answer(what: &str, answer: Result<String, RequestError>, out: &mut *mut c_char) -> Result<(), Failure> {
    match answer {
        Ok(text) => {
            *out = owned_string(&text);
            Ok(())
        }
        Err(error) => Err(request_failed(what, &error, out)),
    }
}

/// A provider with no servers, for one connection (free with
/// `acp_mcp_provider_free`). A client answers the agent's `mcp/message`
/// requests (`ACP_METHOD_MCP_MESSAGE`; the connection needs
/// `acp_options.unstable`) with `acp_mcp_provider_start`.
#[no_mangle]
pub extern "C" fn acp_mcp_provider_new() -> *mut acp_mcp_provider {
    guard_value(ptr::null_mut(), || {
        Box::into_raw(Box::new(acp_mcp_provider {
            provider: McpProvider::new(),
        }))
    })
}

/// Free a provider (NULL is fine); its operations stay valid until freed.
#[no_mangle]
pub unsafe extern "C" fn acp_mcp_provider_free(provider: *mut acp_mcp_provider) {
    guard_value((), || {
        if !provider.is_null() {
            drop(Box::from_raw(provider));
        }
    })
}

/// Register a server named `name`, under `server_id` (NULL: a fresh one),
/// running at most `max_active_requests` requests at once (0: the engine's
/// default). `*out_server_id` is its id, and `*out_declaration_json` (when
/// not NULL) what to declare in `session/new`'s `mcpServers`:
/// `{"type": "acp", "name", "serverId"}`; free both with `acp_string_free`.
/// `ACP_ERR_INVALID_ARGUMENT` when the id is taken.
#[no_mangle]
pub unsafe extern "C" fn acp_mcp_provider_register(
    provider: *const acp_mcp_provider,
    name: *const c_char,
    server_id: *const c_char,
    max_active_requests: u32,
    out_server_id: *mut *mut c_char,
    out_declaration_json: *mut *mut c_char,
) -> acp_result {
    guard(|| {
        let out = out_arg(out_server_id, "out_server_id")?;
        let out_declaration = out_declaration_json.as_mut().map(|out| {
            *out = ptr::null_mut();
            out
        });
        let provider = provider.as_ref().ok_or_else(|| Failure::null("provider"))?;
        let name = str_arg(name, "name")?;
        let server_id = if server_id.is_null() {
            None
        } else {
            Some(str_arg(server_id, "server_id")?)
        };
        let limit = (max_active_requests > 0).then_some(max_active_requests as usize);
        let registration = provider.provider.register(name, server_id, limit, None)?;
        *out = owned_string(&registration.server_id);
        if let Some(out_declaration) = out_declaration {
            *out_declaration = owned_string(&registration.declaration().to_string());
        }
        Ok(())
    })
}

/// Remove a registration: later requests for it are answered -33001, and
/// its running operations are cancelled (`acp_mcp_operation_is_cancelled`).
/// False when it was not registered.
#[no_mangle]
pub unsafe extern "C" fn acp_mcp_provider_dispose(
    provider: *const acp_mcp_provider,
    server_id: *const c_char,
) -> bool {
    guard_value(false, || {
        let (Some(provider), Ok(server_id)) = (provider.as_ref(), str_arg(server_id, "server_id")) else {
            return false;
        };
        provider.provider.dispose(server_id)
    })
}

/// Start answering an `mcp/message` request (`params_json`, its params).
/// `ACP_OK` with `*out_operation` set: run the server's handler; `*out_json`
/// is its context (`serverId`, `requestId`, `method`, `params`,
/// `protocolVersion`, `clientCapabilities`, `clientInfo`, `envelopeMeta`).
/// `ACP_OK` with `*out_operation` NULL: `*out_json` is the result to answer
/// at once. `ACP_ERR_REQUEST_FAILED`: `*out_json` is the JSON-RPC error to
/// answer (`acp_responder_error_json`): -33001 for an unknown server,
/// -33000 past its limit. Free `*out_json` with `acp_string_free`.
#[no_mangle]
pub unsafe extern "C" fn acp_mcp_provider_start(
    provider: *const acp_mcp_provider,
    params_json: *const c_char,
    out_operation: *mut *mut acp_mcp_operation,
    out_json: *mut *mut c_char,
) -> acp_result {
    guard(|| {
        let out_operation = out_operation
            .as_mut()
            .ok_or_else(|| Failure::null("out_operation"))?;
        *out_operation = ptr::null_mut();
        let out = out_arg(out_json, "out_json")?;
        let provider = provider.as_ref().ok_or_else(|| Failure::null("provider"))?;
        let params = json_text(params_json, "params_json")?.unwrap_or("null");
        match host::start(&provider.provider, params) {
            Ok(HostStart::Run { operation, context }) => {
                *out_operation = Box::into_raw(Box::new(acp_mcp_operation { operation }));
                answer("acp_mcp_provider_start", Ok(context), out)
            }
            Ok(HostStart::Answer(result)) => answer("acp_mcp_provider_start", Ok(result), out),
            Err(error) => answer("acp_mcp_provider_start", Err(error), out),
        }
    })
}

/// The params of an MCP notification (`method`, `params_json` may be NULL)
/// scoped to this operation, in `*out_params_json`: send them as an
/// `mcp/message` notification. NULL once the operation finished (a late
/// notification is dropped).
#[no_mangle]
pub unsafe extern "C" fn acp_mcp_operation_notification(
    operation: *const acp_mcp_operation,
    method: *const c_char,
    params_json: *const c_char,
    out_params_json: *mut *mut c_char,
) -> acp_result {
    guard(|| {
        let out = out_arg(out_params_json, "out_params_json")?;
        let operation = operation.as_ref().ok_or_else(|| Failure::null("operation"))?;
        let method = str_arg(method, "method")?;
        let params = json_text(params_json, "params_json")?;
        if let Some(params) = operation.operation.notification(method, params) {
            *out = owned_string(&params);
        }
        Ok(())
    })
}

/// True once the operation should stop: its registration was disposed, it
/// was cancelled (`acp_mcp_operation_cancel`), or it finished. (The
/// caller's `$/cancel_request` shows on the request's responder:
/// `acp_responder_is_cancelled`.) NULL counts as cancelled.
#[no_mangle]
pub unsafe extern "C" fn acp_mcp_operation_is_cancelled(operation: *const acp_mcp_operation) -> bool {
    guard_value(true, || {
        operation
            .as_ref()
            .is_none_or(|operation| operation.operation.is_cancelled())
    })
}

/// The caller cancelled the request: mark the operation cancelled (its
/// finish then answers -32800).
#[no_mangle]
pub unsafe extern "C" fn acp_mcp_operation_cancel(operation: *const acp_mcp_operation) {
    guard_value((), || {
        if let Some(operation) = operation.as_ref() {
            operation.operation.cancel();
        }
    })
}

/// Finish the operation with the handler's outcome, `outcome_json`:
/// `{"result": ...}` or an inner MCP error `{"error": {"code", "message",
/// "data"?}}`; or, when the handler failed otherwise, `outcome_json` NULL,
/// `failure_details` what failed and `failure_code` the ACP error code the
/// failure carried (0: none): answered -33002, or -32800 once cancelled.
/// `ACP_OK`: `*out_json` is the result to answer; `ACP_ERR_REQUEST_FAILED`:
/// the JSON-RPC error (an invalid outcome is -33002). Free `*out_json` with
/// `acp_string_free`. Once only (a second finish is -32603); the
/// operation's slot is free afterwards.
#[no_mangle]
pub unsafe extern "C" fn acp_mcp_operation_finish(
    operation: *const acp_mcp_operation,
    outcome_json: *const c_char,
    failure_details: *const c_char,
    failure_code: i64,
    out_json: *mut *mut c_char,
) -> acp_result {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        let operation = operation.as_ref().ok_or_else(|| Failure::null("operation"))?;
        let outcome = json_text(outcome_json, "outcome_json")?;
        let failure = match outcome {
            Some(_) => None,
            None => Some(failure(failure_details, failure_code)?),
        };
        let answered = operation.operation.finish(outcome, failure.as_deref());
        answer("acp_mcp_operation_finish", answered, out)
    })
}

/// A handler's failure as the engine takes it: `{"details", "code"?}`.
unsafe fn failure(details: *const c_char, code: i64) -> Result<String, Failure> {
    let details = match details.is_null() {
        true => "the handler gave no outcome",
        false => str_arg(details, "failure_details")?,
    };
    let mut failure = serde_json::json!({ "details": details });
    if code != 0 {
        failure["code"] = code.into();
    }
    Ok(failure.to_string())
}

/// Free an operation (NULL is fine). One freed unfinished is cancelled and
/// its slot released.
#[no_mangle]
pub unsafe extern "C" fn acp_mcp_operation_free(operation: *mut acp_mcp_operation) {
    guard_value((), || {
        if !operation.is_null() {
            drop(Box::from_raw(operation));
        }
    })
}

/// An agent's `mcp/message` request params: `params_json` (NULL: none)
/// with MCP 2026-07-28's request `_meta` added (the client's
/// `capabilities_json` and `client_info_json`, each may be NULL), never
/// replacing the caller's, in `*out_json` (free with `acp_string_free`).
#[no_mangle]
pub unsafe extern "C" fn acp_mcp_with_request_meta(
    params_json: *const c_char,
    capabilities_json: *const c_char,
    client_info_json: *const c_char,
    out_json: *mut *mut c_char,
) -> acp_result {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        let params = json_text(params_json, "params_json")?;
        let capabilities = json_text(capabilities_json, "capabilities_json")?;
        let client_info = json_text(client_info_json, "client_info_json")?;
        *out = owned_string(&host::with_request_meta(params, capabilities, client_info));
        Ok(())
    })
}

/// The outcome (`{"result"}` or `{"error"}`) of an `mcp/message` request's
/// answer, `response_json`, in `*out_json`; `ACP_ERR_REQUEST_FAILED` with
/// -33002 in `*out_json` when the answer is no valid carrier.
#[no_mangle]
pub unsafe extern "C" fn acp_mcp_outcome_of_response(
    response_json: *const c_char,
    out_json: *mut *mut c_char,
) -> acp_result {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        let response = json_text(response_json, "response_json")?.unwrap_or("null");
        answer(
            "acp_mcp_outcome_of_response",
            host::outcome_of_response(response),
            out,
        )
    })
}

/// A fresh id, `<prefix>:<random>` (an MCP `requestId`, say); free it with
/// `acp_string_free`. NULL when `prefix` is NULL or not UTF-8.
#[no_mangle]
pub unsafe extern "C" fn acp_mcp_generate_id(prefix: *const c_char) -> *mut c_char {
    guard_value(ptr::null_mut(), || match str_arg(prefix, "prefix") {
        Ok(prefix) => owned_string(&binding::generate_id(prefix)),
        Err(_) => ptr::null_mut(),
    })
}

/// Whether a session's `mcpServers` entry, `server_json`, is a server
/// offered over ACP (`{"type": "acp", "name", "serverId"}`): an agent
/// calls those with `mcp/message`. False for NULL or text that is not JSON.
#[no_mangle]
pub unsafe extern "C" fn acp_mcp_server_is_acp(server_json: *const c_char) -> bool {
    guard_value(false, || {
        let Ok(Some(server)) = json_text(server_json, "server_json") else {
            return false;
        };
        serde_json::from_str(server).is_ok_and(|server| binding::is_mcp_server_acp(&server))
    })
}

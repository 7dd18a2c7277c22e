//! `acp_engine._native`: the acp-engine connection engine for Python. The
//! package `acp_engine` (python/acp_engine) builds the asyncio API on it.

#![warn(missing_docs)]
mod connection;
mod decode;
mod dial;
mod json;
mod mcp;
mod model_json;
mod proxy;
mod server;

use pyo3::prelude::*;

pyo3::create_exception!(
    _native,
    EngineError,
    pyo3::exceptions::PyException,
    "An engine-level error: args are (code, message, data as JSON text or None)."
);

/// Serialize a value to JSON text the way outbound messages are.
#[pyfunction]
fn dumps(value: &Bound<'_, PyAny>) -> PyResult<String> {
    json::to_json(value)
}

/// Parse JSON text the way drained events are (`json.loads`'s result).
#[pyfunction]
fn loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    decode::loads(py, text)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<connection::NativeConnection>()?;
    m.add_class::<server::NativeServer>()?;
    m.add_class::<dial::NativeDial>()?;
    m.add_class::<proxy::NativeProxyStreams>()?;
    m.add_class::<mcp::McpProviderHandle>()?;
    m.add_class::<mcp::McpOperationHandle>()?;
    m.add_function(wrap_pyfunction!(mcp::mcp_with_request_meta, m)?)?;
    m.add_function(wrap_pyfunction!(mcp::mcp_parse_outcome, m)?)?;
    m.add_function(wrap_pyfunction!(mcp::mcp_outcome_of_response, m)?)?;
    m.add_function(wrap_pyfunction!(mcp::mcp_generate_id, m)?)?;
    m.add("EngineError", m.py().get_type::<EngineError>())?;
    m.add_function(wrap_pyfunction!(dumps, m)?)?;
    m.add_function(wrap_pyfunction!(loads, m)?)?;
    m.add_function(wrap_pyfunction!(model_json::register_wire_model, m)?)?;
    m.add_function(wrap_pyfunction!(model_json::wire_json, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // What every pending call fails with once the connection closed.
    // The kinds of the events `drain` hands out (`acp_engine::host::kind`).
    use acp_engine::host::kind;
    for (name, value) in [
        ("EVENT_REQUEST", kind::REQUEST),
        ("EVENT_NOTIFICATION", kind::NOTIFICATION),
        ("EVENT_RESULT", kind::RESULT),
        ("EVENT_ERROR", kind::ERROR),
        ("EVENT_CANCELLED", kind::CANCELLED),
        ("EVENT_WRITTEN", kind::WRITTEN),
        ("EVENT_CLOSED", kind::CLOSED),
        ("EVENT_INVALID_NOTIFICATION", kind::INVALID_NOTIFICATION),
        ("EVENT_OBSERVED", kind::OBSERVED),
    ] {
        m.add(name, value)?;
    }
    Ok(())
}

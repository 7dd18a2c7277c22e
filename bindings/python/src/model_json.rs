//! pydantic models straight to wire JSON, for the official API
//! (`acp_engine.compat`): a model of a registered class is written from its
//! `__dict__` by the field list Python registered for the class (wire name,
//! whether a value equal to the default is left out), as pydantic-core
//! writes it with `by_alias`, `exclude_none` and `exclude_defaults`. That
//! serializer call costs more than the rest of an update's trip to the
//! engine; this walk costs a fraction of it.
//!
//! Only plain values are written here: exact `str`, `int`, `bool`, `None`,
//! `list`, `dict` with `str` keys, and models of registered classes.
//! Anything else (a float, whose text pydantic spells its own way, as
//! `1e+16`; an enum, a URL, an instance of a subclass) makes `wire_json`
//! return None, and Python asks pydantic instead, so the text is always
//! pydantic's.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyList, PyString, PyTuple, PyType};

/// Nesting deeper than this is left to pydantic.
const MAX_DEPTH: usize = 64;

/// A registered class's fields, in pydantic's order.
#[pyclass(frozen)]
struct WirePlan {
    fields: Vec<WireField>,
}

struct WireField {
    /// The attribute's name (a key of the model's `__dict__`).
    attr: Py<PyString>,
    /// `"wire name":`, ready to write.
    prefix: Vec<u8>,
    /// Left out when equal to this (`exclude_defaults`); None: never.
    default: Option<Py<PyAny>>,
}

/// Registered classes, by class.
fn plans(py: Python<'_>) -> &Bound<'_, PyDict> {
    static PLANS: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
    PLANS.get_or_init(py, || PyDict::new(py).unbind()).bind(py)
}

/// Register `cls`: `fields` is a sequence of `(attribute, wire name,
/// leave_out_default, default)`, in the order pydantic writes them.
#[pyfunction]
pub(crate) fn register_wire_model(cls: &Bound<'_, PyType>, fields: &Bound<'_, PyTuple>) -> PyResult<()> {
    let py = cls.py();
    let mut plan = Vec::with_capacity(fields.len());
    for field in fields.iter() {
        let (attr, key, leave_out_default, default): (Bound<'_, PyString>, String, bool, Bound<'_, PyAny>) =
            field.extract()?;
        let mut prefix = Vec::with_capacity(key.len() + 3);
        acp_engine::host::write_json_string(&mut prefix, &key);
        prefix.push(b':');
        plan.push(WireField {
            attr: attr.unbind(),
            prefix,
            default: leave_out_default.then(|| default.unbind()),
        });
    }
    plans(py).set_item(cls, Bound::new(py, WirePlan { fields: plan })?)
}

/// `model` as wire JSON, or None when its class is not registered or a
/// value in it is not plain (then pydantic writes it).
#[pyfunction]
pub(crate) fn wire_json<'py>(model: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let mut out = Vec::with_capacity(256);
    if !write_plain(&mut out, model, 0)? {
        return Ok(None);
    }
    Ok(Some(PyBytes::new(model.py(), &out)))
}

/// Write `value`; false when it is not plain.
fn write_plain(out: &mut Vec<u8>, value: &Bound<'_, PyAny>, depth: usize) -> PyResult<bool> {
    if depth > MAX_DEPTH {
        return Ok(false);
    }
    if let Ok(text) = value.cast_exact::<PyString>() {
        let Ok(text) = text.to_str() else {
            return Ok(false); // lone surrogates: pydantic says what it does with them
        };
        acp_engine::host::write_json_string(out, text);
    } else if value.is_none() {
        out.extend_from_slice(b"null");
    } else if let Ok(flag) = value.cast_exact::<PyBool>() {
        out.extend_from_slice(if flag.is_true() { b"true" } else { b"false" });
    } else if let Ok(int) = value.cast_exact::<PyInt>() {
        match int.extract::<i64>() {
            Ok(number) => out.extend_from_slice(itoa::Buffer::new().format(number).as_bytes()),
            Err(_) => out.extend_from_slice(int.str()?.to_cow()?.as_bytes()),
        }
    } else if let Ok(list) = value.cast_exact::<PyList>() {
        out.push(b'[');
        for (index, item) in list.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            if !write_plain(out, &item, depth + 1)? {
                return Ok(false);
            }
        }
        out.push(b']');
    } else if let Ok(dict) = value.cast_exact::<PyDict>() {
        out.push(b'{');
        for (index, (key, item)) in dict.iter().enumerate() {
            let Ok(key) = key.cast_exact::<PyString>() else {
                return Ok(false);
            };
            let Ok(key) = key.to_str() else {
                return Ok(false);
            };
            if index > 0 {
                out.push(b',');
            }
            acp_engine::host::write_json_string(out, key);
            out.push(b':');
            if !write_plain(out, &item, depth + 1)? {
                return Ok(false);
            }
        }
        out.push(b'}');
    } else {
        return write_model(out, value, depth);
    }
    Ok(true)
}

/// Write a model of a registered class; false for anything else.
fn write_model(out: &mut Vec<u8>, model: &Bound<'_, PyAny>, depth: usize) -> PyResult<bool> {
    let py = model.py();
    let Some(plan) = plans(py).get_item(model.get_type())? else {
        return Ok(false);
    };
    let plan = plan.cast::<WirePlan>()?.get();
    let Ok(values) = model
        .getattr(pyo3::intern!(py, "__dict__"))?
        .cast_into_exact::<PyDict>()
    else {
        return Ok(false);
    };
    out.push(b'{');
    let mut first = true;
    for field in &plan.fields {
        let Some(value) = values.get_item(field.attr.bind(py))? else {
            return Ok(false);
        };
        if value.is_none() {
            continue; // exclude_none
        }
        if let Some(default) = &field.default {
            if value.eq(default.bind(py))? {
                continue; // exclude_defaults
            }
        }
        if !first {
            out.push(b',');
        }
        first = false;
        out.extend_from_slice(&field.prefix);
        if !write_plain(out, &value, depth + 1)? {
            return Ok(false);
        }
    }
    out.push(b'}');
    Ok(true)
}

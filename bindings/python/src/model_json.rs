//! pydantic models straight to wire JSON, for the official API
//! (`acp_engine.compat`): a model of a registered class is written from its
//! `__dict__` by the field list Python registered for the class (wire name,
//! whether a value equal to the default is left out, whether it is a
//! variant's tag), as pydantic-core writes it with `by_alias` and
//! `exclude_none`, and either `exclude_defaults` (params, by the wire
//! serializer) or `exclude_unset` (a handler's result, by the model's own
//! serializer, whose `TaggedModel._write_tags` adds a tag left unset at
//! the end). That serializer call costs more than the rest of a message's
//! trip to the engine; this walk costs a fraction of it.
//!
//! Only plain values are written here: exact `str`, `int`, `bool`, `None`,
//! `list`, `dict` with `str` keys, and models of registered classes.
//! Anything else (a float, whose text pydantic spells its own way, as
//! `1e+16`; an enum, a URL, a model of a class its field does not name,
//! such as a subclass) makes `wire_json` return None, and Python asks
//! pydantic instead, so the text is always pydantic's.

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
    /// A variant's tag: written even when unset (`TaggedModel`).
    tag: bool,
    /// The model classes its type names: a model of another class in it
    /// (a subclass, say) is written by pydantic from the field's schema.
    models: Vec<Py<PyType>>,
}

/// Which models a value may be to be written here.
#[derive(Clone, Copy)]
enum Admits<'a> {
    /// Any registered class (the model asked for).
    Any,
    /// These classes (a field's).
    Only(&'a [Py<PyType>]),
}

/// Which fields a model's JSON leaves out, besides those holding None.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Leave {
    /// Those equal to their default (params: `exclude_defaults`).
    Defaults,
    /// Those never set (a handler's result: `exclude_unset`).
    Unset,
}

/// Registered classes, by class.
fn plans(py: Python<'_>) -> &Bound<'_, PyDict> {
    static PLANS: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
    PLANS.get_or_init(py, || PyDict::new(py).unbind()).bind(py)
}

/// A field as Python registers it (see `register_wire_model`).
type RegisteredField<'py> = (
    Bound<'py, PyString>,
    String,
    bool,
    Bound<'py, PyAny>,
    bool,
    Vec<Bound<'py, PyType>>,
);

/// Register `cls`: `fields` is a sequence of `(attribute, wire name,
/// leave_out_default, default, tag, model classes)`, in the order pydantic
/// writes them.
#[pyfunction]
pub(crate) fn register_wire_model(cls: &Bound<'_, PyType>, fields: &Bound<'_, PyTuple>) -> PyResult<()> {
    let py = cls.py();
    let mut plan = Vec::with_capacity(fields.len());
    for field in fields.iter() {
        let (attr, key, leave_out_default, default, tag, models): RegisteredField<'_> = field.extract()?;
        let mut prefix = Vec::with_capacity(key.len() + 3);
        acp_engine::host::write_json_string(&mut prefix, &key);
        prefix.push(b':');
        plan.push(WireField {
            attr: attr.unbind(),
            prefix,
            default: leave_out_default.then(|| default.unbind()),
            tag,
            models: models.into_iter().map(Bound::unbind).collect(),
        });
    }
    plans(py).set_item(cls, Bound::new(py, WirePlan { fields: plan })?)
}

/// `model` as wire JSON, or None when its class is not registered or a
/// value in it is not plain (then pydantic writes it). With `unset`, as a
/// handler's result (`exclude_unset`), else as params (`exclude_defaults`).
#[pyfunction]
#[pyo3(signature = (model, unset=false))]
pub(crate) fn wire_json<'py>(
    model: &Bound<'py, PyAny>,
    unset: bool,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let leave = if unset { Leave::Unset } else { Leave::Defaults };
    let mut out = Vec::with_capacity(256);
    if !write_plain(&mut out, model, leave, Admits::Any, 0)? {
        return Ok(None);
    }
    Ok(Some(PyBytes::new(model.py(), &out)))
}

/// Write `value`; false when it is not plain.
fn write_plain(
    out: &mut Vec<u8>,
    value: &Bound<'_, PyAny>,
    leave: Leave,
    admits: Admits<'_>,
    depth: usize,
) -> PyResult<bool> {
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
            if !write_plain(out, &item, leave, admits, depth + 1)? {
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
            if !write_plain(out, &item, leave, admits, depth + 1)? {
                return Ok(false);
            }
        }
        out.push(b'}');
    } else {
        return write_model(out, value, leave, admits, depth);
    }
    Ok(true)
}

/// Write a model of a registered class that `admits` takes; false for
/// anything else.
fn write_model(
    out: &mut Vec<u8>,
    model: &Bound<'_, PyAny>,
    leave: Leave,
    admits: Admits<'_>,
    depth: usize,
) -> PyResult<bool> {
    let py = model.py();
    let class = model.get_type();
    if let Admits::Only(classes) = admits {
        if !classes.iter().any(|admitted| admitted.bind(py).is(&class)) {
            return Ok(false);
        }
    }
    let Some(plan) = plans(py).get_item(class)? else {
        return Ok(false);
    };
    let plan = plan.cast::<WirePlan>()?.get();
    let Ok(values) = model
        .getattr(pyo3::intern!(py, "__dict__"))?
        .cast_into_exact::<PyDict>()
    else {
        return Ok(false);
    };
    let set = match leave {
        Leave::Unset => Some(model.getattr(pyo3::intern!(py, "__pydantic_fields_set__"))?),
        Leave::Defaults => None,
    };
    // Tags left unset, which `_write_tags` adds after the rest.
    let mut unset_tags = Vec::new();
    out.push(b'{');
    let mut first = true;
    for field in &plan.fields {
        let attr = field.attr.bind(py);
        let Some(value) = values.get_item(attr)? else {
            return Ok(false);
        };
        if let Some(set) = &set {
            if !set.contains(attr)? {
                if field.tag {
                    unset_tags.push((field, value));
                }
                continue;
            }
        }
        if value.is_none() {
            continue; // exclude_none
        }
        if let (Leave::Defaults, Some(default)) = (leave, &field.default) {
            if value.eq(default.bind(py))? {
                continue; // exclude_defaults
            }
        }
        if !write_field(out, &mut first, field, &value, leave, depth)? {
            return Ok(false);
        }
    }
    for (field, value) in unset_tags {
        if !write_field(out, &mut first, field, &value, leave, depth)? {
            return Ok(false);
        }
    }
    out.push(b'}');
    Ok(true)
}

fn write_field(
    out: &mut Vec<u8>,
    first: &mut bool,
    field: &WireField,
    value: &Bound<'_, PyAny>,
    leave: Leave,
    depth: usize,
) -> PyResult<bool> {
    if !*first {
        out.push(b',');
    }
    *first = false;
    out.extend_from_slice(&field.prefix);
    write_plain(out, value, leave, Admits::Only(&field.models), depth + 1)
}

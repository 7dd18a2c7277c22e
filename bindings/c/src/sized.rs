//! Structs C passes with their own size first (`acp_options`,
//! `acp_handlers`), so that fields can be appended without breaking
//! programs built against an older header.
//!
//! The rules (the header says them too):
//! - `struct_size` is the caller's `sizeof` of the struct: the library reads
//!   the fields that lie within it, and the fields beyond it take their
//!   defaults (zero), as a program built before they existed expects.
//! - Smaller than the struct's first version (0 included) is refused with
//!   `ACP_ERR_INVALID_ARGUMENT`: the caller did not set it (a program built
//!   against a header from before `struct_size` reads as such).
//! - Larger than the library's struct (a program built against a newer
//!   header): accepted if every byte the library does not know is zero (the
//!   newer fields' defaults), refused otherwise: the program asks for
//!   something this library cannot do. Above `MAX_STRUCT_SIZE`, refused.
//! - A field is only ever appended at or after the previous version's
//!   `sizeof` (never into its tail padding), and its zero is its default.
//!   Appended fields leave no padding between or after them (add explicit
//!   `_reserved` fields where alignment would): the zero check above must
//!   never meet a padding byte a C compiler left unset.

use std::mem::{size_of, MaybeUninit};
use std::ptr;

use crate::ffi::acp_result::*;
use crate::ffi::Failure;

/// No version of these structs will be this large: a larger `struct_size`
/// is not a size (garbage, or a pointer where the size should be).
pub(crate) const MAX_STRUCT_SIZE: usize = 4096;

/// A struct whose first field is `size_t struct_size`.
pub(crate) trait SizedStruct: Copy {
    /// The struct's name in C, for messages.
    const NAME: &'static str;
    /// The size of the struct's first version: the end of its last field.
    const FIRST_SIZE: usize;
    /// The value of the fields a caller's struct does not reach.
    fn defaults() -> Self;
    /// Refuse what may not be copied into a Rust value (an enum's unknown
    /// number), reading the caller's struct of `size` bytes in place.
    unsafe fn check_in_place(_pointer: *const Self, _size: usize, _name: &str) -> Result<(), Failure> {
        Ok(())
    }
}

/// Read the struct at `pointer` (NULL: `None`), `name` the argument's
/// name: the fields within the caller's `struct_size`, the others default.
pub(crate) unsafe fn read<T: SizedStruct>(pointer: *const T, name: &str) -> Result<Option<T>, Failure> {
    if pointer.is_null() {
        return Ok(None);
    }
    let size = pointer.cast::<usize>().read();
    let known = size_of::<T>();
    let refuse = |why: String| {
        Err(Failure::new(
            ACP_ERR_INVALID_ARGUMENT,
            format!("{name}->struct_size is {size}: {why}"),
        ))
    };
    let set_it = format!(
        "set it to sizeof({0}) ({1}_INIT)",
        T::NAME,
        T::NAME.to_uppercase()
    );
    if size < T::FIRST_SIZE {
        return refuse(format!(
            "{set_it}; no {} is smaller than {} bytes (a program built against an acp_engine.h \
             without struct_size must be rebuilt)",
            T::NAME,
            T::FIRST_SIZE
        ));
    }
    if size > MAX_STRUCT_SIZE {
        return refuse(format!("not the size of an {}: {set_it}", T::NAME));
    }
    if size > known {
        let unknown = std::slice::from_raw_parts(pointer.cast::<u8>().add(known), size - known);
        if unknown.iter().any(|byte| *byte != 0) {
            return refuse(format!(
                "the program was built against a newer acp_engine.h and sets fields of {} \
                 this library (acp-engine {}, {known} bytes) does not have; run it with a \
                 newer libacp_engine",
                T::NAME,
                env!("CARGO_PKG_VERSION"),
            ));
        }
    }
    T::check_in_place(pointer, size.min(known), name)?;
    let mut value = MaybeUninit::new(T::defaults());
    // SAFETY: the caller's struct has `size` bytes; a struct ends at a
    // field boundary of every later version, so whole fields are copied
    // over a valid value.
    ptr::copy_nonoverlapping(
        pointer.cast::<u8>(),
        value.as_mut_ptr().cast::<u8>(),
        size.min(known),
    );
    Ok(Some(value.assume_init()))
}

#[cfg(test)]
#[path = "../tests/unit/sized.rs"]
mod tests;

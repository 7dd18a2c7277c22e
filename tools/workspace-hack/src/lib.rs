//! Empty: this crate only asks for features (see its Cargo.toml).

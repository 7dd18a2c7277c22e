// Unit tests of src/ffi.rs (C conversions), kept beside the C tests.
use acp_engine::error::codes;

#[test]
fn the_c_error_codes_are_the_engines() {
    assert_eq!(crate::ACP_ERROR_CONNECTION_CLOSED, codes::CONNECTION_CLOSED);
    assert_eq!(crate::ACP_ERROR_METHOD_NOT_FOUND, codes::METHOD_NOT_FOUND);
    assert_eq!(crate::ACP_ERROR_REQUEST_CANCELLED, codes::REQUEST_CANCELLED);
}

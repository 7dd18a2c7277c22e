//! The driver's handler for C: each event as a call of C's function
//! pointers, with the driver's NUL-terminated strings passed as they lie.

use std::ptr;
use std::sync::Arc;

use acp_engine::host::threaded::{Handler, Text};
use acp_engine::RequestError;

use crate::conn::{c_pointer, CHost, Conn, Reply};
use crate::ffi::c_string;
use crate::handlers::{acp_handlers, with_c_error};
use crate::respond;

/// A text C borrows during a call (NULL: absent).
fn c_text(text: Option<&Text>) -> *const std::ffi::c_char {
    text.map_or(ptr::null(), |text| text.as_c_str().as_ptr())
}

impl CHost {
    fn handlers(&self) -> &acp_handlers {
        self.handlers
            .as_ref()
            .expect("callbacks run on a connection with handlers")
    }
}

impl Handler for CHost {
    type Reply = Reply;

    fn request(
        &self,
        conn: &Arc<Conn>,
        token: u64,
        method: &Text,
        params: Option<&Text>,
    ) -> Result<(), RequestError> {
        let handlers = self.handlers();
        let Some(on_request) = handlers.on_request else {
            return Err(RequestError::method_not_found(method.as_str()));
        };
        respond::register(token, conn);
        let (method, params) = (c_text(Some(method)), c_text(params));
        unsafe {
            on_request(
                handlers.user_data,
                c_pointer(conn),
                method,
                params,
                token as *mut _,
            )
        };
        Ok(())
    }

    fn notification(&self, conn: &Arc<Conn>, method: &Text, params: Option<&Text>) {
        let handlers = self.handlers();
        if let Some(on_notification) = handlers.on_notification {
            let (method, params) = (c_text(Some(method)), c_text(params));
            unsafe { on_notification(handlers.user_data, c_pointer(conn), method, params) };
        }
    }

    fn invalid_notification(&self, conn: &Arc<Conn>, method: &str, error: &RequestError) {
        let handlers = self.handlers();
        if let Some(on_invalid_notification) = handlers.on_invalid_notification {
            let method = c_string(method);
            with_c_error(error, |error| unsafe {
                on_invalid_notification(handlers.user_data, c_pointer(conn), method.as_ptr(), error)
            });
        }
    }

    fn cancelled(&self, conn: &Arc<Conn>, token: u64) {
        let handlers = self.handlers();
        if let Some(on_cancel) = handlers.on_cancel {
            unsafe { on_cancel(handlers.user_data, c_pointer(conn), token as *mut _) };
        }
    }

    fn closed(&self, conn: &Arc<Conn>, reason: &str) {
        let handlers = self.handlers();
        if let Some(on_close) = handlers.on_close {
            let reason = c_string(reason);
            unsafe { on_close(handlers.user_data, c_pointer(conn), reason.as_ptr()) };
        }
    }

    fn reply(
        &self,
        conn: &Arc<Conn>,
        Reply(callback, user_data): Reply,
        id: i64,
        outcome: Result<&Text, &RequestError>,
    ) {
        let Some(callback) = callback else { return };
        match outcome {
            Ok(result) => unsafe {
                callback(
                    user_data.0,
                    c_pointer(conn),
                    id,
                    c_text(Some(result)),
                    ptr::null(),
                )
            },
            Err(error) => with_c_error(error, |error| unsafe {
                callback(user_data.0, c_pointer(conn), id, ptr::null(), error)
            }),
        }
    }
}

//! `acp_connection_proxy_stdio`: a proxy of a proxy chain on this process's
//! stdio, as two connections (`acp_engine::conductor::split`: the envelope,
//! id and cancellation rules are the engine's).

use std::ptr;

use acp_engine::conductor::split::split;
use acp_engine::host;
use acp_engine::Transport;

use crate::calls::open_with;
use crate::connection::acp_connection;
use crate::ffi::{acp_result, guard, Failure};
use crate::handlers::acp_handlers;
use crate::options::{acp_options, Settings};

/// Serve as a proxy of a proxy chain on this process's stdin/stdout (a
/// conductor launched it): two connections, `*out_predecessor` toward the
/// client (serve it as an agent: `initialize` arrives as itself) and
/// `*out_successor` toward the agent (talk to it as a client), each with
/// its own options and handlers (NULL: an event connection). Both are
/// written before any callback runs, so a handler of either can reach the
/// other through its `user_data`. Free both with `acp_connection_free`.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_proxy_stdio(
    predecessor_options: *const acp_options,
    predecessor_handlers: *const acp_handlers,
    successor_options: *const acp_options,
    successor_handlers: *const acp_handlers,
    out_predecessor: *mut *mut acp_connection,
    out_successor: *mut *mut acp_connection,
) -> acp_result {
    guard(|| {
        if out_predecessor.is_null() {
            return Err(Failure::null("out_predecessor"));
        }
        if out_successor.is_null() {
            return Err(Failure::null("out_successor"));
        }
        *out_predecessor = ptr::null_mut();
        *out_successor = ptr::null_mut();
        // Everything C passed is read before the stdio is touched.
        let settings = (
            Settings::read(predecessor_options)?,
            Settings::read(successor_options)?,
        );
        let handlers = (
            acp_handlers::read(predecessor_handlers)?,
            acp_handlers::read(successor_handlers)?,
        );
        let runtime = host::runtime();
        let halves = {
            let _entered = runtime.enter();
            split(Transport::stdio(), &runtime)
        };
        let predecessor = open_with(
            |_| Ok(halves.predecessor),
            settings.0,
            handlers.0,
            out_predecessor,
        )?;
        let successor = match open_with(|_| Ok(halves.successor), settings.1, handlers.1, out_successor) {
            Ok(successor) => successor,
            Err(failure) => {
                crate::calls::acp_connection_free(*out_predecessor);
                *out_predecessor = ptr::null_mut();
                return Err(failure);
            }
        };
        predecessor.start();
        successor.start();
        halves.reading.start();
        Ok(())
    })
}

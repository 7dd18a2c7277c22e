//! Which side of ACP a host connection plays, and what that side accepts:
//! the checks every inbound message gets before the host sees it, and every
//! outbound one before it is sent (the peer's side checks what we send).

use serde_json::value::RawValue;

use crate::error::RequestError;
use crate::method_check::{self, Receiver};
use crate::{Protocol, UncheckedMethods};

/// Which side of ACP a host connection plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Plain JSON-RPC: any method, no schema checks.
    Raw,
    /// Receives agent methods, sends client methods.
    Agent,
    /// Receives client methods, sends agent methods.
    Client,
}

impl Side {
    /// The other end: what an agent sends, a client receives.
    pub fn peer(self) -> Side {
        match self {
            Side::Raw => Side::Raw,
            Side::Agent => Side::Client,
            Side::Client => Side::Agent,
        }
    }

    /// The side that receives what this side is sent (None: `Raw`).
    fn receiver(self) -> Option<Receiver> {
        match self {
            Side::Raw => None,
            Side::Agent => Some(Receiver::Agent),
            Side::Client => Some(Receiver::Client),
        }
    }

    /// Check an inbound request for this side in ACP `version`: an unknown method is -32601,
    /// params that do not fit the schema -32602 (`Raw` accepts anything).
    pub fn check_request(
        self,
        version: u16,
        protocol: Protocol,
        unchecked: &UncheckedMethods,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), RequestError> {
        self.check_text(
            version,
            protocol,
            unchecked,
            method,
            params.map(RawValue::get),
            true,
        )
        .map(drop)
    }

    /// Check an inbound notification for this side (an `Err`: drop it).
    pub fn check_notification(
        self,
        version: u16,
        protocol: Protocol,
        unchecked: &UncheckedMethods,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), RequestError> {
        self.check_text(
            version,
            protocol,
            unchecked,
            method,
            params.map(RawValue::get),
            false,
        )
        .map(drop)
    }

    /// Check params text for this side: `Ok(true)` when the check read all of it (so
    /// it is valid JSON), `Ok(false)` when nothing did (`Raw`, extension methods).
    pub(super) fn check_text(
        self,
        version: u16,
        protocol: Protocol,
        unchecked: &UncheckedMethods,
        method: &str,
        params: Option<&str>,
        request: bool,
    ) -> Result<bool, RequestError> {
        match self.receiver() {
            None => Ok(false),
            Some(receiver) => {
                method_check::check(version, protocol, unchecked, receiver, !request, method, params)
            }
        }
    }
}

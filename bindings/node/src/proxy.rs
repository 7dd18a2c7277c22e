//! A proxy's connection to its conductor as two connections, each opened
//! as an ordinary `NativeConnection` (`acp_engine::conductor::split`: the
//! envelope and id rules are the engine's).

use std::sync::Mutex;

use acp_engine::conductor::split::split;
use acp_engine::Transport;
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::{engine_runtime, enter, options, NativeConnection, NativeSettings, Waker};

/// The two halves of this process's stdio as a proxy, each opened once.
#[napi]
pub struct NativeProxyStreams {
    predecessor: Mutex<Option<Transport>>,
    successor: Mutex<Option<Transport>>,
}

#[napi]
impl NativeProxyStreams {
    /// This process's stdin/stdout, the conductor's connection to it.
    #[napi(factory)]
    pub fn stdio() -> Self {
        let _guard = enter();
        let halves = split(Transport::stdio(), engine_runtime());
        Self {
            predecessor: Mutex::new(Some(halves.predecessor)),
            successor: Mutex::new(Some(halves.successor)),
        }
    }

    /// Open the connection toward the client (`successor` false) or toward
    /// the agent (`successor` true).
    #[napi]
    pub fn open(
        &self,
        successor: bool,
        settings: NativeSettings,
        wake: Function<(), ()>,
    ) -> Result<NativeConnection> {
        let half = if successor {
            &self.successor
        } else {
            &self.predecessor
        };
        let transport = half.lock().unwrap_or_else(|p| p.into_inner()).take();
        let transport = transport
            .ok_or_else(|| Error::from_reason("acp-engine: this proxy stream was opened already"))?;
        let options = options(&settings)?;
        let waker = Waker::new(wake)?;
        let _guard = enter();
        Ok(NativeConnection::start(transport, options, waker))
    }
}

//! A proxy's connection to its conductor as two connections, each opened
//! as an ordinary `NativeConnection` (`acp_engine::conductor::split`: the
//! envelope and id rules are the engine's).

use acp_engine::conductor::split::ProxyHalves;
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::{engine_runtime, enter, options, NativeConnection, NativeSettings, Waker};

/// The two halves of this process's stdio as a proxy, each opened once.
#[napi]
pub struct NativeProxyStreams {
    halves: ProxyHalves,
}

#[napi]
impl NativeProxyStreams {
    /// This process's stdin/stdout, the conductor's connection to it.
    #[napi(factory)]
    pub fn stdio() -> Self {
        Self {
            halves: ProxyHalves::stdio(engine_runtime()),
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
        let transport = self
            .halves
            .take(successor)
            .map_err(|opened| Error::from_reason(format!("acp-engine: {opened}")))?;
        let options = options(&settings)?;
        let waker = Waker::new(wake)?;
        let _guard = enter();
        Ok(NativeConnection::start(transport, options, waker))
    }
}

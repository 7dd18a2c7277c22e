//! A proxy's connection to its conductor as two connections, each opened
//! as an ordinary `NativeConnection` (`acp_engine::conductor::split`: the
//! envelope and id rules are the engine's).

use std::sync::Arc;

use acp_engine::conductor::split::ProxyHalves;
use acp_engine::RequestError as CoreError;

use crate::{engine, AcpError, NativeConnection, Settings};

/// The two halves of this process's stdio as a proxy, each opened once.
#[derive(uniffi::Object)]
pub struct NativeProxyStreams {
    halves: ProxyHalves,
}

#[uniffi::export]
impl NativeProxyStreams {
    /// This process's stdin/stdout, the conductor's connection to it.
    #[uniffi::constructor]
    pub fn stdio() -> Arc<Self> {
        Arc::new(Self {
            halves: ProxyHalves::stdio(engine()),
        })
    }

    /// Open the connection toward the client (`successor` false) or toward
    /// the agent (`successor` true); its events wait until its event thread
    /// starts.
    pub fn open(&self, successor: bool, settings: Settings) -> Result<Arc<NativeConnection>, AcpError> {
        let transport = self
            .halves
            .take(successor)
            .map_err(|opened| CoreError::invalid_request().with_message_detail(opened))?;
        Ok(NativeConnection::start(transport, &settings))
    }
}
